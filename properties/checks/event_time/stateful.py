"""The *stateful* suite: a user's stateful, event-time Structured Streaming job under crash trials, judged
by the model's frontiers (`frontier_harness.model.event_time.stateful`), never by Spark's streaming engine.

`check --suite stateful --job MODULE:FACTORY` (the protocol: `frontier_harness.properties.checks.streaming.job.StatefulJob`).
Histories come from `frontier_harness.properties.checks.event_time.strategies.stateful`, scaled to the
job's plan (its delay, window, promised lateness: `use_plan`, which the implementation calls when it is
prepared); each runs as a real query over keyed, timed records (`observe_stateful`), with crashes and
restarts as the streaming suite's. After every step that left the query up, judged by:

- `exactly_once`: the offset log's watermarks are the model's E(N), and the job's `read(spark)` equals,
  as a multiset, the job's `transform` run as a batch job per window over the records the model keeps
  for it from the committed batches (`frontier_harness.properties.checks.event_time.oracles.stateful_rows`):
  every group in update mode, the windows complete by the last committed batch in append mode. One
  oracle job per wave of trials. A failure names the rows missing, doubled or unexpected, with their
  window and batch.
- `lateness_kept`: a record with `event_time > M - lateness` (M the newest event time of the batches
  committed before its batch, `lateness` what the job promises) is not late for any of its windows.
- `complete_windows_emitted` (append mode, a window): once E(N) of a committed batch reaches a window's
  end, that window's rows are in the result. Not applicable to an update-mode job.
- `state_bounded`: the operator's key holds event time (a window, or the watermarked column of a
  deduplication key), so the state can be evicted; otherwise the state grows without bound. After the
  last committed batch N the state read from the checkpoint holds no entry bounded at or below E(N).
- `offset_log_is_remap` and `bounded_input_reliance`: the streaming suite's, the checkpoint's laws with
  the watermark and batch timestamp of `offsets/N` never going back.

In the `thorough` profile `laws_under_sigkill` judges them all on histories whose crashes SIGKILL a
separate driver process.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import attrs

from frontier_harness.model.event_time.stateful import Bound, StatefulPlan, Window, aggregate
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import (
    CrashPoint,
    IngestionArg,
    OutputMode,
    StatefulOperator,
    StreamingAction,
    StreamingLabel,
    Trigger,
)
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import (
    Frame,
    Mismatch,
    Part,
    Step,
    expected_parts,
    frames_of,
    journaled,
    matched,
    read_step,
    rows_of,
)
from frontier_harness.properties.checks.event_time.strategies.stateful import (
    Tracker,
    draw_stateful_history,
    is_late,
    scripted,
)
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.checks.streaming.committed import failed_at, up_steps
from frontier_harness.properties.checks.streaming.strategies.streaming import (
    RERUN,
    RESTART_AFTER_COMPACTION,
    crashed,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.runner import UNCHECKED, report_trial
from frontier_harness.properties.engine.suite import (
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    observations,
)

TRIAL_WAVE = streaming.TRIAL_WAVE
SHOWN = 6  # rows named per kind in a message
# The example job's plan (`frontier_harness.streaming_job_example.windowed_counts`): the suite's shape
# until an implementation names its job's (`use_plan`).
EXAMPLE_PLAN = StatefulPlan(
    StatefulOperator.AGGREGATION, (5_000,), Window(10_000), ("key",), OutputMode.UPDATE, 5_000
)
_PLAN: ContextVar[StatefulPlan] = ContextVar("stateful_plan", default=EXAMPLE_PLAN)

LATE = "a record late for a window it falls in"
AT_WATERMARK = "a record exactly at the watermark"
LATE_AND_KEPT = "a record late for one window, counted in another"
REDELIVERY = "a redelivered record"
IDLE = "a partition idle while the watermark moves"
COMPLETE = "a window complete (emitted, evicted)"
PROMISE = "a record within the promised lateness, beyond the delay"
REEMIT = "a batch that emitted a window re-run after after_sink"
CRASHES = tuple(crashed(p) for p in CrashPoint) + (RESTART_AFTER_COMPACTION, RERUN, *streaming.KILLED)
# For each hard case, the script of a small history that reaches it (`strategies.stateful.scripted`): a run
# checks these first (`Property.directed`), so a run of a few trials reaches every hard case by construction.
SCRIPTS = {
    **{crashed(p): f"ahead crash:{p} restart" for p in CrashPoint},
    **{f"{crashed(p)} (SIGKILL)": f"ahead kill:{p} restart" for p in CrashPoint},
    RERUN: f"ahead crash:{CrashPoint.AFTER_SINK} restart",
    RESTART_AFTER_COMPACTION: f"ahead trigger ahead crash:{CrashPoint.AFTER_OFFSETS} compact restart",
    REDELIVERY: "ahead redelivery trigger",
    LATE: "ahead far trigger boundary late trigger",
    AT_WATERMARK: "ahead far trigger boundary late trigger",
    IDLE: "ahead@0 trigger far@1 trigger far@1 trigger",
    COMPLETE: "ahead far trigger",
    LATE_AND_KEPT: "ahead far trigger boundary trigger",
    PROMISE: "ahead far trigger promise trigger",
}


def directed(kill: bool = False) -> dict[str, Callable[[Any, str], History]]:
    """For each hard case a job may require, a draw of a small history that reaches it (`SCRIPTS`, scaled to
    the job under test when drawn); a batch that emitted a window re-run after a crash needs `availableNow`."""

    def draw(script: str, trigger: str = Trigger.PROCESSING_TIME) -> Callable[[Any, str], History]:
        script = script.replace("crash:", "kill:") if kill else script
        return lambda source, domain: scripted(source, domain, current_plan(), script, trigger)

    reemit = f"ahead far trigger ahead crash:{CrashPoint.AFTER_SINK} restart"
    return {
        **{event: draw(script) for event, script in SCRIPTS.items()},
        REEMIT: draw(reemit, Trigger.AVAILABLE_NOW),
    }


def use_plan(plan: StatefulPlan) -> None:
    """The plan of the job under test: what histories are scaled to and which hard cases it has."""
    _PLAN.set(plan)


def current_plan() -> StatefulPlan:
    return _PLAN.get()


def required_events(plan: StatefulPlan) -> tuple[str, ...]:
    """The hard cases a job's histories must reach: a job without a watermark has no late record.

    >>> required_events(EXAMPLE_PLAN)[-4:]
    ('a record late for a window it falls in', 'a record exactly at the watermark', 'a partition idle while the watermark moves', 'a window complete (emitted, evicted)')
    """
    found = [*CRASHES, REDELIVERY]
    if plan.delays:
        found += [LATE, AT_WATERMARK, IDLE]
    if plan.window is not None and plan.window.slide < plan.window.duration and plan.delays:
        found.append(LATE_AND_KEPT)
    if plan.window is not None and plan.bound is Bound.WINDOW_END:
        found.append(COMPLETE)
    if plan.lateness is not None and plan.delays and plan.lateness > plan.delay:
        found.append(PROMISE)
    if plan.window is not None and plan.bound is Bound.WINDOW_END and plan.output_mode == OutputMode.APPEND:
        found.append(REEMIT)
    return tuple(found)


def events(history: History) -> list[str]:
    """The hard cases `history` reaches, as the generator's `Tracker` follows the watermark: the streaming
    suite's crashes and restarts, and each kind of event time a batch meets."""
    plan = current_plan()
    found = {e for e in streaming.events(history) if e in CRASHES}
    tracker, seen, last_batch_of = Tracker(plan), set(), {}
    runs, emitted_up_to = 0, 0  # batches run, the watermark the windows were emitted up to
    ran: list[int] = []  # the event times of the batches that ran
    available_now = (
        bool(history.actions) and history.actions[0].args.get(IngestionArg.TRIGGER) == Trigger.AVAILABLE_NOW
    )
    for action in history.actions:
        before = (tracker.mark, tracker.newest, list(tracker.pending))
        if _crashes_after_emitting(plan, action, tracker, ran, emitted_up_to) and available_now:
            found.add(REEMIT)
        tracker.step(action)
        if action.name == StreamingAction.PRODUCE:
            args = action.args
            key = (args[IngestionArg.KEY], args[IngestionArg.EVENT_TIME], args[Arg.DATA])
            found |= {REDELIVERY} if key in seen else set()
            seen.add(key)
            last_batch_of[action.args[IngestionArg.PARTITION]] = runs
        elif before[2] and not tracker.pending:  # the pending records ran in a batch
            runs, ran, emitted_up_to = runs + 1, ran + before[2], before[0]
            found |= _batch_events(plan, before[0], before[1], before[2])
            if tracker.mark > before[0] and any(runs - b >= 2 for b in last_batch_of.values()):
                found.add(IDLE)
            if plan.window is not None and _completes(plan, history, tracker.mark):
                found.add(COMPLETE)
    return sorted(found)


def _crashes_after_emitting(
    plan: StatefulPlan, action: Any, tracker: Tracker, ran: list[int], emitted: int
) -> bool:
    """An `after_sink` crash of a batch with new records that (with no batch of its own before it, as under
    `availableNow`) emits the windows the watermark completed since the last batch ran."""
    if action.name != StreamingAction.TRIGGER or tracker.down or not tracker.pending or plan.window is None:
        return False
    if action.args.get(IngestionArg.FAULT) != CrashPoint.AFTER_SINK:
        return False
    return any(emitted < s.end <= tracker.mark for t in ran for s in plan.window.containing(t))


def _batch_events(plan: StatefulPlan, mark: int, newest: int | None, times: list[int]) -> set[str]:
    found = set()
    for t in times:
        late = is_late(plan, t, mark)
        found |= {LATE} if any(late) else set()
        found |= {LATE_AND_KEPT} if any(late) and not all(late) else set()
        at = [s.end == mark for s in plan.window.containing(t)] if plan.window else [t == mark]
        found |= {AT_WATERMARK} if plan.delays and mark > 0 and any(at) else set()
        if newest is not None and plan.lateness and plan.delays:
            found |= {PROMISE} if newest - plan.lateness < t <= newest - plan.delay else set()
    return found


def _completes(plan: StatefulPlan, history: History, mark: int) -> bool:
    assert plan.window is not None
    times = [a.args[IngestionArg.EVENT_TIME] for a in history.actions if a.name == StreamingAction.PRODUCE]
    return any(s.end <= mark for t in times for s in plan.window.containing(t)) and mark > 0


Judge = Callable[[Any, Sequence[History], Sequence[Observation]], list[Outcome]]


def _check(judge: Judge) -> Callable[[Any, Sequence[History]], list[Outcome]]:
    """A wave of trials at a time (one oracle job each), until a wave fails: the rest are not run."""

    def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for i in range(0, len(histories), TRIAL_WAVE):
            if not all(o.ok for o in outcomes):
                return outcomes + [UNCHECKED] * (len(histories) - i)
            wave = histories[i : i + TRIAL_WAVE]
            observed = observations(impl, "observe_stateful", wave)
            outcomes += [report_trial(o) for o in judge(impl, wave, observed)]
        return outcomes

    return check


def _steps_and_parts(
    impl: Any, history: History, obs: Observation
) -> list[tuple[Step, list[Part]]] | Outcome:
    found = []
    for step in up_steps(obs):
        trial = read_step(history, obs, step, impl.plan)
        if isinstance(trial, Outcome):
            return trial
        message = journaled(obs, trial)
        if message is not None:
            return failed_at(step, message, obs, StreamingLabel.OFFSET_METADATA)
        found.append((trial, expected_parts(impl.plan, trial)))
    return found


def _with_outputs(
    impl: Any, histories: Sequence[History], observed: Sequence[Observation]
) -> tuple[list, dict]:
    """Each trial's steps and parts (or its failing outcome), and the oracle's rows of every frame: one job."""
    judged = [_steps_and_parts(impl, h, obs) for h, obs in zip(histories, observed)]
    frames = sorted(
        {f for steps in judged if isinstance(steps, list) for _, parts in steps for f in frames_of(parts)}
    )
    return judged, dict(zip(frames, impl.stateful_outputs(frames))) if frames else {}


def exactly_once(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """`read(spark)` equals the job's transform over the records the model keeps, after every up step."""
    judged, outputs = _with_outputs(impl, histories, observed)
    return [_exactly_once(impl, obs, steps, outputs) for obs, steps in zip(observed, judged)]


def _exactly_once(impl: Any, obs: Observation, steps: Any, outputs: dict[Frame, Counter]) -> Outcome:
    if isinstance(steps, Outcome):
        return steps
    for trial, parts in steps:
        actual = Counter(dict(obs.get((trial.step, StreamingLabel.JOB_ROWS), frozenset())))
        mismatch = matched(actual, parts, outputs, impl.window_column)
        if not mismatch.ok:
            return _mismatch(trial, actual, mismatch, parts, outputs, impl.window_column)
    return Outcome(ok=True)


def _mismatch(
    trial: Step,
    actual: Counter,
    mismatch: Mismatch,
    parts: Sequence[Part],
    outputs: dict[Frame, Counter],
    window_column: str | None,
) -> Outcome:
    expected: Counter = Counter()
    for part in parts:
        expected += rows_of(part.picks[0], outputs, window_column)
    doubled = Counter({row: n for row, n in mismatch.extra.items() if row in expected})
    unexpected = mismatch.extra - doubled
    where = {row: part.what for part in parts for row in rows_of(part.picks[0], outputs, window_column)}
    named = [
        _named("missing", [f"{show_row(row)} ({what})" for row, what in mismatch.missing]),
        _named(
            "doubled",
            [f"{show_row(r)} ({where[r]}; held {actual[r]}x, expected {expected[r]}x)" for r in doubled],
        ),
        _named("unexpected", [show_row(r) + (f" ({where[r]})" if r in where else "") for r in unexpected]),
    ]
    batches = sorted(trial.committed)
    message = (
        f"the job's rows are not its transform over what the model keeps of batches {batches}: "
        + ", ".join(n for n in named if n)
    )
    label = StreamingLabel.JOB_ROWS
    return Outcome(
        ok=False,
        message=message,
        expected={(trial.step, label): frozenset(_counted(expected))},
        actual={(trial.step, label): frozenset(_counted(actual))},
        step=trial.step,
    )


def _named(kind: str, rows: list[str]) -> str:
    if not rows:
        return ""
    more = f" and {len(rows) - SHOWN} more" if len(rows) > SHOWN else ""
    return f"{kind} [" + "; ".join(sorted(rows)[:SHOWN]) + more + "]"


def _counted(rows: Counter) -> list[str]:
    return [show_row(row) + (f" x{n}" if n != 1 else "") for row, n in rows.items()]


def show_row(row: tuple) -> str:
    """A row as `{column=value, ...}`; a window as `[start, end)`.

    >>> show_row((("count", 2), ("window", (("end", 20), ("start", 10)))))
    '{count=2, window=[10, 20)}'
    """

    def value(v: Any) -> str:
        fields = (
            dict(v) if isinstance(v, tuple) and all(isinstance(f, tuple) and len(f) == 2 for f in v) else {}
        )
        if set(fields) == {"start", "end"}:
            return f"[{fields['start']}, {fields['end']})"
        return repr(v)

    return "{" + ", ".join(f"{name}={value(v)}" for name, v in row) + "}"


def lateness_kept(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """No record within the promised lateness of the newest event time before its batch is late."""
    return [_lateness_kept(impl.plan, h, obs) for h, obs in zip(histories, observed)]


def _lateness_kept(plan: StatefulPlan, history: History, obs: Observation) -> Outcome:
    if plan.lateness is None or not plan.delays:
        return Outcome(ok=True)
    for step in up_steps(obs):
        trial = read_step(history, obs, step, plan)
        if isinstance(trial, Outcome):
            return trial
        newest: int | None = None
        for batch in trial.done:
            floor = trial.marks.late(batch.id)
            for r in batch.records:
                late = is_late(plan, r.event_time, floor)
                if newest is not None and r.event_time > newest - plan.lateness and any(late):
                    message = (
                        f"record {r.data} (key {r.key!r}, event_time {r.event_time}) is {newest - r.event_time} ms "
                        f"behind the newest event time before batch {batch.id} ({newest}), within the promised "
                        f"lateness of {plan.lateness} ms, but late: the batch drops what is at or below "
                        f"{floor} (a delay of {plan.delay} ms keeps less than the promise)"
                    )
                    return failed_at(step, message, obs, StreamingLabel.OFFSET_METADATA)
            times = [r.event_time for r in batch.records]
            newest = max([*times, *([newest] if newest is not None else [])], default=None)
    return Outcome(ok=True)


def complete_windows_emitted(
    impl: Any, histories: Sequence[History], observed: Sequence[Observation]
) -> list[Outcome]:
    """Once E(N) of a committed batch reaches a window's end, that window's rows are in the result."""
    judged, outputs = _with_outputs(impl, histories, observed)
    return [_emitted(impl, obs, steps, outputs) for obs, steps in zip(observed, judged)]


def _emitted(impl: Any, obs: Observation, steps: Any, outputs: dict[Frame, Counter]) -> Outcome:
    if isinstance(steps, Outcome):
        return steps
    for trial, parts in steps:
        actual = Counter(dict(obs.get((trial.step, StreamingLabel.JOB_ROWS), frozenset())))
        completed = aggregate(impl.plan.window, trial.done, trial.marks).completed
        for part in parts:
            span = part.picks[0].span
            rows = rows_of(part.picks[0], outputs, impl.window_column)
            if span in completed and rows - actual:
                batch = completed[span]
                message = (
                    f"window [{span.start}, {span.end}) was complete in batch {batch} (E({batch}) = "
                    f"{trial.marks.eviction[batch]} >= its end), but after the batch committed the result "
                    f"lacks {', '.join(show_row(r) for r in sorted(rows - actual, key=repr))}"
                )
                return failed_at(trial.step, message, obs, StreamingLabel.JOB_ROWS)
    return Outcome(ok=True)


def _windows_only(impl: Any) -> str | None:
    plan = getattr(impl, "plan", None)
    if plan is None or plan.output_mode != OutputMode.APPEND:
        return "update mode: a window's row changes until it is evicted, none is final"
    if plan.window is None:
        return "the job aggregates no window"
    return None


def state_bounded(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """The operator's key holds event time under a watermark, and after the last committed batch N the state
    (read from the checkpoint) holds no entry whose bound is at or below E(N)."""
    plan: StatefulPlan = impl.plan
    if plan.bound is not Bound.NONE:
        return [_evicted(plan, h, obs) for h, obs in zip(histories, observed)]
    keys = ", ".join(plan.keys) or "nothing"
    why = "the job has no watermark" if not plan.delays else f"its key ({keys}) holds no event time"
    message = (
        f"state grows without bound: operator 0 ({plan.operator}) keeps every group forever, {why} "
        "(group by a window of event_time, or deduplicate on event_time or within the watermark)"
    )
    return [Outcome(ok=False, message=message, step=_first_batch_step(h)) for h in histories]


def _evicted(plan: StatefulPlan, history: History, obs: Observation) -> Outcome:
    final = len(history.actions)
    if (final, StreamingLabel.STATE) not in obs:
        return Outcome(ok=True)  # nothing committed, or the query was down at the end
    trial = read_step(history, obs, final, plan)
    if isinstance(trial, Outcome):
        return trial
    kept = [(batch, b, n) for batch, b, n in obs[(final, StreamingLabel.STATE)] if b is not None]
    stale = [(batch, b, n) for batch, b, n in kept if b <= trial.marks.eviction[batch]]
    if not stale:
        return Outcome(ok=True)
    batch = stale[0][0]
    message = (
        f"after batch {batch} the state of operator 0 ({plan.operator}) still holds "
        f"{sum(n for *_, n in stale)} entries bounded by {sorted(b for _, b, _ in stale)} ({plan.bound}), at or "
        f"below E({batch}) = {trial.marks.eviction[batch]}: nothing that is not late can update them, and "
        "they were not evicted"
    )
    return failed_at(final, message, obs, StreamingLabel.STATE)


def _first_batch_step(history: History) -> int:
    """The step whose batch first stores state: the first trigger or restart, else the final step."""
    names = (StreamingAction.TRIGGER, StreamingAction.RESTART)
    return next((i for i, a in enumerate(history.actions) if a.name in names), len(history.actions))


def _laws(judge: Callable[[History, Observation], Outcome]) -> Judge:
    return lambda impl, histories, observed: [judge(h, obs) for h, obs in zip(histories, observed)]


def all_laws(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """Every property's judge in turn: the first failure of each trial."""
    judges: list[Judge] = [
        exactly_once,
        lateness_kept,
        state_bounded,
        _laws(streaming.offset_log_is_remap),
        _laws(streaming.bounded_input_reliance),
    ]
    verdicts = [judge(impl, histories, observed) for judge in judges]
    return [next((o for o in outcomes if not o.ok), Outcome(ok=True)) for outcomes in zip(*verdicts)]


def _property(name: str, doc: str, judge: Judge, kill: bool = False, **more: Any) -> Property:
    return Property(
        name=name,
        doc=doc,
        draw=lambda source, domain: draw_stateful_history(source, domain, current_plan(), kill=kill),
        check=_check(judge),
        events=events,
        profiles=("thorough",) if kill else (),
        reference=more.pop("reference", Reference.MODEL),
        directed=directed(kill),
        **more,
    )


@attrs.frozen
class JobSuite(Suite):
    """A suite whose hard cases depend on the job under test (`current_plan`), and that checks a user's job
    (`--job`) with more trials than the default run's example (`under_job`)."""

    job_batched_cost: float = 160.0

    def required_in(self, domains: Sequence[str]) -> tuple[str, ...]:
        return required_events(current_plan())

    def under_job(self) -> Suite:
        """The suite as `--job` runs it: `job_batched_cost` (ci: 62 trials after the directed ones)."""
        return attrs.evolve(self, batched_cost=self.job_batched_cost)


SUITE = JobSuite(
    name="stateful",
    doc="A stateful, event-time job under crash trials: results, lateness, emission and state by the model's frontiers.",
    properties=(
        _property(
            "exactly_once",
            "After every step, read(spark) is transform over what the model keeps, per window, from the committed batches.",
            exactly_once,
        ),
        _property(
            "lateness_kept",
            "A record within the promised lateness of the newest event time before its batch is never late.",
            lateness_kept,
        ),
        _property(
            "complete_windows_emitted",
            "Once E reaches a window's end, its rows are in the result after the batch commits (append mode).",
            complete_windows_emitted,
            applies=_windows_only,
        ),
        _property(
            "state_bounded",
            "The operator's key holds event time, so its state is evicted: it never grows without bound.",
            state_bounded,
        ),
        _property(
            "offset_log_is_remap",
            "The offset log is a valid remap, its watermark and batch timestamp never go back.",
            _laws(streaming.offset_log_is_remap),
            reference=Reference.LAWS,
        ),
        _property(
            "bounded_input_reliance",
            "commit(end) never passes the durable frontier; upstream compaction never breaks a restart.",
            _laws(streaming.bounded_input_reliance),
            reference=Reference.LAWS,
        ),
        _property(
            "laws_under_sigkill",
            "Every law when a separate driver process is SIGKILLed at the crash points (thorough only).",
            all_laws,
            kill=True,
        ),
    ),
    default_impl="stateful-job:frontier_harness.streaming_job_example.windowed_counts:factory",
    required_events=required_events(EXAMPLE_PLAN),
    # The default run's example job: ci screens one wave (6 trials) after the directed ones; --job, 62.
    batched_cost=1667.0,
    job_batched_cost=160.0,
    serial_jobs=True,
    shrink_batch=TRIAL_WAVE,
    domains=("partitioned",),
    calls=("observe_stateful",),
)
