"""Practical reclocking: at every IntoTime of a durable remap, a summary of the input up to `R(t)`.

A `Summary` is the value a restart needs at IntoTime `t`: `output`, the published
collection (consolidated `Update`s in IntoTime, all at times `<= t`), and `temp`,
the auxiliary state (input records summarized but not published, canonical order).
A *summarizer* says which records a frontier covers and how a summary absorbs the
records that arrive at a step:

- `Independent()`: records are source `Update`s in any FromTime; each is published
  at the IntoTime it is reclocked to; `temp` stays empty.
- `Transactional(ordered)`: data records (`DataRecord`) and transaction metadata
  (`TxnRecord`) from two inputs. FromTime is `Product(data time, metadata time)`; a
  record of one input is covered by a frontier when it is not beyond the frontier's
  projection on its coordinate (`project`). A transaction is complete when its
  metadata record and all `size` of its data records are covered; `output` holds
  the payloads of emitted transactions and `temp` (the TEMP collection at `t`) the
  rest. `ordered=True` emits a transaction only when every transaction whose
  metadata time is `<=` its own is complete (`earlier_complete`).

`run` folds a summarizer over the remap's steps; `restart(remap, s, it, summary,
records)` resumes from `R(it)` (it reads only records not covered by `R(it)`) and
the summary at `it`, and yields the same summaries as `run` after `it`.

Replaceable rules (module-level, looked up at call time): `complete_txns`,
`earlier_complete`.

>>> from frontier_harness.model.time.domains import Total
>>> from frontier_harness.model.reclocking.remap import Remap
>>> r = Remap.minted(Total(), [(Antichain.of(Total(), [2]), 5)])
>>> run(r, Independent(), [Update("a", 1, 1), Update("b", 3, 1)])
((0, Summary(output=(), temp=())), (5, Summary(output=(Update(data='a', time=5, diff=1),), temp=())))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from frontier_harness.model.errors import (
    InvalidTime,
    InvalidTransactionInput,
    NoSummaryAt,
    PartiallyClosedUpper,
)
from frontier_harness.model.reclocking.reclock import reclockable_at
from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, consolidate
from frontier_harness.model.time.domains import Domain, Product, Time


@attrs.frozen
class Summary:
    """Published `output` (IntoTime updates, consolidated) and auxiliary `temp` records.

    Choice: `output` is the published history up to the summary's IntoTime (not
    just its contents), so equal summaries mean equal published collections.

    >>> Summary()
    Summary(output=(), temp=())
    """

    output: tuple[Update, ...] = ()
    temp: tuple[DataRecord | TxnRecord, ...] = ()


@runtime_checkable
class Summarizer(Protocol):
    """What `run` and `restart` need from a case of practical reclocking.

    >>> isinstance(Independent(), Summarizer), isinstance(Transactional(), Summarizer)
    (True, True)
    """

    def validate(self, domain: Domain, records: Iterable) -> tuple: ...
    def covers(self, frontier: Antichain, record: Any) -> bool: ...
    def step(self, domain: Domain, summary: Summary, time: int, arrived: Sequence) -> Summary: ...


@attrs.frozen
class Independent:
    """Independent records: every source `Update` is published when reclocked; no auxiliary state.

    >>> from frontier_harness.model.time.domains import Total
    >>> Independent().step(Total(), Summary(), 4, [Update("a", 0, 1)])
    Summary(output=(Update(data='a', time=4, diff=1),), temp=())
    """

    def validate(self, domain: Domain, records: Iterable[Update]) -> tuple:
        """The records, each time checked against the FromTime `domain`."""
        return tuple(Update(u.data, domain.validate(u.time), u.diff) for u in records)

    def covers(self, frontier: Antichain, record: Update) -> bool:
        """Whether `record` is up through `frontier` (reclockable at it)."""
        return reclockable_at(frontier, record.time)

    def step(self, domain: Domain, summary: Summary, time: int, arrived: Sequence[Update]) -> Summary:
        """Publishes the arrived records at `time`."""
        published = summary.output + tuple(Update(u.data, time, u.diff) for u in arrived)
        return Summary(tuple(consolidate(INTO, published)))


@attrs.frozen
class DataRecord:
    """A data record of transaction `txn` at `time` in the data input; published as `payload`.

    >>> DataRecord("t0", "t0:x", 3).payload
    't0:x'
    """

    txn: str
    payload: str
    time: Time


@attrs.frozen
class TxnRecord:
    """Transaction metadata at `time` in the metadata input: `txn` has `size` data records.

    >>> TxnRecord("t0", 2, 0).size
    2
    """

    txn: str
    size: int
    time: Time


def project(frontier: Antichain, side: int) -> Antichain:
    """The frontier of one input of a Product frontier: minimal `side` coordinates of its elements.

    A time `x` of that input is beyond the projection iff `(x, y)` is beyond `frontier` for some `y`.

    >>> from frontier_harness.model.time.domains import Product, Total
    >>> project(Antichain.of(Product(Total(), Total()), [(3, 1), (1, 4)]), 0)
    {1}
    """
    product = _product(frontier.domain)
    domain = (product.a, product.b)[side]
    return Antichain.of(domain, (f[side] for f in frontier))


def _product(domain: Domain) -> Product:
    """The transactional case's Product domain (its records live at pairs of the two inputs' times)."""
    if not isinstance(domain, Product):
        raise TypeError(f"transactional summaries need a Product domain, got {domain.name}")
    return domain


def combined_upper(data_upper: Antichain, txn_upper: Antichain) -> Antichain:
    """The Product source upper of the two inputs: every pair of their elements.

    Closed only when both are; one closed input alone is a typed error (hold a
    finished input's upper just past its last record instead).

    >>> from frontier_harness.model.time.domains import Total
    >>> combined_upper(Antichain.of(Total(), [3]), Antichain.of(Total(), [1]))
    {(3, 1)}
    """
    if data_upper.is_empty() != txn_upper.is_empty():
        raise PartiallyClosedUpper(data_upper, txn_upper)
    domain = Product(data_upper.domain, txn_upper.domain)
    return Antichain.of(domain, [(a, b) for a in data_upper for b in txn_upper])


def complete_txns(pool: Sequence) -> set[str]:
    """Transactions whose metadata record and all `size` data records are in `pool`.

    >>> complete_txns([TxnRecord("t", 1, 0), DataRecord("t", "x", 0), TxnRecord("u", 2, 1)])
    {'t'}
    """
    sizes = {r.txn: r.size for r in pool if isinstance(r, TxnRecord)}
    counts = Counter(r.txn for r in pool if isinstance(r, DataRecord))
    return {txn for txn, size in sizes.items() if counts[txn] == size}


def earlier_complete(record: TxnRecord, pool: Sequence, complete: set[str], domain: Domain) -> bool:
    """Order rule: every transaction in `pool` whose metadata time is `<=` `record`'s is complete.

    Emitted transactions have left the pool, and every metadata time `<=` a covered
    one is covered, so the pool holds every earlier transaction not yet emitted.

    >>> from frontier_harness.model.time.domains import Total
    >>> pool = [TxnRecord("t", 1, 0), TxnRecord("u", 0, 1)]
    >>> earlier_complete(pool[1], pool, {"u"}, Total())
    False
    """
    return all(e.txn in complete for e in pool if isinstance(e, TxnRecord) and domain.le(e.time, record.time))


@attrs.frozen
class Transactional:
    """Data and transaction metadata from two inputs; FromTime `Product(data, metadata)`.

    Choice: transaction order is the metadata input's order (`<=` on metadata times).

    >>> from frontier_harness.model.time.domains import Product, Total
    >>> pool = [DataRecord("t1", "x", 0), TxnRecord("t0", 1, 0), TxnRecord("t1", 1, 1)]
    >>> Transactional(ordered=True).step(Product(Total(), Total()), Summary(), 7, pool).output
    ()
    >>> Transactional(ordered=False).step(Product(Total(), Total()), Summary(), 7, pool).output
    (Update(data='x', time=7, diff=1),)
    """

    ordered: bool = True

    def validate(self, domain: Domain, records: Iterable) -> tuple:
        """Records with times in their input's domain; one metadata record per txn, never overfull."""
        records = tuple(records)
        for r in records:
            _checked_time(domain, r)
        sizes: dict[str, int] = {}
        for r in (r for r in records if isinstance(r, TxnRecord)):
            if r.txn in sizes or not isinstance(r.size, int) or r.size < 0:
                raise InvalidTransactionInput(r.txn, f"{r!r}: one metadata record per transaction, size >= 0")
            sizes[r.txn] = r.size
        counts = Counter(r.txn for r in records if isinstance(r, DataRecord))
        for txn, n in counts.items():
            if txn in sizes and n > sizes[txn]:
                raise InvalidTransactionInput(txn, f"{n} data records but size {sizes[txn]}")
        return records

    def covers(self, frontier: Antichain, record: DataRecord | TxnRecord) -> bool:
        """Whether `record` is up through its own input's projection of `frontier`."""
        return reclockable_at(project(frontier, _side(record)), record.time)

    def step(self, domain: Domain, summary: Summary, time: int, arrived: Sequence) -> Summary:
        """Emits the payloads of the transactions now publishable; the other records stay in `temp`."""
        pool = summary.temp + tuple(arrived)
        done = self.publishable(_product(domain).b, pool)
        published = [Update(r.payload, time, 1) for r in pool if isinstance(r, DataRecord) and r.txn in done]
        temp = sorted((r for r in pool if r.txn not in done), key=lambda r: _record_key(_product(domain), r))
        return Summary(tuple(consolidate(INTO, summary.output + tuple(published))), tuple(temp))

    def publishable(self, txn_domain: Domain, pool: Sequence) -> set[str]:
        """Complete transactions; when `ordered`, only those whose earlier ones are complete too."""
        complete = complete_txns(pool)
        if not self.ordered:
            return complete
        heads = (r for r in pool if isinstance(r, TxnRecord) and r.txn in complete)
        return {r.txn for r in heads if earlier_complete(r, pool, complete, txn_domain)}


def _side(record: DataRecord | TxnRecord) -> int:
    return 0 if isinstance(record, DataRecord) else 1


def _checked_time(domain: Domain, record: object) -> None:
    if not isinstance(domain, Product) or not isinstance(record, (DataRecord, TxnRecord)):
        raise InvalidTime(domain.name, record, "the transactional case needs product(data, metadata) records")
    (domain.a, domain.b)[_side(record)].validate(record.time)


def _record_key(domain: Product, r: DataRecord | TxnRecord) -> tuple:
    if isinstance(r, DataRecord):
        return (0, r.txn, r.payload, domain.a.key(r.time), 0)
    return (1, r.txn, "", domain.b.key(r.time), r.size)


def _fold(
    remap: Remap,
    summarizer: Summarizer,
    steps: list[tuple[int, Antichain]],
    summary: Summary,
    records: tuple[Any, ...],
) -> tuple[tuple[int, Summary], ...]:
    """Each record joins the first step whose frontier covers it; the summary absorbs each step in turn."""
    arrivals: dict[int, list[Any]] = {}
    for r in records:
        first = next((t for t, frontier in steps if summarizer.covers(frontier, r)), None)
        if first is not None:
            arrivals.setdefault(first, []).append(r)
    result = []
    for t, _ in steps:
        summary = summarizer.step(remap.domain, summary, t, arrivals.get(t, []))
        result.append((t, summary))
    return tuple(result)


def run(remap: Remap, summarizer: Summarizer, records: Iterable) -> tuple[tuple[int, Summary], ...]:
    """`(t, summary at t)` for every step `t` of the remap, from an empty summary.

    Records never covered (beyond the latest binding) are in no summary yet.

    >>> from frontier_harness.model.time.domains import Total
    >>> run(Remap.initial(Total()), Independent(), [Update("a", 0, 1)])
    ((0, Summary(output=(), temp=())),)
    """
    records = summarizer.validate(remap.domain, records)
    return _fold(remap, summarizer, remap.steps(), Summary(), records)


def restart(
    remap: Remap, summarizer: Summarizer, it: int, summary: Summary, records: Iterable
) -> tuple[tuple[int, Summary], ...]:
    """Resumes at IntoTime `it` from `R(it)` and the summary at `it`: `run`'s summaries after `it`.

    It reads only the records not covered by `R(it)` (the seek to `R(it)`), so
    `records` may start anywhere at or before `R(it)`. `it` must be readable.

    >>> from frontier_harness.model.time.domains import Total
    >>> r = Remap.minted(Total(), [(Antichain.of(Total(), [2]), 5), (Antichain.of(Total(), [4]), 9)])
    >>> at5 = summary_at(run(r, Independent(), [Update("a", 1, 1)]), 6)
    >>> restart(r, Independent(), 6, at5, [Update("b", 3, 1)])
    ((9, Summary(output=(Update(data='a', time=5, diff=1), Update(data='b', time=9, diff=1)), temp=())),)
    """
    frontier = remap.at(it)
    unread = tuple(
        r for r in summarizer.validate(remap.domain, records) if not summarizer.covers(frontier, r)
    )
    later = [(t, f) for t, f in remap.steps() if t > it]
    return _fold(remap, summarizer, later, summary, unread)


def summary_at(summaries: Sequence[tuple[int, Summary]], time: int) -> Summary:
    """The summary at any IntoTime: that of the last step at or before `time`.

    >>> summary_at(((3, Summary()),), 2)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.NoSummaryAt: no summary at 2: the first summarized IntoTime is 3
    """
    before = [s for t, s in summaries if t <= time]
    if not before:
        raise NoSummaryAt(time, summaries[0][0] if summaries else None)
    return before[-1]
