"""Rows of the TTL store and THE expiry predicate.

A row is one version of a key: a value or a tombstone, its sequence number, the
clock reading that wrote it (`create_ts`) and when it expires (`expire_ts`).
"Never expires" is `expire_ts == NEVER` (2^63-1); clock readings stay below it,
so `is_expired(NEVER, now)` is always false.

>>> r = Row.value_row(b"k", b"v", seq=1, create_ts=100, expire_ts=expire_ts_for(100, 10, None))
>>> is_expired(r.expire_ts, 109), is_expired(r.expire_ts, 110)
(False, True)
"""

from __future__ import annotations

from typing import TypeGuard

import attrs

from frontier_harness.model.errors import InvalidTime, InvalidTtl

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
NEVER = I64_MAX


def is_i64(value: object) -> TypeGuard[int]:
    """Whether `value` is a Python int (not a bool) in the signed 64-bit range.

    >>> is_i64(2**63 - 1), is_i64(2**63), is_i64(True)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and I64_MIN <= value <= I64_MAX


def check_reading(reading: object) -> int:
    """A clock reading: a signed 64-bit int below NEVER, else a typed error.

    Choice: a reading of exactly 2^63-1 is rejected so that NEVER is never due.

    >>> check_reading(2**63 - 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidTime: invalid clock ms time 9223372036854775807: expected a signed 64-bit ...
    """
    if not is_i64(reading) or reading == NEVER:
        raise InvalidTime("clock ms", reading, "expected a signed 64-bit integer below 2^63-1")
    return reading


def is_expired(expire_ts: int, now: int) -> bool:
    """THE expiry predicate: a row is expired at `now` iff `expire_ts <= now`.

    Reads, the compaction filter and every model use this one function. This is
    the one place that says why the boundary is `<=`: the RFC's prose writes it
    strictly (reads drop rows "where `ts + ttl < now`", the filter tombstones a
    row "where `now > expire_ts`"), but SlateDB's code and tests ship
    `expire_ts <= now` (`retention_iterator.rs`: `*expire_ts <= compaction_start_ts`),
    and that is what its users observe. It also makes a TTL of `t` ms mean exactly
    `t` ms of readings, `[create_ts, create_ts + t)`, and an `expire_at` that is
    not after the write expire the row at once.

    >>> is_expired(110, 110), is_expired(NEVER, 2**63 - 2)
    (True, False)
    """
    return expire_ts <= now


def expire_ts_for(create_ts: int, ttl: int | None, expire_at: int | None) -> int:
    """`expire_ts` of a write at `create_ts`: `create_ts + ttl`, or `expire_at`, or NEVER.

    A sum beyond 2^63-1 (signed 64-bit overflow) saturates to NEVER. `ttl` must
    be a positive i64; `expire_at` any i64; both at once is an error. An
    `expire_at` at or before `create_ts` is accepted, as SlateDB accepts it
    (`Ttl::ExpireAtMillis` is taken as given): the row is expired at once.

    >>> expire_ts_for(2**62, 2**62, None) == NEVER, expire_ts_for(5, None, 8), expire_ts_for(5, None, 2)
    (True, 8, 2)
    """
    if ttl is not None and expire_at is not None:
        raise InvalidTtl((ttl, expire_at), "give either a ttl or an absolute expire_at, not both")
    if expire_at is not None:
        if not is_i64(expire_at):
            raise InvalidTtl(expire_at, "expire_at must be a signed 64-bit number of milliseconds")
        return expire_at
    if ttl is None:
        return NEVER
    check_ttl(ttl)
    return min(create_ts + ttl, NEVER)


def check_ttl(ttl: object) -> int:
    """A TTL in milliseconds: a positive signed 64-bit int, else `InvalidTtl`.

    >>> check_ttl(0)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidTtl: invalid ttl 0: a ttl must be a positive signed 64-bit number of milliseconds
    """
    if not is_i64(ttl) or ttl <= 0:
        raise InvalidTtl(ttl, "a ttl must be a positive signed 64-bit number of milliseconds")
    return ttl


@attrs.frozen
class Row:
    """One version of `key`: `value` bytes, or a tombstone when `value is None`.

    `create_ts` is None only for rows read from a format-v0 SST (no timestamps);
    tombstones never expire (`expire_ts == NEVER`).

    >>> Row.tombstone_row(b"k", seq=2, create_ts=7).is_tombstone
    True
    """

    key: bytes
    value: bytes | None
    seq: int
    create_ts: int | None
    expire_ts: int = NEVER

    @classmethod
    def value_row(cls, key: bytes, value: bytes, seq: int, create_ts: int, expire_ts: int = NEVER) -> Row:
        """A put of `value`.

        >>> Row.value_row(b"k", b"v", 1, 5).expire_ts == NEVER
        True
        """
        return cls(key, value, seq, create_ts, expire_ts)

    @classmethod
    def tombstone_row(cls, key: bytes, seq: int, create_ts: int | None) -> Row:
        """A delete: a tombstone with no expiry.

        >>> Row.tombstone_row(b"k", 1, 5).value is None
        True
        """
        return cls(key, None, seq, create_ts, NEVER)

    @property
    def is_tombstone(self) -> bool:
        """Whether this version deletes the key.

        >>> Row.value_row(b"k", b"", 1, 5).is_tombstone
        False
        """
        return self.value is None

    def as_tombstone(self) -> Row:
        """The TTL filter's rewrite: a tombstone that keeps `seq` and `create_ts`, expiry cleared.

        >>> Row.value_row(b"k", b"v", 3, 5, 9).as_tombstone()
        Row(key=b'k', value=None, seq=3, create_ts=5, expire_ts=9223372036854775807)
        """
        return Row.tombstone_row(self.key, self.seq, self.create_ts)
