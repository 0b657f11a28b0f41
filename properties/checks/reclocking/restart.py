"""The *restart* suite: practical reclocking restarts from `R(it)` and the summary at `it` identically.

Histories (`draw_restart_history`): mints, source records and one crash tick `it`.
For the simple case (independent updates, every domain) and the transactional
case (`product(D, total)`, ordered and unordered), the summaries after `it` of a
restart fed only the records a seek to `R(it)` would read (those not covered by
`R(it)`) equal the uninterrupted run's, also against the remap compacted to `it`.
The ordered case also emits transactions in metadata order. The *summary* suite
holds an implementation's summaries and restarts against these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from frontier_harness.model.errors import ModelError
from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.reclocking.summary import (
    DataRecord,
    Independent,
    Transactional,
    TxnRecord,
    restart,
    run,
    summary_at,
)
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.vocabulary.reclocking import (
    Crash,
    Mint,
    SourceUpdate,
    TxnData,
    TxnMetadata,
    restart_steps,
)
from frontier_harness.properties.checks.reclocking.strategies.reclocking import draw_restart_history
from frontier_harness.properties.engine.errors import BadHistory
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome, Property, Reference, Suite


def parse(history: History) -> tuple[Remap, list, int]:
    """The minted remap, the source records and the crash tick of a restart history."""
    remap, records, crash = read(history)
    if crash is None:
        raise BadHistory("restart history: no crash action")
    return remap, records, crash


def read(history: History) -> tuple[Remap, list, int | None]:
    """`parse`, with None for a history without a crash (a reduced one: its run is still observable)."""
    domain = history.time_domain
    remap, crash = Remap.initial(domain), None
    records: list[Update | DataRecord | TxnRecord] = []
    for step in restart_steps(history):
        match step:
            case Mint(upper=upper, tick=tick):
                remap = remap.mint(Antichain.checked(domain, upper), tick)
            case SourceUpdate(data=data, time=time, diff=diff):
                records.append(Update(data, time, diff))
            case TxnData(txn=txn, payload=payload, time=time):
                records.append(DataRecord(txn, payload, time[0]))
            case TxnMetadata(txn=txn, size=size, time=time):
                records.append(TxnRecord(txn, size, time[1]))
            case Crash(tick=tick):
                crash = tick
    return remap, records, crash


def summarizers(records: list) -> list:
    """The model's summarizers for these records: `Independent`, or the ordered and unordered transactional ones."""
    if any(isinstance(r, (DataRecord, TxnRecord)) for r in records):
        return [Transactional(ordered=True), Transactional(ordered=False)]
    return [Independent()]


def unread(remap: Remap, summarizer, crash: int, records: list) -> list:
    """The records a seek to `R(crash)` reads: those `R(crash)` does not cover."""
    frontier = remap.at(crash)
    return [r for r in records if not summarizer.covers(frontier, r)]


def restart_is_identical(remap: Remap, records: list, crash: int) -> str | None:
    """After `it`, a restart from `R(it)` and the summary at `it` gives the run's summaries (compacted too)."""
    for summarizer in summarizers(records):
        full = run(remap, summarizer, records)
        expected = tuple((t, s) for t, s in full if t > crash)
        seek = unread(remap, summarizer, crash, records)
        at_crash = summary_at(full, crash)
        for name, resumed_remap in (
            ("remap", remap),
            ("remap compacted to it", remap.compact(Antichain.of(INTO, [crash]))),
        ):
            resumed = restart(resumed_remap, summarizer, crash, at_crash, seek)
            if resumed != expected:
                return (
                    f"{summarizer!r} restarted at {crash} from {name}: {resumed} != uninterrupted {expected}"
                )
    return None


def transactions_in_order(remap: Remap, records: list, crash: int) -> str | None:
    """Ordered: whenever a transaction is published, every transaction with metadata time `<=` its own is too."""
    txns = {r.txn: r for r in records if isinstance(r, TxnRecord)}
    meta = {txn: r.time for txn, r in txns.items()}
    if not meta:
        return None
    for t, summary in run(remap, Transactional(ordered=True), records):
        published = {u.data.split(":")[0] for u in summary.output}
        # a transaction without data publishes nothing: before a published one it must be complete (covered)
        empty = {e for e, r in txns.items() if r.size == 0 and Transactional().covers(remap.at(t), r)}
        for txn in published:
            missing = [e for e, m in meta.items() if m <= meta[txn] and e not in published | empty]
            if missing:
                return f"at {t}, {txn} (metadata {meta[txn]}) is published before earlier {missing}"
    return None


def events(history: History) -> list[str]:
    """Hard cases: crash at a binding time, temp held at the crash, an earlier transaction holding back a later one."""
    try:
        remap, records, crash = parse(history)
    except ModelError:
        return []
    found = set()
    if crash in {b.into_time for b in remap.bindings} and crash > 0:
        found.add("crash at a binding time")
    if remap.upper.is_empty():
        found.add("source closed")
    latest = remap.latest()
    for summarizer in summarizers(records):
        if any(not summarizer.covers(latest, r) for r in records):
            found.add("records not yet covered")
    if summarizers(records)[0] != Independent():
        found |= _transaction_events(remap, records, crash)
    return sorted(found | _boundary_events(remap, records, crash))


AT_FRONTIER = "record exactly at a frontier element"
ONE_SHORT = "transaction one data record short"
SAME_META = "two transactions at one metadata time, one incomplete"
EMPTY_TXN = "transaction with no data records"
DATA_FIRST = "data covered before its metadata"
CRASH_AT_ZERO = "crash at IntoTime 0"
CRASH_AT_END = "crash at or after the last step"
CRASH_BEFORE = "crash one tick before a binding"
BOUNDARIES = (
    AT_FRONTIER,
    ONE_SHORT,
    SAME_META,
    EMPTY_TXN,
    DATA_FIRST,
    CRASH_AT_ZERO,
    CRASH_AT_END,
    CRASH_BEFORE,
)
TRANSACTIONAL = (ONE_SHORT, SAME_META, EMPTY_TXN, DATA_FIRST)


def _boundary_events(remap: Remap, records: list, crash: int) -> set[str]:
    """Records exactly at a frontier, transactions at the edge of complete, crashes at the ends."""
    found, steps = set(), remap.steps()
    ticks = [t for t, _ in steps]
    found |= {CRASH_AT_ZERO} if crash == 0 else set()
    found |= {CRASH_AT_END} if crash >= ticks[-1] else set()
    found |= {CRASH_BEFORE} if crash + 1 in ticks else set()
    for _, frontier in steps:
        if any(r.time in {_side_of(f, r) for f in frontier} for r in records):
            found.add(AT_FRONTIER)
        found |= _step_events(frontier, records)
    txns = [r for r in records if isinstance(r, TxnRecord)]
    found |= {EMPTY_TXN} if any(r.size == 0 for r in txns) else set()
    metas, data = Counter(r.time for r in txns), Counter(r.txn for r in records if isinstance(r, DataRecord))
    if any(metas[r.time] > 1 and data[r.txn] < r.size for r in txns):
        found.add(SAME_META)
    return found


def _side_of(frontier_element, record) -> object:
    if isinstance(record, DataRecord):
        return frontier_element[0]
    if isinstance(record, TxnRecord):
        return frontier_element[1]
    return frontier_element


def _step_events(frontier, records: list) -> set[str]:
    """At one step: a transaction covered but one data record short, data covered before its metadata."""
    found, summarizer = set(), Transactional()
    covered = [
        r for r in records if isinstance(r, (DataRecord, TxnRecord)) and summarizer.covers(frontier, r)
    ]
    data = Counter(r.txn for r in covered if isinstance(r, DataRecord))
    metas = {r.txn: r.size for r in covered if isinstance(r, TxnRecord)}
    if any(size > 0 and data[txn] == size - 1 for txn, size in metas.items()):
        found.add(ONE_SHORT)
    if any(txn not in metas for txn in data):
        found.add(DATA_FIRST)
    return found


def _transaction_events(remap: Remap, records: list, crash: int) -> set:
    found = set()
    ordered, unordered = run(remap, Transactional(True), records), run(remap, Transactional(False), records)
    if any(a[1].output != b[1].output for a, b in zip(ordered, unordered)):
        found.add("earlier incomplete transaction holds back a later one")
    if summary_at(ordered, crash).temp:
        found.add("records held in temp at the crash")
    return found


def drawer(transactional: bool) -> Callable:
    """A restart history's draw: simple, or transactional (data and metadata records)."""

    def draw(source, domain_name: str) -> History:
        return draw_restart_history(source, domain_name, transactional)

    return draw


def kind(transactional: bool) -> str:
    """The prefix of a property's name."""
    return "transactional" if transactional else "simple"


def law(fn: Callable, transactional: bool) -> Property:
    """A law over each drawn restart history."""

    def check(impl, histories: Sequence[History]) -> list[Outcome]:
        outcomes = []
        for history in histories:
            try:
                broken = fn(*parse(history))
            except ModelError as error:
                outcomes.append(Outcome.model_rejected(error))
                continue
            outcomes.append(
                Outcome(
                    ok=broken is None,
                    message=broken or "",
                    step=None if broken is None else len(history.actions) - 1,
                )
            )
        return outcomes

    name = f"{kind(transactional)}_{fn.__name__}"
    return Property(name=name, doc=fn.__doc__ or name, draw=drawer(transactional), check=check, events=events)


SUITE = Suite(
    name="restart",
    doc="Practical reclocking: restarting from R(it) and the summary at it gives identical summaries.",
    properties=(
        law(restart_is_identical, transactional=False),
        law(restart_is_identical, transactional=True),
        law(transactions_in_order, transactional=True),
    ),
    default_impl="model",
    reference=Reference.LAWS,  # a restart equals the uninterrupted run
    calls=(),
    required_events=(
        "crash at a binding time",
        "source closed",
        "records not yet covered",
        "earlier incomplete transaction holds back a later one",
        "records held in temp at the crash",
        *BOUNDARIES,
    ),
)
