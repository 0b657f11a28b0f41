"""spark_impl's own writer and reader of the TTL store's binary SST form (v0 and v1).

Written independently of `frontier_harness.model.ttl.codec` and tested against it in both
directions (`frontier_harness.properties.checks.ttl.codec`): the same bytes out, the same rows
back, a typed error on every corruption. A row here is the plain tuple the
Parquet SSTs of `frontier_harness.spark_impl.ttl.store` hold, `(key, value, seq, create_ts,
expire_ts)`: `value is None` is a tombstone, `create_ts is None` a v0 row.

Layout (big-endian): header `b"TSST" u32 version u8 n n*u8 feature i64 created
i64 min_ts i64 max_ts u32 rows u32 crc`, then per row `u64 seq ROW u32 crc`
where ROW is `u16 klen key [u8 flags][i64 create][i64 expire] u32 vlen value`
(v0: no attributes, vlen 0xFFFFFFFF marks a tombstone).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from typing import Any

from frontier_harness.model.errors import CorruptSst, InvalidRow
from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.ttl import CodecTag, codec_round_trip

NEVER = 2**63 - 1
FLAGS, TIMESTAMP, TTL = 0, 1, 2
V0_TOMBSTONE = 0xFFFFFFFF
HEADER = struct.Struct(">qqqI")

Row = tuple  # (key: bytes, value: bytes | None, seq: int, create_ts: int | None, expire_ts: int)


def features(rows: Sequence[Row], version: int) -> tuple[int, ...]:
    """Row features a writer lists: none in v0; flags, then timestamps and TTL when rows need them."""
    if version == 0:
        return ()
    out = [FLAGS]
    if any(r[3] is not None for r in rows):
        out.append(TIMESTAMP)
    if any(r[4] != NEVER for r in rows):
        out.append(TTL)
    return tuple(out)


def encode_sst(rows: Sequence[Row], created: int, version: int = 1) -> bytes:
    """The SST bytes of `rows` (strictly increasing keys); `InvalidRow` for what the format cannot hold."""
    feats = features(rows, version)
    stamps = [r[3] for r in rows if r[3] is not None]
    lo, hi = (min(stamps), max(stamps)) if stamps else (created, created)
    head = (
        b"TSST"
        + struct.pack(">IB", version, len(feats))
        + bytes(feats)
        + HEADER.pack(created, lo, hi, len(rows))
    )
    out = [head, struct.pack(">I", zlib.crc32(head))]
    previous: bytes | None = None
    for row in rows:
        if previous is not None and row[0] <= previous:
            raise InvalidRow("key order", row[0], f"not after the previous key {previous!r}")
        previous = row[0]
        body = _seq(row[2]) + _row(row, feats, version)
        out += [body, struct.pack(">I", zlib.crc32(body))]
    return b"".join(out)


def _seq(seq: int) -> bytes:
    if not 0 <= seq <= 2**64 - 1:
        raise InvalidRow("seq", seq, "not an unsigned 64-bit integer")
    return struct.pack(">Q", seq)


def _row(row: Row, feats: tuple[int, ...], version: int) -> bytes:
    key, value, _, create_ts, expire_ts = row
    if len(key) > 0xFFFF:
        raise InvalidRow("key length", len(key), "longer than 65535 bytes")
    if value is not None and len(value) > 0xFFFFFFFF:
        raise InvalidRow("value length", len(value), "longer than 4294967295 bytes")
    out = struct.pack(">H", len(key)) + key
    if version == 0:
        if create_ts is not None or expire_ts != NEVER:
            raise InvalidRow("timestamps", (create_ts, expire_ts), "format v0 carries no timestamps")
        if value is not None and len(value) == V0_TOMBSTONE:
            raise InvalidRow("value length", len(value), "format v0 reserves this length for tombstones")
        return out + (
            struct.pack(">I", V0_TOMBSTONE) if value is None else struct.pack(">I", len(value)) + value
        )
    if (TIMESTAMP in feats) != (create_ts is not None):
        raise InvalidRow("create_ts", create_ts, f"does not match row features {feats}")
    out += bytes([1 if value is None else 0])
    if create_ts is not None:
        out += struct.pack(">q", create_ts)
    if TTL in feats:
        out += struct.pack(">q", expire_ts)
    body = value or b""
    return out + struct.pack(">I", len(body)) + body


class _Cursor:
    """Reads SST bytes; every failure is `CorruptSst(name, offset, reason)`."""

    def __init__(self, name: str, data: bytes):
        self.name, self.data, self.at = name, bytes(data), 0

    def bytes(self, n: int) -> bytes:
        if len(self.data) - self.at < n:
            self.fail(f"truncated: needs {n} bytes, {len(self.data) - self.at} left")
        self.at += n
        return self.data[self.at - n : self.at]

    def fields(self, fmt: str) -> tuple:
        return struct.unpack(fmt, self.bytes(struct.calcsize(fmt)))

    def fail(self, reason: str, offset: int | None = None) -> Any:
        raise CorruptSst(self.name, self.at if offset is None else offset, reason)


def decode_sst(name: str, data: bytes) -> tuple[dict, list[Row]]:
    """Metadata (`format_version`, `row_features`, `creation_timestamp`, `min_ts`, `max_ts`) and rows.

    Both versions are read by this one reader; anything inconsistent is `CorruptSst`, never a wrong row.
    """
    cur = _Cursor(name, data)
    meta, count = _header(cur)
    rows: list[Row] = []
    for _ in range(count):
        rows.append(_read_row(cur, meta, rows[-1][0] if rows else None))
    if cur.at != len(cur.data):
        cur.fail(f"{len(cur.data) - cur.at} trailing bytes")
    return meta, rows


def _header(cur: _Cursor) -> tuple[dict, int]:
    if cur.bytes(4) != b"TSST":
        cur.fail("bad magic", 0)
    version, n = cur.fields(">IB")
    feats = tuple(cur.bytes(n))
    created, lo, hi, count = cur.fields(">qqqI")
    (crc,) = cur.fields(">I")
    if zlib.crc32(cur.data[: cur.at - 4]) != crc:
        cur.fail("header checksum mismatch", 0)
    if version > 1:
        cur.fail(f"unknown format_version {version}", 4)
    if (version == 0 and feats) or any(f > TTL for f in feats) or list(feats) != sorted(set(feats)):
        cur.fail(f"bad row_features {list(feats)}", 9)
    meta = {
        "format_version": version,
        "row_features": feats,
        "creation_timestamp": created,
        "min_ts": lo,
        "max_ts": hi,
    }
    return meta, count


def _read_row(cur: _Cursor, meta: dict, previous: bytes | None) -> Row:
    start = cur.at
    (seq, klen) = cur.fields(">QH")
    key = cur.bytes(klen)
    feats = meta["row_features"]
    flags = cur.bytes(1)[0] if FLAGS in feats else 0
    create_ts = cur.fields(">q")[0] if TIMESTAMP in feats else None
    expire_ts = cur.fields(">q")[0] if TTL in feats else NEVER
    (vlen,) = cur.fields(">I")
    tombstone = bool(flags & 1) or (meta["format_version"] == 0 and vlen == V0_TOMBSTONE)
    value = b"" if meta["format_version"] == 0 and vlen == V0_TOMBSTONE else cur.bytes(vlen)
    (crc,) = cur.fields(">I")
    if zlib.crc32(cur.data[start : cur.at - 4]) != crc:
        cur.fail("row checksum mismatch", start)
    if flags > 1 or (flags and (value or expire_ts != NEVER)):
        cur.fail(f"bad flags {flags:#04x} for this row", start)
    if previous is not None and key <= previous:
        cur.fail(f"key {key!r} not after {previous!r}", start)
    if create_ts is not None and not meta["min_ts"] <= create_ts <= meta["max_ts"]:
        cur.fail(f"create_ts {create_ts} outside [{meta['min_ts']}, {meta['max_ts']}]", start)
    return (key, None if tombstone else value, seq, create_ts, expire_ts)


def observe_ttl_codec(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Observations of codec histories (see `frontier_harness.properties.checks.ttl.codec`) with this codec (no Spark)."""
    return [_observe(h) for h in histories]


def _observe(history: HistoryLike) -> dict:
    encode = lambda rows, created, version: encode_sst([r.as_tuple() for r in rows], created, version)  # noqa: E731
    return codec_round_trip(history, encode, _decoded, InvalidRow)


def _decoded(data: bytes) -> frozenset:
    try:
        meta, rows = decode_sst("sst", data)
    except CorruptSst as error:
        return frozenset({(type(error).__name__,)})
    head = (
        CodecTag.META,
        meta["format_version"],
        tuple(meta["row_features"]),
        meta["creation_timestamp"],
        meta["min_ts"],
        meta["max_ts"],
    )
    return frozenset(
        {head}
        | {(i, k.hex(), None if v is None else v.hex(), s, c, e) for i, (k, v, s, c, e) in enumerate(rows)}
    )
