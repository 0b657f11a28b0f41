"""The SST codec: the RFC's row layouts, v0 still readable, typed errors on oversize writes
and on every truncation or corruption (never a wrong row)."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.errors import CorruptSst, InvalidRow
from frontier_harness.model.ttl.codec import (
    MAX_KEY_LEN,
    RowFeature,
    SstInfo,
    check_sizes,
    decode_sst,
    encode_row,
    encode_sst,
)
from frontier_harness.model.ttl.row import I64_MAX, I64_MIN, NEVER, Row

i64 = st.integers(I64_MIN, I64_MAX - 1)


@st.composite
def v1_rows(draw, max_size=6):
    keys = sorted(draw(st.sets(st.binary(max_size=6), max_size=max_size)))
    rows = []
    for seq, key in enumerate(keys, start=1):
        create = draw(i64)
        if draw(st.booleans()):
            rows.append(Row.tombstone_row(key, seq, create))
        else:
            expire = draw(st.one_of(st.just(NEVER), st.integers(create + 1, I64_MAX)))
            rows.append(Row.value_row(key, draw(st.binary(max_size=8)), seq, create, expire))
    return rows


@st.composite
def v0_rows(draw):
    keys = sorted(draw(st.sets(st.binary(max_size=6), max_size=6)))
    return [
        Row(k, draw(st.none() | st.binary(max_size=8)), draw(st.integers(0, 2**64 - 1)), None) for k in keys
    ]


@settings(max_examples=300, deadline=None)
@given(v1_rows(), i64)
def test_v1_round_trip(rows, created):
    info, decoded = decode_sst("sst-1", encode_sst(rows, created))
    assert decoded == tuple(rows)
    assert info == SstInfo.for_rows(rows, created)


@settings(max_examples=200, deadline=None)
@given(v0_rows(), i64)
def test_v0_round_trip_through_the_same_reader(rows, created):
    info, decoded = decode_sst("sst-0", encode_sst(rows, created, format_version=0))
    assert decoded == tuple(rows)
    assert (info.format_version, info.row_features) == (0, ())


def _frame(seq: int, row: bytes) -> bytes:
    body = struct.pack(">Q", seq) + row
    return body + struct.pack(">I", zlib.crc32(body))


def _header(version: int, features: bytes, created: int, lo: int, hi: int, count: int) -> bytes:
    head = (
        b"TSST"
        + struct.pack(">IB", version, len(features))
        + features
        + struct.pack(">qqqI", created, lo, hi, count)
    )
    return head + struct.pack(">I", zlib.crc32(head))


def test_a_hand_built_v0_sst_is_read():
    rows = struct.pack(">H", 1) + b"a" + struct.pack(">I", 2) + b"hi"
    tomb = struct.pack(">H", 1) + b"b" + struct.pack(">I", 0xFFFFFFFF)
    data = _header(0, b"", 7, 7, 7, 2) + _frame(1, rows) + _frame(2, tomb)
    info, decoded = decode_sst("legacy", data)
    assert info == SstInfo(0, (), 7, 7, 7)
    assert decoded == (Row(b"a", b"hi", 1, None), Row(b"b", None, 2, None))


def test_v1_row_layout_is_the_rfcs():
    info = SstInfo(1, tuple(RowFeature), 0, 0, 0)
    row = Row.value_row(b"key", b"val", 1, 100, 200)
    assert encode_row(row, info) == (
        struct.pack(">H", 3) + b"key" + b"\x00" + struct.pack(">qq", 100, 200) + struct.pack(">I", 3) + b"val"
    )
    tomb = Row.tombstone_row(b"k", 2, 5)
    flags_ts = SstInfo(1, (RowFeature.ROW_FLAGS, RowFeature.TIMESTAMP), 0, 0, 0)
    assert encode_row(tomb, flags_ts) == struct.pack(">H", 1) + b"k" + b"\x01" + struct.pack(">qI", 5, 0)


def test_the_ttl_feature_is_on_iff_some_row_expires():
    plain = [Row.value_row(b"a", b"", 1, 0)]
    assert not SstInfo.for_rows(plain, 0).has_ttl
    assert SstInfo.for_rows(plain + [Row.value_row(b"b", b"", 2, 0, 5)], 0).has_ttl


def test_oversize_key_and_value_are_typed_errors_on_write():
    encode_sst([Row.value_row(b"k" * MAX_KEY_LEN, b"", 1, 0)], 0)
    with pytest.raises(InvalidRow, match="65536"):
        encode_sst([Row.value_row(b"k" * (MAX_KEY_LEN + 1), b"", 1, 0)], 0)
    check_sizes(0, 2**32 - 1)
    with pytest.raises(InvalidRow, match="value length \\(4294967296\\)"):
        check_sizes(0, 2**32)


def test_rows_a_format_cannot_carry_are_typed_errors_on_write():
    with pytest.raises(InvalidRow, match="v0 carries no timestamps"):
        encode_sst([Row.value_row(b"k", b"", 1, 5)], 0, format_version=0)
    with pytest.raises(InvalidRow, match="create_ts"):
        encode_sst([Row.value_row(b"a", b"", 1, 5), Row(b"b", b"", 2, None)], 0)
    with pytest.raises(InvalidRow, match="key order"):
        encode_sst([Row.value_row(b"b", b"", 1, 5), Row.value_row(b"a", b"", 2, 5)], 0)
    with pytest.raises(InvalidRow, match="seq"):
        encode_sst([Row.value_row(b"a", b"", -1, 5)], 0)


SAMPLE = [
    Row.value_row(b"a", b"one", 1, 10, 20),
    Row.tombstone_row(b"b", 2, 11),
    Row.value_row(b"c", b"", 3, 12),
]


@pytest.mark.parametrize(
    "version,rows", [(1, SAMPLE), (0, [Row(b"a", b"x", 1, None), Row(b"b", None, 2, None)])]
)
def test_every_truncation_is_a_typed_error_naming_sst_and_offset(version, rows):
    data = encode_sst(rows, 12, format_version=version)
    for cut in range(len(data)):
        with pytest.raises(CorruptSst) as err:
            decode_sst("sst-7", data[:cut])
        assert err.value.sst == "sst-7" and 0 <= err.value.offset <= cut
        assert "sst-7" in str(err.value) and f"byte {err.value.offset}" in str(err.value)
    with pytest.raises(CorruptSst, match="1 bytes after the last of"):
        decode_sst("sst-7", data + b"\x00")


@pytest.mark.parametrize(
    "version,rows", [(1, SAMPLE), (0, [Row(b"a", b"x", 1, None), Row(b"b", None, 2, None)])]
)
def test_every_single_byte_corruption_is_a_typed_error(version, rows):
    data = encode_sst(rows, 12, format_version=version)
    for pos in range(len(data)):
        for flip in (0x01, 0x80, 0xFF):
            bad = bytearray(data)
            bad[pos] ^= flip
            with pytest.raises(CorruptSst):
                decode_sst("sst-7", bytes(bad))


def test_a_row_checksum_error_names_the_rows_offset():
    data = bytearray(encode_sst(SAMPLE, 12))
    first_row = len(encode_sst([], 12)) + 1  # one more feature byte with TTL rows
    data[-2] ^= 0x10  # inside the last row's checksum
    with pytest.raises(CorruptSst, match="row checksum mismatch") as err:
        decode_sst("sst-7", bytes(data))
    assert err.value.offset > first_row


def test_a_well_checksummed_header_with_an_unknown_version_is_refused():
    with pytest.raises(CorruptSst, match="unknown format_version 2"):
        decode_sst("x", _header(2, b"\x00", 0, 0, 0, 0))
    with pytest.raises(CorruptSst, match="bad row_features"):
        decode_sst("x", _header(1, b"\x01\x00", 0, 0, 0, 0))


def test_checksummed_rows_that_break_the_format_are_refused():
    flags_only = _header(1, b"\x00", 0, 0, 0, 1)
    reserved = struct.pack(">H", 1) + b"a" + b"\x02" + struct.pack(">I", 0)
    with pytest.raises(CorruptSst, match="reserved row flag bits"):
        decode_sst("x", flags_only + _frame(1, reserved))
    tomb_value = struct.pack(">H", 1) + b"a" + b"\x01" + struct.pack(">I", 1) + b"v"
    with pytest.raises(CorruptSst, match="tombstone with a value"):
        decode_sst("x", flags_only + _frame(1, tomb_value))
    row = struct.pack(">H", 1) + b"a" + b"\x00" + struct.pack(">I", 0)
    with pytest.raises(CorruptSst, match="not after"):
        decode_sst("x", _header(1, b"\x00", 0, 0, 0, 2) + _frame(1, row) + _frame(2, row))
    stamped = struct.pack(">H", 1) + b"a" + b"\x00" + struct.pack(">qI", 50, 0)
    with pytest.raises(CorruptSst, match="outside"):
        decode_sst("x", _header(1, b"\x00\x01", 0, 0, 10, 1) + _frame(1, stamped))


@settings(max_examples=300, deadline=None)
@given(v1_rows(max_size=4), st.data())
def test_random_corruption_never_yields_a_wrong_row(rows, data):
    encoded = encode_sst(rows, 0)
    bad = bytearray(encoded)
    positions = data.draw(st.lists(st.integers(0, len(bad) - 1), min_size=1, max_size=6))
    for pos in positions:
        bad[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(bad)))
    bad = bytes(bad[:cut])
    if bad == encoded:
        return
    with pytest.raises(CorruptSst):
        decode_sst("sst-r", bad)
