"""PostgreSQL's `pgoutput` logical replication messages (protocol version 1), decoded into transactions.

`pg_logical_slot_peek_binary_changes(slot, upto_lsn, NULL, 'proto_version', '1', 'publication_names',
P)` returns one row per message, `(lsn, xid, data)`; `transactions(rows)` folds them into whole
transactions: `Begin` opens one, `Insert`/`Update`/`Delete` add a change (its row before and after as
column -> text, None for NULL), `Commit` closes it with its commit LSN (where the commit record starts)
and end LSN (where it ends: the offset the CDC source binds). A `Relation` message names a relation's
columns before its first change in each decoding call, so every call's output decodes alone. Messages
that carry no row (`Type`, `Origin`, `Truncate`'s relation list, a logical message) are skipped;
`Truncate` is a change without rows. Values stay PostgreSQL's text form; an unchanged TOASTed value is
absent from its row (pgoutput does not send it).

>>> import struct
>>> def s(text): return text.encode() + b"\\0"
>>> begin = b"B" + struct.pack(">qqi", 100, 0, 7)
>>> rel = b"R" + struct.pack(">i", 16384) + s("public") + s("t") + b"f" + struct.pack(">h", 2) \\
...     + b"\\1" + s("k") + struct.pack(">ii", 23, -1) + b"\\0" + s("v") + struct.pack(">ii", 25, -1)
>>> ins = b"I" + struct.pack(">i", 16384) + b"N" + struct.pack(">h", 2) + b"t" + struct.pack(">i", 1) + b"1" + b"n"
>>> commit = b"C\\0" + struct.pack(">qqq", 100, 140, 0)
>>> [txn] = transactions([(90, 7, begin), (90, 7, rel), (96, 7, ins), (140, 7, commit)])
>>> txn.xid, txn.commit_lsn, txn.end_lsn, txn.changes[0].op, txn.changes[0].after
(7, 100, 140, 'insert', {'k': '1', 'v': None})
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import attrs

from frontier_harness.model.vocabulary.cdc import lsn_text

INSERT, UPDATE, DELETE, TRUNCATE = "insert", "update", "delete", "truncate"
Row = dict[str, str | None]


@attrs.frozen
class Change:
    """One row change of a transaction: its place in it (`seq`), its LSN, the operation, the relation
    (`schema.name`), and the row before (updates and deletes, as the replica identity sends it) and after."""

    seq: int
    lsn: int
    op: str
    relation: str
    before: Row | None
    after: Row | None


@attrs.frozen
class Transaction:
    """A committed transaction: `xid`, where its commit record starts and ends, its changes in order."""

    xid: int
    commit_lsn: int
    end_lsn: int
    changes: tuple[Change, ...]


@attrs.frozen
class _Relation:
    name: str
    columns: tuple[str, ...]


class PgoutputError(ValueError):
    """A message this decoder cannot read (names its kind and LSN): never skipped silently."""


def lsn(text: str | int) -> int:
    """An LSN as a number: PostgreSQL's `X/Y` text (two hex halves) or a number already.

    >>> lsn("0/628668"), lsn("1/0"), lsn(5)
    (6456936, 4294967296, 5)
    """
    if isinstance(text, int):
        return text
    high, _, low = str(text).partition("/")
    return (int(high, 16) << 32) | int(low, 16)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 1

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return values

    def byte(self) -> bytes:
        self.at += 1
        return self.data[self.at - 1 : self.at]

    def string(self) -> str:
        end = self.data.index(b"\0", self.at)
        text = self.data[self.at : end].decode()
        self.at = end + 1
        return text

    def tuple_data(self, columns: tuple[str, ...]) -> Row:
        (count,) = self.take(">h")
        row: Row = {}
        for i in range(count):
            kind, name = self.byte(), columns[i] if i < len(columns) else f"column{i}"
            if kind == b"n":
                row[name] = None
            elif kind in (b"t", b"b"):
                (length,) = self.take(">i")
                row[name] = self.data[self.at : self.at + length].decode()
                self.at += length
            elif kind != b"u":  # `u`: an unchanged TOASTed value, not sent
                raise PgoutputError(f"unknown tuple column kind {kind!r}")
        return row


def transactions(rows: Iterable[tuple[str | int, int, bytes]]) -> list[Transaction]:
    """The committed transactions in `(lsn, xid, data)` message rows, in commit order."""
    relations: dict[int, _Relation] = {}
    done: list[Transaction] = []
    open_xid: int | None = None
    changes: list[Change] = []
    for at, _, data in rows:
        data, here = bytes(data), lsn(at)
        reader, kind = _Reader(data), data[:1]
        if kind == b"B":
            _final, _time, xid = reader.take(">qqi")
            open_xid, changes = xid & 0xFFFFFFFF, []
        elif kind == b"C":
            _flags, commit_lsn, end_lsn, _time = reader.take(">bqqq")
            if open_xid is None:
                raise PgoutputError(f"a Commit at {lsn_text(here)} without its Begin")
            done.append(Transaction(open_xid, commit_lsn, end_lsn, tuple(changes)))
            open_xid = None
        elif kind == b"R":
            (relid,) = reader.take(">i")
            name = f"{reader.string()}.{reader.string()}"
            reader.byte()  # replica identity setting
            (count,) = reader.take(">h")
            columns = []
            for _ in range(count):
                reader.byte()
                columns.append(reader.string())
                reader.take(">ii")
            relations[relid] = _Relation(name, tuple(columns))
        elif kind in (b"I", b"U", b"D"):
            changes.append(_change(reader, kind, here, len(changes), relations))
        elif kind == b"T":
            changes.append(Change(len(changes), here, TRUNCATE, "", None, None))
        elif kind not in (b"Y", b"O", b"M"):
            raise PgoutputError(f"unknown pgoutput message {kind!r} at {lsn_text(here)}")
    return done


def _change(reader: _Reader, kind: bytes, here: int, seq: int, relations: dict[int, _Relation]) -> Change:
    (relid,) = reader.take(">i")
    if relid not in relations:
        raise PgoutputError(f"a change at {lsn_text(here)} of relation {relid}, never described")
    relation = relations[relid]
    before = after = None
    marker = reader.byte()
    if marker in (b"K", b"O"):  # the old row (update: only when sent; delete: always)
        before = reader.tuple_data(relation.columns)
        if kind == b"U":
            marker = reader.byte()
    if kind != b"D":
        if marker != b"N":
            raise PgoutputError(f"expected a new row at {lsn_text(here)}, found {marker!r}")
        after = reader.tuple_data(relation.columns)
    op = {b"I": INSERT, b"U": UPDATE, b"D": DELETE}[kind]
    return Change(seq, here, op, relation.name, before, after)
