"""A PostgreSQL table's transactions as a source gauged by commit end LSNs, reclocked into batches.

The gauge of a logical replication slot is the LSN where each transaction's commit record ends
(its *end LSN*): PostgreSQL decodes transactions in that order, and a slot whose confirmed flush LSN
is `L` has released every transaction ending at or before `L`. So a source offset `end` closes the
transactions whose end LSN is at or below it: as a FromTime frontier it is `{end + 1}` (`frontier`), and
a streaming query's offset log, batch `N` bound to `end_N`, is the remap `R(N + 1) = {end_N + 1}`
(`remap_of`; the reclocking seed's `remap`, `InvalidRemap` when the log goes back). A transaction is
reclocked whole to the first batch whose frontier passes its end LSN (`batch_of`): every row of it at
one IntoTime, the seed's atomicity.

The table is `key -> value`; a transaction's writes apply in order (`apply`): an insert of a key the
table holds, or an update or delete of one it does not, is `InvalidWrite`. The table *as of* an LSN is
every transaction ending at or before it applied in end-LSN order (`table_as_of`): what a query that
committed its batches up to that LSN must have materialized.

>>> txns = [Transaction(0, 120, (Write("insert", 1, "a"),)), Transaction(1, 160, (Write("update", 1, "b"),))]
>>> table_as_of(txns, 150), table_as_of(txns, 160)
({1: 'a'}, {1: 'b'})
>>> r = remap_of({0: 120, 1: 160})
>>> batch_of(r, 120), batch_of(r, 160), batch_of(r, 161)
(0, 1, None)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from frontier_harness.model.errors import InvalidWrite
from frontier_harness.model.reclocking.reclock import assign
from frontier_harness.model.reclocking.remap import Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary.cdc import Op

LSN = Total()


@attrs.frozen
class Write:
    """One statement of a transaction: `op` on the `count` keys from `key` on, setting `value` (not a
    delete's)."""

    op: str
    key: int
    value: str | None = None
    count: int = 1

    @property
    def keys(self) -> range:
        return range(self.key, self.key + self.count)


@attrs.frozen
class Transaction:
    """A committed transaction: its number in the history, its end LSN, its writes in order."""

    number: int
    end_lsn: int
    writes: tuple[Write, ...]


def apply(table: Mapping[int, str | None], txn: Transaction) -> dict[int, str | None]:
    """`table` after `txn`'s writes, in order; `InvalidWrite` names a write the table cannot take.

    >>> apply({1: "a"}, Transaction(0, 9, (Write("delete", 1), Write("insert", 1, "b"), Write("update", 1, "c"))))
    {1: 'c'}
    >>> apply({}, Transaction(3, 9, (Write("update", 1, "c"),)))
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidWrite: transaction 3: Write(op='update', key=1, value='c', count=1) at key 1: the table holds no such key
    """
    out = dict(table)
    for write in txn.writes:
        for key in write.keys:
            held = key in out
            if write.op == Op.INSERT and held:
                raise InvalidWrite(txn.number, write, key, "the table holds it already")
            if write.op in (Op.UPDATE, Op.DELETE) and not held:
                raise InvalidWrite(txn.number, write, key, "the table holds no such key")
            if write.op == Op.DELETE:
                del out[key]
            else:
                out[key] = write.value
    return out


def table_as_of(transactions: Iterable[Transaction], lsn: int) -> dict[int, str | None]:
    """The table once every transaction ending at or before `lsn` is applied, in end-LSN order."""
    table: dict[int, str | None] = {}
    for txn in sorted(transactions, key=lambda t: t.end_lsn):
        if txn.end_lsn <= lsn:
            table = apply(table, txn)
    return table


def frontier(end: int) -> Antichain:
    """The source offset `end` as a FromTime frontier: a transaction ending at `end` is complete there.

    >>> frontier(120)
    {121}
    """
    return Antichain.of(LSN, [LSN.validate(end) + 1])


def remap_of(offsets: Mapping[int, int]) -> Remap:
    """The offset log (batch -> end LSN) as the remap binding IntoTime `batch + 1` to `frontier(end)`;
    `InvalidRemap`, naming the bindings, when an offset goes back.

    >>> remap_of({0: 120, 1: 100})
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.SourceUpperRegression: source upper may not go back: {101} is not >= current {121}
    """
    return Remap.minted(LSN, [(frontier(end), batch + 1) for batch, end in sorted(offsets.items())])


def batch_of(remap: Remap, end_lsn: int) -> int | None:
    """The batch a transaction ending at `end_lsn` is reclocked to (None while no batch passes it)."""
    into = assign(remap, end_lsn)
    return None if into is None else into - 1
