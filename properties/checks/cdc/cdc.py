"""The *cdc* suite: a Structured Streaming query over a PostgreSQL replication slot, judged by the model.

Histories from `frontier_harness.properties.checks.cdc.strategies.cdc`; an implementation's
`observe_cdc(domain, histories)` writes each history's transactions into PostgreSQL and runs it as a
real query (Spark's: `frontier_harness.spark_impl.cdc.trial`), reporting after every trigger and
restart the checkpoint, the sink, the slot and what PostgreSQL committed, each transaction with its
commit end LSN as PostgreSQL's own decoder gave it (labels: `CdcLabel`). The model
(`frontier_harness.model.cdc`) reads the history's transactions (`sessions.committed`: a history it
rejects is a generator/model disagreement, never run) and the offset log as a remap
(`replication.remap_of`). One trial is judged by four properties:

- `remap_atomic`: at every step the offset log is a remap (monotone, each batch bound once, the same
  offsets when run again), every offset is a transaction's end LSN (or where the slot began), and
  every transaction's rows lie in one batch, the one the model reclocks it to, all of them;
- `bounded_input_reliance`: the slot's confirmed flush LSN and every `commit(end)` the source made are
  at or below the durable end (the newest committed batch's end LSN); PostgreSQL never lost WAL the
  slot needed; no restart is refused, except after the slot was moved ahead of the checkpoint, where
  the restart must be refused naming the LSN range lost;
- `exactly_once`: after every step that left the query up, the materialized table equals the source
  table as of the durable end (`replication.table_as_of`), each change held once; at the end every
  committed transaction is processed;

and a query (or a user's job) that fails for another reason than the source's refusal fails them all.
- `checkpoint_validates`: the checkpoint obeys `validate-checkpoint`'s laws
  (`frontier_harness.properties.checks.streaming.checkpoint_log.laws`), the LSN as the source's offset.

Hard cases are counted from the observation (`observed_events`, carried as `Outcome.reached`); those the
history aims at (`events`) are each required of it: a
history's crash must show in the trial (the injected failure, or the driver's marker and its death by
SIGKILL), its PostgreSQL restart as a new postmaster start time followed by a committed batch, its slot
behind or ahead of the checkpoint in where the slot stood at a start or in the refusal, its shapes of
transaction in what PostgreSQL's decoder reported. One the trial did not show is a failure where the
protocol makes a source show it (`NOT_SHOWN`: a source that never plans a batch with new transactions,
or advances the slot before Spark's `commit(end)`), and otherwise stops the run as infrastructure (exit
3; a SIGKILLed driver that never reached its point does, in the trial): a case counted reached was
always observed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.model.cdc.replication import Transaction, batch_of, remap_of, table_as_of
from frontier_harness.model.cdc.sessions import committed, with_ends
from frontier_harness.model.errors import ModelError
from frontier_harness.model.vocabulary.cdc import CdcAction, CdcArg, CdcError, CdcLabel, Op, lsn_text
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint, LogAction, LogArg
from frontier_harness.properties.checks.cdc.strategies.cdc import (
    CRASH_POINTS,
    INTERLEAVED,
    LARGE,
    LARGE_TXN,
    POSTGRES,
    RERUN,
    SLOT_AHEAD_REFUSED,
    SLOT_BEHIND,
    TWICE,
    crashed,
    directed,
    draw_cdc_history,
    killed,
)
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.suite import (
    HistoryDraw,
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    observations,
)
from frontier_harness.properties.engine.trials import Trials, in_waves

OBSERVER = "observe_cdc"
Judge = Callable[[History, Observation, "ObservedTrial"], Outcome]


class ObservedTrial:
    """What the judges share about one observed trial: its steps, PostgreSQL's transactions (the model's,
    with their observed end LSNs), where the slot began, and the step the slot was moved ahead at."""

    def __init__(self, history: History, obs: Observation, transactions: list[Transaction]):
        self.steps = sorted(step for step, label in obs if label == CdcLabel.OFFSETS)
        last = self.steps[-1]
        rows = obs.get((last, CdcLabel.TRANSACTIONS), frozenset())
        self.ends = {row[0]: row[2] for row in rows}
        self.shapes = {row[0]: row[3:] for row in rows}  # number -> (row changes, a key changed twice)
        unseen = [t.number for t in transactions if t.number not in self.ends]
        if unseen:  # never judged as if it was not committed: the sink's loss of it would hold
            raise InfrastructureError(
                f"the trial observed no commit of transactions {unseen}, which the history committed "
                f"('{CdcLabel.TRANSACTIONS}' at its last step): PostgreSQL lost them (a server with "
                "synchronous_commit off that crashed), or the observer did not report them"
            )
        self.txns = with_ends(transactions, self.ends)
        starts = sorted(obs.get((self.steps[0], CdcLabel.STARTS), frozenset()) | _all(obs, CdcLabel.STARTS))
        self.first_lsn = starts[0][3] if starts else 0
        moved = [i for i, a in enumerate(history.actions) if a.name == CdcAction.SLOT_AHEAD]
        self.ahead_at = moved[0] if moved else None

    def durable(self, obs: Observation, step: int) -> tuple[int | None, int]:
        """The newest committed batch (None before any) and its end LSN (where the slot began before)."""
        offsets = dict(obs[(step, CdcLabel.OFFSETS)])
        done = [b for b in obs[(step, CdcLabel.COMMITS)] if b in offsets]
        return (max(done), offsets[max(done)]) if done else (None, self.first_lsn)

    def before_ahead(self, step: int) -> bool:
        return self.ahead_at is None or step < self.ahead_at


def _all(obs: Observation, label: str) -> frozenset:
    return frozenset(row for (_, name), rows in obs.items() if name == label for row in rows)


def _failed(step: int, message: str, obs: Observation, label: str) -> Outcome:
    shown = {(step, label): obs.get((step, label), frozenset())}
    return Outcome(ok=False, message=message, actual=shown, step=step)


def remap_atomic(history: History, obs: Observation, trial: ObservedTrial) -> Outcome:
    """The offset log a remap of commit end LSNs; every transaction's rows in one batch, the model's."""
    bound: dict[int, tuple[int, int]] = {}
    known = set(trial.ends.values()) | {trial.first_lsn}
    for step in trial.steps:
        offsets = dict(obs[(step, CdcLabel.OFFSETS)])
        for batch, end in sorted(offsets.items()):
            first, at = bound.setdefault(batch, (end, step))
            if first != end:
                message = f"batch {batch} was bound to LSN {lsn_text(first)} at step {at} and to {lsn_text(end)} now"
                return _failed(step, message, obs, CdcLabel.OFFSETS)
            if end not in known:
                message = (
                    f"batch {batch} ends at LSN {lsn_text(end)}, where no transaction ends: "
                    "a batch must end at a commit end LSN, or it splits a transaction"
                )
                return _failed(step, message, obs, CdcLabel.OFFSETS)
        try:
            remap = remap_of(offsets)
        except ModelError as error:
            return _failed(step, f"the offset log is not a remap: {error}", obs, CdcLabel.OFFSETS)
        split = _split(obs, step, trial, remap)
        if split:
            return _failed(step, split, obs, CdcLabel.CHANGES)
    return Outcome(ok=True)


def _split(obs: Observation, step: int, trial: ObservedTrial, remap: Any) -> str | None:
    """Where our sink's rows of a transaction are not all in the batch the model reclocks it to, or a
    transaction of a committed batch has none there (a later transaction's change of the same row would
    hide that from the table)."""
    rows = obs.get((step, CdcLabel.CHANGES))
    if rows is None:  # a user's job: its rows carry no transaction
        return None
    by_xid: dict[int, Counter] = {}
    for (batch, xid, *_), n in rows:
        by_xid.setdefault(xid, Counter())[batch] += n
    numbers = {x: n for n, x in ((row[0], row[1]) for row in _all(obs, CdcLabel.TRANSACTIONS))}
    return _missing(obs, step, trial, remap, set(by_xid), numbers) or _misplaced(
        trial, remap, by_xid, numbers
    )


def _missing(
    obs: Observation, step: int, trial: ObservedTrial, remap: Any, held: set[int], numbers: dict[int, int]
) -> str | None:
    """A transaction with row changes that ends in a committed batch, none of whose rows the sink holds (a
    slot moved ahead loses only transactions past the durable end, by design)."""
    batch, durable = trial.durable(obs, step)
    if batch is None:
        return None
    for xid, number in sorted(numbers.items(), key=lambda item: item[1]):
        end, changes = trial.ends[number], trial.shapes[number][0]
        if end <= durable and changes and xid not in held:
            return (
                f"transaction {number} (xid {xid}, ending at {lsn_text(end)}, {changes} row changes) belongs "
                f"to committed batch {batch_of(remap, end)}; the sink holds none of its rows"
            )
    return None


def _misplaced(
    trial: ObservedTrial, remap: Any, by_xid: dict[int, Counter], numbers: dict[int, int]
) -> str | None:
    """A transaction some of whose rows the sink holds outside the batch the model reclocks it to, or too
    few of them."""
    for xid, batches in sorted(by_xid.items()):
        number = numbers.get(xid)
        if number is None:
            return f"the sink holds rows of transaction {xid}, which the history never committed"
        want = batch_of(remap, trial.ends[number])
        changes = trial.shapes[number][0]
        if set(batches) != {want} or batches[want] < changes:
            held = ", ".join(f"{c} in batch {b}" for b, c in sorted(batches.items()))
            return (
                f"transaction {number} (xid {xid}, ending at {lsn_text(trial.ends[number])}, {changes} row "
                f"changes) belongs to batch {want}; the sink holds {held}"
            )
    return None


def bounded_input_reliance(history: History, obs: Observation, trial: ObservedTrial) -> Outcome:
    """The slot never released what a restart needs; a slot ahead of the checkpoint is refused."""
    for step in trial.steps:
        batch, durable = trial.durable(obs, step)
        slot = obs.get((step, CdcLabel.SLOT), frozenset())
        for confirmed, _, wal in slot:
            if wal == "lost":
                return _failed(
                    step, "PostgreSQL released WAL the slot needed (wal_status 'lost')", obs, CdcLabel.SLOT
                )
            if trial.before_ahead(step) and confirmed > durable:
                message = (
                    f"the slot's confirmed flush LSN {lsn_text(confirmed)} is past the durable end "
                    f"{lsn_text(durable)} (batch {batch}): a crash now loses what lies between"
                )
                return _failed(step, message, obs, CdcLabel.SLOT)
        for i, end in sorted(obs.get((step, CdcLabel.SOURCE_COMMITS), frozenset())):
            if trial.before_ahead(step) and end > durable:
                message = (
                    f"commit(end) call #{i} at {lsn_text(end)} is past the durable end {lsn_text(durable)}"
                )
                return _failed(step, message, obs, CdcLabel.SOURCE_COMMITS)
        refused = [m for kind, m in obs.get((step, CdcLabel.ERROR), ()) if kind == CdcError.SOURCE_REFUSED]
        if refused and trial.before_ahead(step):
            return _failed(step, f"the source refused a restart: {refused[0]}", obs, CdcLabel.ERROR)
    return _ahead_refused(obs, trial)


def _ahead_refused(obs: Observation, trial: ObservedTrial) -> Outcome:
    """After the slot moved ahead, the next start must fail naming `(durable end, slot]`."""
    if trial.ahead_at is None:
        return Outcome(ok=True)
    ahead = [s for s in trial.steps if s >= trial.ahead_at]
    slot = obs.get((ahead[0], CdcLabel.SLOT), frozenset())
    _, durable = trial.durable(obs, ahead[0])
    confirmed = max((c for c, _, _ in slot), default=durable)
    lost = f"({lsn_text(durable)}, {lsn_text(confirmed)}]"
    for step in ahead[1:]:
        refused = [m for kind, m in obs.get((step, CdcLabel.ERROR), ()) if kind == CdcError.SOURCE_REFUSED]
        if refused and lost in refused[0]:
            return Outcome(ok=True)
        if (step, CdcLabel.DOWN) not in obs or refused:
            message = f"the slot was moved past the checkpoint, losing {lost}; the restart should have been refused naming it"
            return _failed(step, message, obs, CdcLabel.ERROR)
    return Outcome(ok=True)


def exactly_once(history: History, obs: Observation, trial: ObservedTrial) -> Outcome:
    """The table equals the source as of the durable end after every step that left the query up."""
    for step in trial.steps:
        if (step, CdcLabel.DOWN) in obs or not trial.before_ahead(step):
            continue
        batch, durable = trial.durable(obs, step)
        expected = Counter(table_as_of(trial.txns, durable).items())
        actual = Counter(dict(obs.get((step, CdcLabel.TABLE), frozenset())))
        if actual != expected:
            return _table_mismatch(step, batch, durable, expected, actual)
        doubled = sorted(row for row, n in obs.get((step, CdcLabel.CHANGES), ()) if n > 1)
        if doubled:
            return _failed(
                step, f"the sink holds changes more than once: {doubled[:3]}", obs, CdcLabel.CHANGES
            )
    return _all_processed(obs, trial)


def _table_mismatch(
    step: int, batch: int | None, durable: int, expected: Counter, actual: Counter
) -> Outcome:
    lost = sorted((expected - actual).elements())
    extra = sorted((actual - expected).elements())
    message = (
        f"the table is not the source as of {lsn_text(durable)} (batch {batch}): missing {lost[:5]}, "
        f"unexpected {extra[:5]}"
    )
    return Outcome(
        ok=False,
        message=message,
        expected={(step, CdcLabel.TABLE): frozenset(expected.items())},
        actual={(step, CdcLabel.TABLE): frozenset(actual.items())},
        step=step,
    )


def _all_processed(obs: Observation, trial: ObservedTrial) -> Outcome:
    last = trial.steps[-1]
    if (last, CdcLabel.DOWN) in obs or trial.ahead_at is not None:
        return Outcome(ok=True)
    _, durable = trial.durable(obs, last)
    late = sorted(t.number for t in trial.txns if t.end_lsn > durable)
    if late:
        message = f"at the end, transactions {late} are committed in PostgreSQL but past the durable end {lsn_text(durable)}"
        return _failed(last, message, obs, CdcLabel.COMMITS)
    return Outcome(ok=True)


def checkpoint_validates(history: History, obs: Observation, trial: ObservedTrial) -> Outcome:
    """The checkpoint at every step obeys `validate-checkpoint`'s laws, LSNs as the source's offsets."""
    for step in trial.steps:
        broken = check_log(checkpoint_history(obs, step))
        if broken:
            return _failed(step, f"{broken[0].law}: {broken[0].message}", obs, CdcLabel.OFFSETS)
    return Outcome(ok=True)


def checkpoint_history(obs: Observation, step: int) -> History:
    """The checkpoint a trial observed at `step` as the history `validate-checkpoint` reads from files."""
    offsets = dict(obs[(step, CdcLabel.OFFSETS)])
    commits = obs[(step, CdcLabel.COMMITS)]
    actions = []
    for batch in sorted(set(offsets) | set(commits)):
        if batch in offsets:
            args: dict[str, Any] = {
                LogArg.BATCH: batch,
                LogArg.SOURCE: "0",
                LogArg.DOMAIN: "total",
                LogArg.OFFSETS: [offsets[batch]],
            }
            actions.append(Action(LogAction.OFFSETS, args))
        if batch in commits:
            actions.append(Action(LogAction.COMMIT, {LogArg.BATCH: batch}))
    return History("total", tuple(actions))


def events(history: History) -> list[str]:
    """The hard cases the history reaches, as the trial runs it (each one then required of the observation:
    `observed_events`). The sessions' steps reach PostgreSQL at the next trigger, restart or PostgreSQL
    restart, so a trigger's crash point fires when that flush commits something. Spark commits a batch
    upstream when it plans the next one, so a restart right after a clean trigger that committed a batch
    finds the slot behind the checkpoint. A PostgreSQL restart counts when the running query commits a
    batch after it; a slot moved while the query is down is refused at the next start."""
    found = _shapes(history)
    running = pending = lagging = rerun = survived = ahead = False
    down = False
    for action in history.actions:
        name, fault = action.name, action.args.get(IngestionArg.FAULT)
        if name == CdcAction.COMMIT:
            pending = True
        elif name == CdcAction.TRIGGER and not down:
            if fault and pending:
                found.add((killed if action.args.get(IngestionArg.KILL) else crashed)(fault))
                down, rerun, lagging, survived = True, fault == CrashPoint.AFTER_SINK, False, False
            elif pending:
                lagging = True
                found |= {POSTGRES} if survived else set()
            running, pending = not down, pending and down
        elif name == CdcAction.POSTGRES_RESTART:
            lagging = lagging or (pending and running)
            survived, pending = survived or running, pending and not running
        elif name == CdcAction.SLOT_AHEAD:
            ahead = ahead or down
        elif name == CdcAction.RESTART:
            found |= _restarted(lagging, rerun, ahead and down)
            running, down, rerun, pending, lagging, survived = (
                not (ahead and down),
                False,
                False,
                False,
                False,
                False,
            )
    if down:
        found |= _restarted(lagging, rerun, ahead)
    return sorted(found)


def _restarted(lagging: bool, rerun: bool, ahead: bool) -> set[str]:
    if ahead:
        return {SLOT_AHEAD_REFUSED}
    return ({SLOT_BEHIND} if lagging else set()) | ({RERUN} if rerun else set())


def _shapes(history: History) -> set[str]:
    """The committed transactions' shapes: one committing while an earlier one is open, a key updated
    twice in one, a large one."""
    found: set[str] = set()
    began: dict[Any, int] = {}
    written: dict[Any, set[int]] = {}
    shapes: dict[Any, set[str]] = {}
    for i, action in enumerate(history.actions):
        session = action.args.get(CdcArg.SESSION)
        if action.name == CdcAction.BEGIN:
            began[session], written[session], shapes[session] = i, set(), set()
        elif action.name == CdcAction.WRITE and session in began:
            key, count = action.args[CdcArg.KEY], action.args.get(CdcArg.COUNT, 1)
            shapes[session] |= {LARGE_TXN} if count >= LARGE else set()
            repeated = action.args[CdcArg.OP] == Op.UPDATE and key in written[session]
            shapes[session] |= {TWICE} if repeated else set()
            written[session] |= set(range(key, key + count))
        elif action.name == CdcAction.COMMIT and session in began:
            mine = began.pop(session)
            found |= shapes.pop(session) | ({INTERLEAVED} if any(o < mine for o in began.values()) else set())
    return found


def observed_events(obs: Observation) -> set[str]:
    """The hard cases the trial showed: the crashes it saw fire (`crash`, `killed`), a start that re-ran a
    batch logged before it, a start with the slot behind the checkpoint, a refusal of a slot ahead of
    it, a new postmaster followed by a batch committed without a new start, and the shapes of the
    transactions PostgreSQL's decoder reported."""
    steps = sorted(step for step, label in obs if label == CdcLabel.OFFSETS)
    found = {crashed(p) for (_, label), rows in obs.items() if label == CdcLabel.CRASH for (p,) in rows}
    found |= {killed(p) for (_, label), rows in obs.items() if label == CdcLabel.KILLED for (p,) in rows}
    logged: set[int] = set()
    postgres: tuple | None = None
    for before, step in zip([None, *steps], steps):
        previous = obs[(before, CdcLabel.STARTS)] if before is not None else frozenset()
        commits = obs[(step, CdcLabel.COMMITS)]
        for _, first, confirmed, end in obs[(step, CdcLabel.STARTS)] - previous:
            found |= {SLOT_BEHIND} if confirmed < end else set()
            found |= {RERUN} if first in logged and first in commits else set()
        logged |= {b for b, _ in obs[(step, CdcLabel.OFFSETS)]} - commits
        refused = [m for kind, m in obs.get((step, CdcLabel.ERROR), ()) if kind == CdcError.SOURCE_REFUSED]
        found |= {SLOT_AHEAD_REFUSED} if any("ahead of the stream" in m for m in refused) else set()
        if before is not None and len(obs[(step, CdcLabel.POSTGRES)]) > len(obs[(before, CdcLabel.POSTGRES)]):
            postgres = (commits, obs[(step, CdcLabel.STARTS)])
        elif postgres is not None and commits - postgres[0] and obs[(step, CdcLabel.STARTS)] == postgres[1]:
            found.add(POSTGRES)
    return found | _observed_shapes(obs, steps[-1])


def _observed_shapes(obs: Observation, last: int) -> set[str]:
    rows = sorted(obs.get((last, CdcLabel.TRANSACTIONS), ()))
    found = {LARGE_TXN for row in rows if row[3] >= LARGE} | {TWICE for row in rows if row[4]}
    ends = [row[2] for row in rows]
    return found | ({INTERLEAVED} if ends != sorted(ends) else set())


def _property_check(judge: Judge) -> Callable[[Any, Sequence[History]], Trials]:
    """A check: the model reads each history (one it rejects is a generator/model disagreement, never run),
    the implementation runs it (one trial, shared by the four properties in a run), the judge decides,
    and the hard cases the history reaches must show in the observation."""

    def check(impl: Any, histories: Sequence[History]) -> Trials:
        """One trial at a time, until one fails: the trials after it are not run (`in_waves`)."""
        return in_waves(histories, 1, lambda one: [trial(impl, one[0])])

    def trial(impl: Any, history: History) -> Outcome:
        try:
            txns = committed(history)
        except ModelError as error:
            return Outcome.model_rejected(error)
        [obs] = observations(impl, OBSERVER, [history])
        outcome = query_failed(obs) or judge(history, obs, ObservedTrial(history, obs, txns))
        if outcome.ok:
            outcome = _require_observed(history, obs)
        reached = tuple(sorted(observed_events(obs)))  # what the trial showed, never the history
        return attrs.evolve(outcome, reached=reached)

    return check


def query_failed(obs: Observation) -> Outcome | None:
    """The query (or the user's job) failed on a valid history for another reason than the source's
    refusal: a failure of every property, whatever it judges, as an implementation that raises."""
    for step, label in sorted(obs):
        failed = (
            sorted((kind, m) for kind, m in obs[(step, label)] if kind != CdcError.SOURCE_REFUSED)
            if label == CdcLabel.ERROR
            else []
        )
        if failed:
            kind, message = failed[0]
            said = (
                f"{kind}: {message}" if kind == CdcError.JOB_READ_FAILED else f"the query failed: {message}"
            )
            return _failed(step, said, obs, CdcLabel.ERROR)
    return None


# What a hard case the history reaches says of the implementation when its trial did not show it: each is
# what a source that keeps the protocol always does (the crash point fires in the first batch holding the
# transactions the trigger committed; Spark re-runs a batch logged and not committed; the source survives a
# PostgreSQL restart; it advances the slot only when Spark's `commit(end)` says a batch is durable, which
# Spark calls when it plans the next batch; it refuses a slot ahead of the checkpoint).
NOT_SHOWN = {
    **{
        crashed(p): f"the crash point {p} never fired: no batch held the transactions the trigger committed"
        for p in CRASH_POINTS
    },
    RERUN: "the batch a crash after the sink left uncommitted was not run again at the restart",
    POSTGRES: "after PostgreSQL restarted, the running query committed no batch",
    SLOT_BEHIND: (
        "at a restart after a clean run the slot was not behind the checkpoint: it was advanced before Spark's "
        "commit(end) said the batch was durable"
    ),
    SLOT_AHEAD_REFUSED: "the restart after the slot moved past the checkpoint was not refused",
}


def _require_observed(history: History, obs: Observation) -> Outcome:
    """The hard cases the history reaches that its trial did not show: a failure of the implementation
    when the protocol makes it show them (`NOT_SHOWN`); otherwise (a transaction's shape, which PostgreSQL
    reports) the harness did not write what it meant: infrastructure, exit 3."""
    missing = sorted(set(events(history)) - observed_events(obs))
    theirs = [case for case in missing if case in NOT_SHOWN]
    if theirs:
        last = max(step for step, _ in obs)
        return _failed(last, f"{NOT_SHOWN[theirs[0]]} ({theirs[0]})", obs, CdcLabel.STARTS)
    if missing:
        raise InfrastructureError(
            f"the cdc trial did not show the hard cases its history reaches: {missing} "
            f"(history of {len(history.actions)} actions)"
        )
    return Outcome(ok=True)


def _property(name: str, doc: str, judge: Judge, kill: bool = False) -> Property:
    return Property(
        name=name,
        doc=doc,
        draw=HistoryDraw(draw_cdc_history, kill=kill),
        check=_property_check(judge),
        events=events,
        profiles=("thorough",) if kill else (),
        directed=directed(kill),
    )


def all_laws(history: History, obs: Observation, trial: ObservedTrial) -> Outcome:
    """The four properties' judges in turn: the first that fails."""
    for judge in (remap_atomic, bounded_input_reliance, exactly_once, checkpoint_validates):
        outcome = judge(history, obs, trial)
        if not outcome.ok:
            return outcome
    return Outcome(ok=True)


KILLED = tuple(killed(p) for p in CRASH_POINTS)

SUITE = Suite(
    name="cdc",
    doc="Structured Streaming over a PostgreSQL replication slot: atomic remap, bounded reliance, exactly once.",
    properties=(
        _property(
            "remap_atomic",
            "The offset log is a remap of commit end LSNs; every transaction's rows in one batch, the model's.",
            remap_atomic,
        ),
        _property(
            "bounded_input_reliance",
            "The slot never passes the durable end; a slot ahead of the checkpoint is refused, naming the range.",
            bounded_input_reliance,
        ),
        _property(
            "exactly_once",
            "After every step the table is the source as of the committed LSN, each change once.",
            exactly_once,
        ),
        _property(
            "checkpoint_validates",
            "The checkpoint obeys validate-checkpoint's laws, the LSN as the source's offset.",
            checkpoint_validates,
        ),
        _property(
            "laws_under_sigkill",
            "The four laws when every crash SIGKILLs a separate driver process (thorough only).",
            all_laws,
            kill=True,
        ),
    ),
    default_impl="spark",
    # One history is a real query over a database (seconds): ci checks the directed histories, 5 screened
    # and one Hypothesis example.
    batched_cost=2000.0,
    serial_jobs=True,
    shrink_batch=4,
    shrink_calls=16,  # a shrinking call is up to 4 trials: seconds each
    required_events=(
        *(crashed(p) for p in CRASH_POINTS),
        *KILLED,
        RERUN,
        POSTGRES,
        SLOT_BEHIND,
        SLOT_AHEAD_REFUSED,
        INTERLEAVED,
        TWICE,
        LARGE_TXN,
    ),
    domains=("total",),
    reference=Reference.MODEL,
)
