"""The *streaming* suite: Structured Streaming over the upstream log, crashes included, against the model.

Histories from `frontier_harness.properties.checks.streaming.strategies.streaming`; an implementation's
`observe_streaming(domain, histories)` runs each as a real query (Spark's:
`frontier_harness.spark_impl.streaming.trial`) and reports, after every trigger and restart, the
offset log, the commit log, the sink, the upstream's committed offsets and the
source's `commit(end)` calls (labels in the trial's docstring). One trial is judged
by three properties (observations are shared, so it runs once):

- `exactly_once`: after every step that did not crash, the sink holds the model's
  reclocked collection (`frontier_harness.model.reclocking.reclock`) of the records produced so far through the
  remap the offset log is (batch `N` is IntoTime `N + 1`), for the committed batches;
  at the end, every record produced is in the sink exactly once;
- `offset_log_is_remap`: at every step the checkpoint obeys `frontier_harness.properties.checks.streaming.checkpoint_log.laws`
  (monotone per partition, each batch bound once, commits after offsets, at most one
  uncommitted batch, the sink holding each batch once), and a batch keeps the offsets it
  was first bound to (a re-run after a crash binds the same range);
- `bounded_input_reliance`: no `commit(end)` the source received, and no offsets the
  upstream holds as committed, is beyond the durable frontier (the offsets of the newest
  committed batch), and no step fails reading what the upstream compacted.

Every start of a trial's query runs in a Python process that never ran the job, and in every profile
a run's first trials SIGKILL a driver with a JVM of its own at each crash point (`directed_with_kills`);
what a restart keeps is stated once, in docs/streaming.md ("What a restart keeps"). In the `thorough`
profile, `laws_under_sigkill` judges all three on histories whose every crash SIGKILLs such a driver (a
JVM start per crash, so not in `ci`). The hard cases are counted from what each trial observed
(`reached`), never from the history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.model.errors import UnknownPartition
from frontier_harness.model.ingestion.upstream import Upstream
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import parse_domain
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import (
    CrashPoint,
    ErrorKind,
    LogAction,
    LogArg,
    Sink,
    StreamingAction,
    StreamingLabel,
    Trigger,
    UpstreamRow,
)
from frontier_harness.properties.checks.streaming import streaming_job
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.streaming.committed import (
    DOMAIN,
    as_frontier,
    committed_batches,
    failed_at,
    observed_steps,
    show,
    up_steps,
)
from frontier_harness.properties.checks.streaming.strategies.streaming import (
    CRASH_POINTS,
    FIRST_TWO_DIGIT_BATCH,
    RERUN,
    RESTART_AFTER_COMPACTION,
    TWO_DIGITS,
    crashed,
    directed,
    draw_streaming_history,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.suite import (
    HistoryDraw,
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    observations,
)
from frontier_harness.properties.engine.trials import Trials, in_waves, unless_refused

TRIAL_WAVE = 6  # trials run (and handed over, `in_waves`) this many at a time: Spark's concurrent queries


def _property_check(judge: Callable[[History, Observation], Outcome], job_judge: Any = None):
    """A batched check; under a user's job (`impl.streaming_job`), `job_judge` with the oracle's rows."""

    def check(impl: Any, histories: Sequence[History]) -> Trials:
        """A wave of trials at a time, until a wave fails: the trials after it are not run (`in_waves`); a
        history no upstream can hold is refused unrun (`unknown_partition`)."""
        return in_waves(
            histories,
            TRIAL_WAVE,
            lambda wave: unless_refused(wave, unknown_partition, lambda run: judged(impl, run)),
        )

    def judged(impl: Any, histories: Sequence[History]) -> list[Outcome]:
        observed = observations(impl, "observe_streaming", histories)  # the properties share them
        if job_judge is None or getattr(impl, "streaming_job", None) is None:
            outcomes = [judge(h, obs) for h, obs in zip(histories, observed)]
        else:
            outputs = streaming_job.batch_outputs(impl, histories, observed)
            outcomes = [job_judge(h, obs, outputs) for h, obs in zip(histories, observed)]
        return [with_reached(o, h, obs) for o, h, obs in zip(outcomes, histories, observed)]

    return check


def unknown_partition(history: History) -> Outcome | None:
    """A history that produces to a partition its upstream does not have, refused as the model refuses it
    (`Upstream.produce`: partitions are dense, a log adds partition `n` after `0..n-1`); None for one it
    holds. A shrink's candidate without partition 0's first record is one: it used to run, the trial's
    upstream raised, and the call's other candidates were judged only after a bisection.

    >>> produce = lambda p: Action(StreamingAction.PRODUCE, {IngestionArg.PARTITION: p})
    >>> unknown_partition(History("partitioned", (produce(0), produce(1)))) is None
    True
    >>> unknown_partition(History("partitioned", (produce(1),))).message
    'generator/model disagreement: the model rejected a generated history: unknown partition 1: the log has no partition yet and may add 0'
    """
    upstream = Upstream.empty(parse_domain(history.domain))
    for action in history.actions:
        if action.name == StreamingAction.PRODUCE:
            partition: Any = action.args.get(IngestionArg.PARTITION)  # the model names a missing one
            try:
                upstream = upstream.produce(partition, "")
            except UnknownPartition as exc:
                return Outcome.model_rejected(exc)
    return None


def exactly_once(history: History, obs: Observation) -> Outcome:
    """The sink equals the reclocked collection after every step that left the query up (see the module)."""
    for step in up_steps(obs):
        batches = committed_batches(history, obs, step)
        if isinstance(batches, Outcome):
            return batches
        expected = frozenset((r[0], b, 1) for b, records in batches.items() for r in records)
        if obs[(step, StreamingLabel.SINK)] != expected:
            return _mismatch(step, expected, obs[(step, StreamingLabel.SINK)])
    return Outcome(ok=True)


def _mismatch(
    step: int, expected: frozenset[tuple[Any, int, int]], actual: frozenset[tuple[Any, int, int]]
) -> Outcome:
    want = {(d, b): n for d, b, n in expected}
    got = {(d, b): n for d, b, n in actual}
    lost = sorted(f"{d}@{b}" for d, b in want if (d, b) not in got)
    dup = sorted(f"{d}@{b} x{n}" for (d, b), n in got.items() if n > 1)
    wrong = sorted(f"{d}@{b}" for d, b in got if (d, b) not in want)
    message = f"the sink is not the reclocked collection: lost {lost}, duplicated {dup}, unexpected {wrong}"
    return Outcome(
        ok=False,
        message=message,
        expected={(step, StreamingLabel.SINK): expected},
        actual={(step, StreamingLabel.SINK): actual},
        step=step,
    )


def offset_log_is_remap(history: History, obs: Observation) -> Outcome:
    """The checkpoint's laws at every step, and each batch bound to one range for good."""
    bound: dict[int, tuple[Any, int]] = {}
    for step in observed_steps(obs):
        for batch, frontier in sorted(obs[(step, StreamingLabel.OFFSETS)]):
            if bound.setdefault(batch, (frontier, step))[0] != frontier:
                first, at = bound[batch]
                message = (
                    f"batch {batch} was bound to {list(first)} at step {at} and to {list(frontier)} now: "
                    "a re-run batch must read the range it logged"
                )
                return failed_at(step, message, obs, StreamingLabel.OFFSETS)
        broken = check_log(checkpoint_history(obs, step))
        if broken:
            return failed_at(step, f"{broken[0].law}: {broken[0].message}", obs, StreamingLabel.OFFSETS)
    return Outcome(ok=True)


def checkpoint_history(obs: Observation, step: int) -> History:
    """The checkpoint a trial observed at `step`, as the history `frontier_harness.properties.checks.streaming.checkpoint_log`
    reads from files: offsets with their watermark, batch timestamp and settings, commits with the
    watermark they hand on, the sink's writes."""
    offsets = dict(obs[(step, StreamingLabel.OFFSETS)])
    writes = dict(obs[(step, StreamingLabel.SINK_WRITES)])
    metadata = {b: row for b, *row in obs.get((step, StreamingLabel.OFFSET_METADATA), ())}
    handed_on = dict(obs.get((step, StreamingLabel.COMMIT_METADATA), ()))
    job = any(label == StreamingLabel.JOB_ROWS for _, label in obs)  # a user's sink: no sink log to check
    actions = [] if job else [Action(LogAction.FILE_SINK, {})]
    for batch in sorted(set(offsets) | set(writes) | set(obs[(step, StreamingLabel.COMMITS)])):
        if batch in offsets:
            frontier = [list(e) for e in offsets[batch]]
            args: dict[str, Any] = {
                LogArg.BATCH: batch,
                LogArg.SOURCE: "0",
                LogArg.DOMAIN: DOMAIN.name,
                LogArg.OFFSETS: frontier,
            }
            if batch in metadata:
                watermark, timestamp, conf = metadata[batch]
                args |= {
                    LogArg.WATERMARK_MS: watermark,
                    LogArg.TIMESTAMP_MS: timestamp,
                    LogArg.CONF: dict(conf),
                }
            actions.append(Action(LogAction.OFFSETS, args))
        actions += [Action(LogAction.SINK, {LogArg.BATCH: batch, LogArg.FILES: 1})] * writes.get(batch, 0)
        if batch in obs[(step, StreamingLabel.COMMITS)]:
            handed: dict[str, Any] = (
                {LogArg.NEXT_WATERMARK_MS: handed_on[batch]} if batch in handed_on else {}
            )
            actions.append(Action(LogAction.COMMIT, {LogArg.BATCH: batch, **handed}))
    return History(DOMAIN.name, tuple(actions))


def bounded_input_reliance(history: History, obs: Observation) -> Outcome:
    """Nothing committed upstream beyond what Spark made durable; no step fails on a compacted read."""
    for step in observed_steps(obs):
        error = obs.get((step, StreamingLabel.ERROR), frozenset())
        if any(kind == ErrorKind.COMPACTED_READ for kind, _ in error):
            message = f"the query needs records the upstream compacted: {show(error)}"
            return failed_at(step, message, obs, StreamingLabel.ERROR)
        durable = _durable(obs, step)
        held = [
            ("the upstream's committed offsets", row[1])
            for row in obs[(step, StreamingLabel.UPSTREAM)]
            if row[0] == UpstreamRow.COMMITTED
        ]
        calls = [(f"commit(end) call #{i}", f) for i, f in sorted(obs[(step, StreamingLabel.SOURCE_COMMITS)])]
        for what, frontier in held + calls:
            if not as_frontier(frontier).le(durable):
                message = f"{what} {list(frontier)} is beyond the durable frontier {durable!r} (last commit)"
                return failed_at(step, message, obs, StreamingLabel.UPSTREAM)
    return Outcome(ok=True)


def _durable(obs: Observation, step: int) -> Antichain:
    offsets = dict(obs[(step, StreamingLabel.OFFSETS)])
    done = [b for b in obs[(step, StreamingLabel.COMMITS)] if b in offsets]
    return as_frontier(offsets[max(done)]) if done else Antichain.of(DOMAIN, [DOMAIN.minimum])


def with_reached(outcome: Outcome, history: History, obs: Observation) -> Outcome:
    """`outcome`, carrying the hard cases the trial's observation shows (`reached`)."""
    return attrs.evolve(outcome, reached=tuple(reached(history, obs)))


def reached(history: History, obs: Observation) -> list[str]:
    """The hard cases a trial's observation shows, never the history's intent: a crash at a point (Spark's
    failure naming our injected crash there, or the commit the file sink's crash left deleted), a kill
    at a point (`killed`: the driver's marker there, then its death by SIGKILL), a restart of a query
    that was down while the upstream compacted (the upstream's first stored offsets moved between the
    crash and the restart), a batch left uncommitted by `after_sink` committed by a later start
    (its id in the offset log and not the commit log at the crash, in the commit log later), the rows read
    after a batch with a two-digit id committed (`two_digits_read`); and which trigger and sink the query
    ran with."""
    found = {_settings(history)}
    steps = observed_steps(obs)
    down_since: int | None = None  # the step whose crash left the query down
    for step in steps:
        found |= {TWO_DIGITS} if two_digits_read(obs, step) else set()
        found |= {crashed(p) for (p,) in obs.get((step, StreamingLabel.CRASH), ())}
        found |= {f"{crashed(p)} (SIGKILL)" for (p,) in obs.get((step, StreamingLabel.KILLED), ())}
        if down_since is not None and (step, StreamingLabel.DOWN) not in obs:
            if _starts(obs, down_since) != _starts(obs, step):
                found.add(RESTART_AFTER_COMPACTION)
            if _rerun(obs, down_since, step):
                found.add(RERUN)
            down_since = None
        if (step, StreamingLabel.DOWN) in obs and down_since is None:
            down_since = step
    return sorted(found)


def two_digits_read(obs: Observation, step: int) -> bool:
    """Whether the rows were read at `step` (the sink's, or a job's), a batch with a two-digit id committed.

    >>> two_digits_read({(4, "commits"): frozenset(range(11)), (4, "job_rows"): frozenset()}, 4)
    True
    >>> two_digits_read({(4, "commits"): frozenset(range(10)), (4, "sink"): frozenset()}, 4)
    False
    """
    committed = obs.get((step, StreamingLabel.COMMITS), frozenset())
    read = any((step, label) in obs for label in (StreamingLabel.SINK, StreamingLabel.JOB_ROWS))
    return read and max(committed, default=-1) >= FIRST_TWO_DIGIT_BATCH


def _settings(history: History) -> str:
    first = history.actions[0] if history.actions else None
    query = first.args if first is not None and first.name == StreamingAction.QUERY else {}
    trigger = query.get(IngestionArg.TRIGGER, Trigger.PROCESSING_TIME)
    return f"{trigger} trigger, {query.get(IngestionArg.SINK, Sink.SHARD)} sink"


def _starts(obs: Observation, step: int) -> frozenset:
    return frozenset(row for row in obs[(step, StreamingLabel.UPSTREAM)] if row[0] == UpstreamRow.START)


def _rerun(obs: Observation, crash: int, later: int) -> bool:
    """A batch `after_sink` left logged and uncommitted at step `crash`, committed at step `later`."""
    if (CrashPoint.AFTER_SINK,) not in obs.get((crash, StreamingLabel.CRASH), ()):
        return False
    logged = {b for b, _ in obs[(crash, StreamingLabel.OFFSETS)]} - obs[(crash, StreamingLabel.COMMITS)]
    return bool(logged & obs[(later, StreamingLabel.COMMITS)])


def all_laws(history: History, obs: Observation) -> Outcome:
    """The three properties' judges in turn: the first that fails."""
    for judge in (exactly_once, offset_log_is_remap, bounded_input_reliance):
        outcome = judge(history, obs)
        if not outcome.ok:
            return outcome
    return Outcome(ok=True)


def _job_all_laws(history: History, obs: Observation, outputs: Any) -> Outcome:
    outcome = streaming_job.job_exactly_once(history, obs, outputs)
    return outcome if not outcome.ok else all_laws_but_exactly_once(history, obs)


def all_laws_but_exactly_once(history: History, obs: Observation) -> Outcome:
    for judge in (offset_log_is_remap, bounded_input_reliance):
        outcome = judge(history, obs)
        if not outcome.ok:
            return outcome
    return Outcome(ok=True)


JOB_JUDGES = {"exactly_once": streaming_job.job_exactly_once, "laws_under_sigkill": _job_all_laws}


KILLED = tuple(f"{crashed(p)} (SIGKILL)" for p in CRASH_POINTS)


def directed_with_kills(kill: bool) -> dict:
    """The suite's directed histories (`strategies.streaming.directed`), and in every profile one whose crash
    SIGKILLs a separate driver process at each point: a restart after it is a new driver process, so nothing
    the job kept in memory survives (`KILLED`)."""
    killed = directed(kill=True)
    return {**directed(kill), **{f"{crashed(p)} (SIGKILL)": killed[crashed(p)] for p in CRASH_POINTS}}


def _property(
    name: str, doc: str, judge, kill: bool = False, reference: Reference = Reference.LAWS
) -> Property:
    return Property(
        name=name,
        doc=doc,
        draw=HistoryDraw(draw_streaming_history, kill=kill),
        check=_property_check(judge, JOB_JUDGES.get(name)),  # its outcomes carry what each trial reached
        profiles=("thorough",) if kill else (),
        reference=reference,
        directed=directed_with_kills(
            kill
        ),  # a run's first trials: a crash (and a SIGKILL) at each point, ...
    )


SUITE = Suite(
    name="streaming",
    doc="Structured Streaming over the upstream log: exactly once, the offset log a remap, bounded reliance.",
    properties=(
        _property(
            "exactly_once",
            "After every restart the sink is the model's reclocked collection, no loss, no duplicate.",
            exactly_once,
            reference=Reference.MODEL,  # the model's reclocked collection
        ),
        _property(
            "offset_log_is_remap",
            "The offset log is a valid remap; a re-run batch binds the offsets it logged.",
            offset_log_is_remap,
        ),
        _property(
            "bounded_input_reliance",
            "commit(end) never passes the durable frontier; upstream compaction never breaks a restart.",
            bounded_input_reliance,
        ),
        _property(
            "laws_under_sigkill",
            "The three laws when a separate driver process is SIGKILLed at the crash points (thorough only).",
            all_laws,
            kill=True,
            reference=Reference.MODEL,
        ),
    ),
    default_impl="spark",
    # One history is one real query: seconds, not milliseconds. ci checks 1 example + ~12 histories.
    batched_cost=160.0,
    serial_jobs=True,
    shrink_batch=TRIAL_WAVE,  # a call of 64 trials took 2.5 minutes: the shrink budget overshot by 3x
    required_events=(
        *(crashed(p) for p in CRASH_POINTS),
        RESTART_AFTER_COMPACTION,
        RERUN,
        TWO_DIGITS,
        *KILLED,
    ),
    domains=("partitioned",),
)
