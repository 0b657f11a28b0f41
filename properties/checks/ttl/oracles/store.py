"""The TTL store's rules restated from the seed, small and obvious: what the ttl suite compares with.

Written apart from `frontier_harness.model.ttl` on purpose, since it judges it (DESIGN.md, "Oracles"):

- a put at clock reading `create` expires at `create + ttl` (saturating at 2^63-1,
  "never"), at `expire_at` if one is given (any i64, even one already past), or never;
  the store's default TTL stands in for a missing `ttl` but never for an `expire_at`;
- a value is readable at `now` iff `now < expire_ts` (so it is gone at `expire_ts`
  itself; `frontier_harness.model.ttl.row.is_expired` says why the boundary is not strict);
- the clock: every operation takes one reading; a reading below the largest one
  handed out so far is refused (`ClockRegression`), and a crash forgets none of them.

>>> ref = Reference(default_ttl=None)
>>> ref.put(0, b"k", b"v", ttl=5, expire_at=None); ref.visible(4), ref.visible(5)
({b'k': b'v'}, {})
"""

from __future__ import annotations

from frontier_harness.model.errors import ClockRegression, InvalidTtl

NEVER = 2**63 - 1


def _is_i64(value: object) -> bool:
    return type(value) is int and -(2**63) <= value <= NEVER


def expiry(create: int, ttl: int | None, expire_at: int | None, default_ttl: int | None) -> int:
    """When a put at `create` expires; `InvalidTtl` for a TTL that is not a positive i64.

    >>> expiry(10, None, 3, 100), expiry(10, None, None, 100), expiry(2**62, 2**62, None, None) == NEVER
    (3, 110, True)
    """
    if ttl is not None and expire_at is not None:
        raise InvalidTtl((ttl, expire_at), "both a ttl and an expire_at")
    if expire_at is not None:
        if not _is_i64(expire_at):
            raise InvalidTtl(expire_at, "not an i64")
        return expire_at
    ttl = default_ttl if ttl is None else ttl
    if ttl is None:
        return NEVER
    if not _is_i64(ttl) or ttl <= 0:
        raise InvalidTtl(ttl, "not a positive i64")
    return min(create + ttl, NEVER)


def readable(expire_ts: int, now: int) -> bool:
    """A value is readable strictly before its `expire_ts`.

    >>> readable(5, 4), readable(5, 5)
    (True, False)
    """
    return now < expire_ts


class Clock:
    """Readings handed out never go down; a crash does not reset it (the store's mark is durable).

    >>> c = Clock(); c.read(3), c.read(3)
    (3, 3)
    """

    def __init__(self) -> None:
        self.largest: int | None = None

    def read(self, reading: int) -> int:
        """`reading`, or `ClockRegression` if it is below the largest reading handed out."""
        if self.largest is not None and reading < self.largest:
            raise ClockRegression(self.largest, reading)
        self.largest = reading
        return reading


class Reference:
    """The store without flushes, compaction or crashes: the newest write per key, read at now.

    Each method takes the user clock's reading for its one operation.
    """

    def __init__(self, default_ttl: int | None) -> None:
        self.default_ttl, self.clock = default_ttl, Clock()
        self.rows: dict[bytes, tuple[bytes | None, int]] = {}

    def operation(self, reading: int) -> int:
        """An operation that changes nothing a read sees (flush, compaction): it only reads the clock."""
        return self.clock.read(reading)

    def put(self, reading: int, key: bytes, value: bytes, ttl: int | None, expire_at: int | None) -> None:
        now = self.clock.read(reading)
        self.rows[key] = (value, expiry(now, ttl, expire_at, self.default_ttl))

    def delete(self, reading: int, key: bytes) -> None:
        self.clock.read(reading)
        self.rows[key] = (None, NEVER)

    def visible(self, reading: int) -> dict[bytes, bytes]:
        """Every readable key and its value at `reading`."""
        now = self.clock.read(reading)
        return {k: v for k, (v, e) in self.rows.items() if v is not None and readable(e, now)}
