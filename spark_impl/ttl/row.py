"""Rows of the Spark TTL store: their schema, the write-side rules, and the expiry rules as Columns.

A row is `(key, value, seq, flags, create_ts, expire_ts)`: `value` is None and
flag bit 0 set for a tombstone; `expire_ts` is 2^63-1 for "never". The expiry
predicate is `expire_ts <= now` for reads and the compaction filter alike
(`frontier_harness.model.ttl.row.is_expired` says why the boundary is not strict).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from frontier_harness.model.errors import InvalidRow, InvalidTime, InvalidTtl

NEVER = 2**63 - 1
TOMBSTONE = 1
ROW_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("seq", pa.int64()),
        ("flags", pa.int32()),
        ("create_ts", pa.int64()),
        ("expire_ts", pa.int64()),
    ]
)
ROW_COLUMNS = tuple(ROW_SCHEMA.names)
RowTuple = tuple[bytes, bytes | None, int, int, int, int]


def is_expired(expire_ts: Column, now: Column) -> Column:
    """THE expiry predicate: expired at `now` iff `expire_ts <= now` (reads and compaction alike)."""
    return expire_ts <= now


def is_tombstone(flags: Column) -> Column:
    """Flag bit 0."""
    return flags.bitwiseAND(F.lit(TOMBSTONE)) != 0


def visible(flags: Column, expire_ts: Column, now: Column) -> Column:
    """A read shows a key's newest version iff it is a value not expired at `now`."""
    return ~is_tombstone(flags) & ~is_expired(expire_ts, now)


def _is_i64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value <= NEVER


def check_reading(reading: Any) -> int:
    """A user clock reading: an i64 below never, else `InvalidTime`."""
    if not _is_i64(reading) or reading == NEVER:
        raise InvalidTime("clock ms", reading, "expected a signed 64-bit integer below 2^63-1")
    return reading


def expire_ts_for(now: int, ttl: int | None, expire_at: int | None) -> int:
    """`now + ttl` (saturating at never), or `expire_at` (in the past: expired at once), or never."""
    if ttl is not None and expire_at is not None:
        raise InvalidTtl((ttl, expire_at), "give either a ttl or an absolute expire_at, not both")
    if expire_at is not None:
        if not _is_i64(expire_at):
            raise InvalidTtl(expire_at, "expire_at must be a signed 64-bit number of milliseconds")
        return expire_at
    if ttl is None:
        return NEVER
    if not _is_i64(ttl) or ttl <= 0:
        raise InvalidTtl(ttl, "a ttl must be a positive signed 64-bit number of milliseconds")
    return min(now + ttl, NEVER)


def check_sizes(key: Any, value: Any) -> None:
    """Keys and values are bytes; a key fits a u16 length and a value a u32 length."""
    for field, v in (("key", key), ("value", value)):
        if not isinstance(v, bytes):
            raise InvalidRow(field, v, "expected bytes")
    if len(key) > 0xFFFF:
        raise InvalidRow("key length", len(key), "longer than 65535 bytes")
    if len(value) > 0xFFFFFFFF:
        raise InvalidRow("value length", len(value), "longer than 4294967295 bytes")
