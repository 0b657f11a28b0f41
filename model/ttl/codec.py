"""The SST byte format: metadata header, rows in format v0 or v1, one CRC32 per row.

Layout (all integers big-endian; choice: the framing around the RFC's row
layout is ours, the row layout itself is the RFC's):

    header  b"TSST" | u32 format_version | u8 n | n x u8 row_feature
            | i64 creation_timestamp | i64 min_ts | i64 max_ts | u32 row_count
            | u32 crc32(header bytes before it)
    row     u64 seq | ROW | u32 crc32(seq + ROW)           (row_count times)
    ROW v0  u16 key_len | key | u32 value_len | value       (value_len 0xFFFFFFFF = tombstone)
    ROW v1  u16 key_len | key | attr | u32 value_len | value
    attr    per listed feature, in enum order: ROW_FLAGS u8 (bit 0 tombstone,
            others reserved = 0) | TIMESTAMP i64 create_ts | TIME_TO_LIVE i64 expire_ts

`seq` sits in the frame because the RFC row has none and the model's rows do.
Checksums: the header and every row carry a CRC32, and decoding also checks
lengths, key order, reserved bits, the row count and that nothing trails. So a
corrupted byte, or any burst of up to 32 bits, is always a `CorruptSst`; wider
random damage goes undetected with probability at most 2^-32 per row.

>>> rows = (Row.value_row(b"a", b"1", 1, 10, 20), Row.tombstone_row(b"b", 2, 11))
>>> decode_sst("sst-0", encode_sst(rows, creation_timestamp=12))[1] == rows
True
"""

from __future__ import annotations

import enum
import struct
import zlib
from collections.abc import Sequence

import attrs

from frontier_harness.model.errors import CorruptSst, InvalidRow
from frontier_harness.model.ttl.row import NEVER, Row

MAGIC = b"TSST"
LATEST_VERSION = 1
MAX_KEY_LEN = 2**16 - 1
MAX_VALUE_LEN = 2**32 - 1
V0_TOMBSTONE = 2**32 - 1
TOMBSTONE_FLAG = 0x01


class RowFeature(enum.IntEnum):
    """Per-row attributes an SST lists; attributes are encoded in this (fixed) order.

    >>> [f.name for f in RowFeature]
    ['ROW_FLAGS', 'TIMESTAMP', 'TIME_TO_LIVE']
    """

    ROW_FLAGS = 0
    TIMESTAMP = 1
    TIME_TO_LIVE = 2


@attrs.frozen
class SstInfo:
    """SST metadata: codec version, row features, creation time and row timestamp range.

    Choice: an SST with no timestamped rows has `min_ts == max_ts == creation_timestamp`.

    >>> SstInfo.for_rows([Row.value_row(b"a", b"", 1, 4, 9)], 6).row_features
    (<RowFeature.ROW_FLAGS: 0>, <RowFeature.TIMESTAMP: 1>, <RowFeature.TIME_TO_LIVE: 2>)
    """

    format_version: int
    row_features: tuple[RowFeature, ...]
    creation_timestamp: int
    min_ts: int
    max_ts: int

    @classmethod
    def for_rows(
        cls, rows: Sequence[Row], creation_timestamp: int, format_version: int = LATEST_VERSION
    ) -> SstInfo:
        """The metadata of an SST holding `rows`; TIME_TO_LIVE iff some row has an expiry.

        >>> info = SstInfo.for_rows([Row.tombstone_row(b"a", 1, 4)], 6)
        >>> [f.name for f in info.row_features], info.creation_timestamp, info.min_ts, info.max_ts
        (['ROW_FLAGS', 'TIMESTAMP'], 6, 4, 4)
        """
        stamps = [r.create_ts for r in rows if r.create_ts is not None]
        return cls(
            format_version,
            features_for(rows, format_version),
            creation_timestamp,
            min(stamps, default=creation_timestamp),
            max(stamps, default=creation_timestamp),
        )

    @property
    def has_ttl(self) -> bool:
        """Whether rows of this SST may expire (the TTL compaction filter's SSTs).

        >>> SstInfo(1, (RowFeature.ROW_FLAGS,), 0, 0, 0).has_ttl
        False
        """
        return RowFeature.TIME_TO_LIVE in self.row_features


def features_for(rows: Sequence[Row], format_version: int) -> tuple[RowFeature, ...]:
    """Row features a v1 SST of `rows` lists: flags always, timestamps, TTL if any row expires.

    >>> features_for([], 0), features_for([], 1)
    ((), (<RowFeature.ROW_FLAGS: 0>,))
    """
    if format_version == 0:
        return ()
    wanted = [RowFeature.ROW_FLAGS]
    if any(r.create_ts is not None for r in rows):
        wanted.append(RowFeature.TIMESTAMP)
    if any(r.expire_ts != NEVER for r in rows):
        wanted.append(RowFeature.TIME_TO_LIVE)
    return tuple(wanted)


def check_sizes(key_len: int, value_len: int) -> None:
    """A key fits a u16 length and a value a u32 length, else `InvalidRow` naming the length.

    >>> check_sizes(65536, 0)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidRow: invalid row key length (65536): longer than 65535 bytes
    """
    if key_len > MAX_KEY_LEN:
        raise InvalidRow("key length", key_len, f"longer than {MAX_KEY_LEN} bytes")
    if value_len > MAX_VALUE_LEN:
        raise InvalidRow("value length", value_len, f"longer than {MAX_VALUE_LEN} bytes")


def encode_row(row: Row, info: SstInfo) -> bytes:
    """The RFC's row layout (no frame) under `info`; `InvalidRow` if the row does not fit it.

    >>> encode_row(Row(b"k", b"v", 1, None), SstInfo(0, (), 0, 0, 0)).hex()
    '00016b0000000176'
    """
    check_sizes(len(row.key), 0 if row.value is None else len(row.value))
    head = struct.pack(">H", len(row.key)) + row.key
    if info.format_version == 0:
        return head + _v0_value(row)
    return head + _attributes(row, info.row_features) + _value(row)


def _v0_value(row: Row) -> bytes:
    """v0 value: tombstone as length 0xFFFFFFFF; no timestamps can be carried."""
    if row.create_ts is not None or row.expire_ts != NEVER:
        raise InvalidRow("timestamps", (row.create_ts, row.expire_ts), "format v0 carries no timestamps")
    if row.value is None:
        return struct.pack(">I", V0_TOMBSTONE)
    if len(row.value) == V0_TOMBSTONE:
        raise InvalidRow("value length", len(row.value), "format v0 reserves this length for tombstones")
    return _value(row)


def _value(row: Row) -> bytes:
    """u32 value_len | value (a tombstone has an empty value)."""
    value = row.value or b""
    return struct.pack(">I", len(value)) + value


def _attributes(row: Row, features: tuple[RowFeature, ...]) -> bytes:
    """The v1 attribute block; a row attribute the features cannot carry is `InvalidRow`."""
    out = b""
    if RowFeature.ROW_FLAGS in features:
        out += bytes([TOMBSTONE_FLAG if row.is_tombstone else 0])
    elif row.is_tombstone:
        raise InvalidRow("flags", features, "a tombstone needs the ROW_FLAGS feature")
    if (RowFeature.TIMESTAMP in features) != (row.create_ts is not None):
        raise InvalidRow("create_ts", row.create_ts, f"does not match row features {features}")
    if row.create_ts is not None:
        out += struct.pack(">q", row.create_ts)
    if RowFeature.TIME_TO_LIVE in features:
        out += struct.pack(">q", row.expire_ts)
    elif row.expire_ts != NEVER:
        raise InvalidRow("expire_ts", row.expire_ts, "an expiry needs the TIME_TO_LIVE feature")
    return out


def encode_sst(rows: Sequence[Row], creation_timestamp: int, format_version: int = LATEST_VERSION) -> bytes:
    """An SST of `rows` (strictly increasing keys), header and per-row checksums included.

    >>> len(encode_sst([], creation_timestamp=0))
    42
    """
    info = SstInfo.for_rows(rows, creation_timestamp, format_version)
    for before, after in zip(rows, rows[1:]):
        if not before.key < after.key:
            raise InvalidRow("key order", after.key, f"not after the previous key {before.key!r}")
    return _header(info, len(rows)) + b"".join(_frame(r, info) for r in rows)


def _header(info: SstInfo, row_count: int) -> bytes:
    """The metadata header followed by its CRC32."""
    head = (
        MAGIC
        + struct.pack(">IB", info.format_version, len(info.row_features))
        + bytes(info.row_features)
        + struct.pack(">qqqI", info.creation_timestamp, info.min_ts, info.max_ts, row_count)
    )
    return head + struct.pack(">I", zlib.crc32(head))


def _frame(row: Row, info: SstInfo) -> bytes:
    """u64 seq | row | u32 crc32 of both."""
    if not 0 <= row.seq < 2**64:
        raise InvalidRow("seq", row.seq, "not an unsigned 64-bit integer")
    body = struct.pack(">Q", row.seq) + encode_row(row, info)
    return body + struct.pack(">I", zlib.crc32(body))


@attrs.define
class _Reader:
    """A cursor over SST bytes; every failure is a `CorruptSst` naming the SST and offset."""

    sst: str
    data: bytes
    pos: int = 0

    def take(self, n: int) -> bytes:
        """The next `n` bytes, or a truncation error."""
        if self.pos + n > len(self.data):
            self.fail(f"truncated: needs {n} bytes, {len(self.data) - self.pos} left")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple:
        """The next struct-packed fields."""
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def fail(self, reason: str, at: int | None = None) -> None:
        """Raises `CorruptSst` at `at` (default: the cursor)."""
        raise CorruptSst(self.sst, self.pos if at is None else at, reason)


def decode_sst(sst: str, data: bytes) -> tuple[SstInfo, tuple[Row, ...]]:
    """Metadata and rows of an SST named `sst`; v0 and v1 both read. Never a wrong row.

    >>> decode_sst("sst-9", encode_sst([], 0)[:-1])
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.CorruptSst: corrupt SST 'sst-9' at byte 38: truncated: needs 4 bytes, 3 left
    """
    reader = _Reader(sst, bytes(data))
    info, row_count = _read_header(reader)
    rows: list[Row] = []
    for _ in range(row_count):
        rows.append(_read_frame(reader, info, rows[-1].key if rows else None))
    if reader.pos != len(reader.data):
        reader.fail(f"{len(reader.data) - reader.pos} bytes after the last of {row_count} rows")
    return info, tuple(rows)


def _read_header(reader: _Reader) -> tuple[SstInfo, int]:
    """Parses and checks the header (magic, CRC, version, features)."""
    if reader.take(4) != MAGIC:
        reader.fail("bad magic", at=0)
    version, n = reader.unpack(">IB")
    raw_features = reader.take(n)
    created, min_ts, max_ts, row_count = reader.unpack(">qqqI")
    (crc,) = reader.unpack(">I")
    if crc != zlib.crc32(reader.data[: reader.pos - 4]):
        reader.fail("header checksum mismatch", at=0)
    if version not in (0, 1):
        reader.fail(f"unknown format_version {version}", at=4)
    if list(raw_features) != sorted(set(raw_features)) or any(f > max(RowFeature) for f in raw_features):
        reader.fail(f"bad row_features {list(raw_features)}", at=9)
    if version == 0 and raw_features:
        reader.fail("format v0 has no row features", at=9)
    features = tuple(RowFeature(f) for f in raw_features)
    return SstInfo(version, features, created, min_ts, max_ts), row_count


def _read_frame(reader: _Reader, info: SstInfo, previous_key: bytes | None) -> Row:
    """One framed row: checksum first, then the row's own consistency checks."""
    start = reader.pos
    (seq,) = reader.unpack(">Q")
    (key_len,) = reader.unpack(">H")
    key = reader.take(key_len)
    if info.format_version == 0:
        flags, create_ts, expire_ts = 0, None, NEVER
    else:
        flags, create_ts, expire_ts = _read_attributes(reader, info.row_features)
    (value_len,) = reader.unpack(">I")
    v0_tombstone = info.format_version == 0 and value_len == V0_TOMBSTONE
    value = None if v0_tombstone else reader.take(value_len)
    (crc,) = reader.unpack(">I")
    if crc != zlib.crc32(reader.data[start : reader.pos - 4]):
        reader.fail("row checksum mismatch", at=start)
    _check_row(reader, start, info, flags, value, key, previous_key, create_ts, expire_ts)
    tombstone = v0_tombstone or bool(flags & TOMBSTONE_FLAG)
    return Row(key, None if tombstone else value, seq, create_ts, expire_ts)


def _read_attributes(reader: _Reader, features: tuple[RowFeature, ...]) -> tuple[int, int | None, int]:
    """flags, create_ts, expire_ts of a v1 row under `features`."""
    flags = reader.take(1)[0] if RowFeature.ROW_FLAGS in features else 0
    create_ts = reader.unpack(">q")[0] if RowFeature.TIMESTAMP in features else None
    expire_ts = reader.unpack(">q")[0] if RowFeature.TIME_TO_LIVE in features else NEVER
    return flags, create_ts, expire_ts


def _check_row(reader, start, info, flags, value, key, previous_key, create_ts, expire_ts) -> None:
    """Checks a checksummed row against the format's rules and the header."""
    if flags & ~TOMBSTONE_FLAG:
        reader.fail(f"reserved row flag bits set in {flags:#04x}", at=start)
    if flags & TOMBSTONE_FLAG and (value or expire_ts != NEVER):
        reader.fail("a tombstone with a value or an expiry", at=start)
    if previous_key is not None and not previous_key < key:
        reader.fail(f"key {key!r} not after {previous_key!r}", at=start)
    if create_ts is not None and not info.min_ts <= create_ts <= info.max_ts:
        reader.fail(f"create_ts {create_ts} outside [{info.min_ts}, {info.max_ts}]", at=start)
