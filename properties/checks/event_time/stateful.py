"""The *stateful* suite: a user's stateful, event-time Structured Streaming job under crash trials, judged
by the model's frontiers (`frontier_harness.model.event_time.stateful`), never by Spark's streaming engine.

`check --suite stateful --job MODULE:FACTORY` (the protocol: `frontier_harness.properties.checks.streaming.job.StatefulJob`).
Histories come from `frontier_harness.properties.checks.event_time.strategies.stateful`, scaled to the
job's plan (its delay, window, promised lateness), which the suite carries (`JobSuite.plan`: the runner
gives it the plan of the job it runs, `for_implementation`), as it carries the hard cases that plan has
(`required_events`); each runs as a real query over keyed, timed records (`observe_stateful`), with crashes and
restarts as the streaming suite's. A stream-stream join job (`StatefulJoinJob`, its plan a `JoinPlan`) runs over
two sources and is judged by its own properties of the same names (`frontier_harness.properties.checks.event_time.join`).
After every step that left the query up, judged by:

- `exactly_once`: the offset log's watermarks are the model's E(N), and the job's `read(spark)` equals,
  as a multiset, the job's `transform` run as a batch job per window over the records the model keeps
  for it from the committed batches (`frontier_harness.properties.checks.event_time.oracles.stateful_rows`):
  every group in update mode, the windows complete by the last committed batch in append mode (a roll-up:
  each outer window over the records its inner windows kept). One
  oracle job per wave of trials. A failure names the rows missing, doubled or unexpected, with their
  window and batch.
- `lateness_kept`: a record with `event_time > M - lateness` (M the newest event time of the batches
  committed before its batch, `lateness` what the job promises) that the model drops as late is still
  counted in the job's rows (`oracles.promise`); a failure names the record, its window and its batch.
  Not applicable where the promise is within every watermark's delay (`exactly_once` implies it).
- `complete_windows_emitted` (append mode, a window): once E(N) of a committed batch reaches a window's
  end, that window's rows are in the result. Not applicable to an update-mode job.
- `state_bounded`: each operator's key holds event time (a window, or the watermarked column of a
  deduplication key; a chain's two operators each, a roll-up's two windows), so the state can be evicted;
  otherwise the state grows without bound. After every committed batch N the state read from the
  checkpoint (`state_store.bound_ms`, the validator's reader too) holds no entry bounded at or below E(N),
  nor one without a bound; a trial that committed a batch and shows no state fails.
- `crash_invisible` (a user's processor only: `transformWithStateInPandas`, `applyInPandasWithState`, whose
  output no model states): after every step that left the query up, `read(spark)` equals, as a multiset of
  rows, the same processor's `read(spark)` after the same batches run without any crash or restart, a run
  the harness makes itself once per history (`oracles.reference_run`); a failure names, per key, the rows
  held more or fewer times. Before that, every timer (or group timeout) the processor's state held after a
  batch is gone after the next once that batch's clock reached it (`oracles.timers_due`). The processor's
  hard cases are read from its state and timers after every committed batch (`processor_reached`). The
  properties above do not apply to a processor.
- `offset_log_is_remap` and `bounded_input_reliance`: the streaming suite's, the checkpoint's laws with
  the watermark and batch timestamp of `offsets/N` never going back.

Restarts are the streaming suite's (docs/streaming.md, "What a restart keeps"): every start of the query
in a Python process that never ran the job, and a run's first trials SIGKILL a driver with a JVM of its
own at each crash point; in the `thorough` profile `laws_under_sigkill` judges them all on histories whose
every crash is such a kill. The hard cases are counted from what each trial observed
(`frontier_harness.properties.checks.event_time.reached`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.model.event_time.session import sessionize
from frontier_harness.model.event_time.stateful import Bound, Span, StatefulPlan, Window
from frontier_harness.model.vocabulary.event_time import OutputMode, Prefix, StatefulOperator
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, StreamingLabel, Trigger
from frontier_harness.properties.checks.event_time.oracles import reference_run
from frontier_harness.properties.checks.event_time.oracles.promise import Promise, covered, implied, promises
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import (
    Frame,
    Mismatch,
    Part,
    Step,
    completed,
    expected_parts,
    frames_of,
    in_window,
    journaled,
    matched,
    read_step,
    rows_of,
)
from frontier_harness.properties.checks.event_time.processor_reached import (
    TIMER_AFTER_RESTART,
    TIMER_RERUN,
    processor_events,
    processor_reached,
)
from frontier_harness.properties.checks.event_time.reached import (
    AT_WATERMARK,
    BEHIND,
    COMPLETE,
    DUPLICATE,
    EXPIRY,
    FILTERED,
    FILTERED_AHEAD,
    IDLE,
    LATE,
    LATE_AND_KEPT,
    MERGED,
    PROMISE,
    REDELIVERY,
    REEMIT,
    ROLLED_UP_ACROSS,
    ROLLED_UP_AT_ONCE,
    SESSION_GAP,
    STATE_READ,
    reached,
)
from frontier_harness.properties.checks.event_time.strategies.stateful import (
    draw_processor_history,
    draw_stateful_history,
    processor_trigger,
    scripted,
)
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.checks.streaming.committed import failed_at, up_steps
from frontier_harness.properties.checks.streaming.strategies.streaming import (
    RERUN,
    RESTART_AFTER_COMPACTION,
    TWO_DIGITS,
    crashed,
)
from frontier_harness.properties.engine.history import History
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

TRIAL_WAVE = streaming.TRIAL_WAVE
SHOWN = 6  # rows named per kind in a message
# The example job's plan (`frontier_harness.streaming_job_example.windowed_counts`): the registered suite's,
# until it runs against a job of another (`JobSuite.for_implementation`).
EXAMPLE_PLAN = StatefulPlan(
    StatefulOperator.AGGREGATION, (5_000,), Window(10_000), ("key",), OutputMode.UPDATE, 5_000
)

CRASHES = tuple(crashed(p) for p in CrashPoint) + (RESTART_AFTER_COMPACTION, RERUN, *streaming.KILLED)
# Batches 0 to 10, each a copy of the first record (one group updated in every batch, at an event time the
# watermark never passes), then one far ahead that completes its window: the group's row changes in batch 9 and
# in batch 10, and is emitted after them in append mode.
TWO_DIGITS_SCRIPT = "ahead trigger " + "redelivery trigger " * 10 + "far trigger"
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
    STATE_READ: "ahead trigger",
    DUPLICATE: "ahead trigger duplicate trigger",
    MERGED: "merged trigger merged trigger",
    EXPIRY: "ahead trigger expiry trigger ahead trigger",
    SESSION_GAP: "ahead gap trigger",
    BEHIND: "ahead trigger far trigger behind trigger",
    FILTERED: "ahead far#dropped trigger ahead trigger",
    FILTERED_AHEAD: "ahead far#dropped trigger ahead trigger",
    ROLLED_UP_AT_ONCE: "ahead far trigger",
    # the first inner window of an outer one emitted a batch before the next inner window and the outer one
    ROLLED_UP_ACROSS: "outer trigger inner trigger delay trigger far trigger",
    TWO_DIGITS: TWO_DIGITS_SCRIPT,
}


# A user's processor's: one history a crash point (in the driver, and by SIGKILL), each reaching that crash, a
# timer registered before it firing after it (two records far ahead move the watermark past it) and state
# written before it changed after it; the crash after the offsets also after an upstream compaction. A plain
# restart (no crash) between a timer's registration and its firing is a history of its own: the shortest a
# processor that keeps its state in Python memory fails on.
PROCESSOR_SCRIPT = "ahead trigger ahead redelivery {crash} {compact}restart far trigger far trigger"
PLAIN_RESTART = "ahead trigger restart far trigger far trigger"
# A timer that fires in a batch `after_sink` crashes, under `availableNow` (a run ends without the batch that
# only moves the watermark): the first run's records put the watermark past the first record's timer (one
# unit past a window's end: a group's timeout fires only below the watermark), which fires in the next run's
# batch, with a record of another key (a call with data for its own group would set its timeout again); the
# crash after its write makes Spark run it again.
TIMER_RERUN_SCRIPT = f"ahead past trigger ahead#new crash:{CrashPoint.AFTER_SINK} restart"


def processor_directed(plan: StatefulPlan, kill: bool = False) -> dict[str, Callable[[Any, str], History]]:
    """For each hard case a processor requires, a draw of a small history that reaches it
    (`PROCESSOR_SCRIPT`, the crash points in turn; `TWO_DIGITS_SCRIPT`)."""

    trigger = processor_trigger(plan)

    def draw(point: str, killed: bool) -> Callable[[Any, str], History]:
        compact = "compact " if point == CrashPoint.AFTER_OFFSETS else ""
        script = PROCESSOR_SCRIPT.format(crash=f"{'kill' if killed else 'crash'}:{point}", compact=compact)
        return scripted_draw(plan, script, trigger)

    found = {crashed(p): draw(p, kill) for p in CrashPoint}
    found |= {f"{crashed(p)} (SIGKILL)": draw(p, True) for p in CrashPoint}
    found |= {
        RERUN: found[crashed(CrashPoint.AFTER_SINK)],
        RESTART_AFTER_COMPACTION: found[crashed(CrashPoint.AFTER_OFFSETS)],
        REDELIVERY: found[crashed(CrashPoint.BEFORE_OFFSETS)],
    }
    ending = Trigger.ONCE if trigger == Trigger.ONCE else Trigger.AVAILABLE_NOW
    by_event = {
        TIMER_AFTER_RESTART: scripted_draw(plan, PLAIN_RESTART, trigger),
        TIMER_RERUN: scripted_draw(plan, TIMER_RERUN_SCRIPT, ending),
    }
    killed = found[f"{crashed(CrashPoint.AFTER_SINK)} (SIGKILL)"]
    found |= {e: by_event.get(e, killed) for e in processor_events(plan.time_mode)}
    return found | {TWO_DIGITS: scripted_draw(plan, TWO_DIGITS_SCRIPT, trigger)}


def scripted_draw(
    plan: StatefulPlan, script: str, trigger: str = Trigger.PROCESSING_TIME
) -> Callable[[Any, str], History]:
    """A draw of the history `script` says, scaled to `plan` (`strategies.stateful.scripted`)."""
    return lambda source, domain: scripted(source, domain, plan, script, trigger)


def directed(plan: StatefulPlan, kill: bool = False) -> dict[str, Callable[[Any, str], History]]:
    """For each hard case a job may require, a draw of a small history that reaches it (`SCRIPTS`, scaled to
    `plan`); a batch that emitted a window re-run after a crash needs `availableNow`."""
    if plan.operator == StatefulOperator.PROCESSOR:
        return processor_directed(plan, kill)

    def draw(script: str, trigger: str = Trigger.PROCESSING_TIME) -> Callable[[Any, str], History]:
        script = script.replace("crash:", "kill:") if kill else script
        return lambda source, domain: scripted(source, domain, plan, script, trigger)

    reemit = f"ahead far trigger ahead crash:{CrashPoint.AFTER_SINK} restart"
    return {
        **{event: draw(script) for event, script in SCRIPTS.items()},
        REEMIT: draw(reemit, Trigger.AVAILABLE_NOW),
    }


def required_events(plan: StatefulPlan) -> tuple[str, ...]:
    """The hard cases a job's histories must reach: a job without a watermark has no late record.

    >>> required_events(EXAMPLE_PLAN)[-4:]
    ('a record late for a window it falls in', 'a record exactly at the watermark', 'a partition idle while the watermark moves', 'a window complete (emitted, evicted)')
    """
    if plan.operator == StatefulOperator.PROCESSOR:
        return (*CRASHES, REDELIVERY, TWO_DIGITS, *processor_events(plan.time_mode))
    found = [*CRASHES, REDELIVERY, STATE_READ, TWO_DIGITS]
    if plan.delays:
        found += [LATE, AT_WATERMARK, IDLE]
    if plan.window is not None and plan.window.slide < plan.window.duration and plan.delays:
        found.append(LATE_AND_KEPT)
    if plan.bound in (Bound.WINDOW_END, Bound.SESSION_END):
        found.append(COMPLETE)
    if plan.lateness is not None and plan.delays and plan.lateness > plan.delay:
        found.append(PROMISE)
    if plan.bound in (Bound.WINDOW_END, Bound.SESSION_END) and plan.output_mode == OutputMode.APPEND:
        found.append(REEMIT)
    if plan.within_watermark and plan.delays:
        found += [DUPLICATE, EXPIRY]
    if plan.merged_keys:
        found.append(MERGED)
    if plan.gap is not None:
        found += [SESSION_GAP, *([BEHIND] if plan.delays else [])]
    if plan.prefix is not None:
        found += [FILTERED, *([FILTERED_AHEAD] if plan.prefix == Prefix.WATERMARK and plan.delays else [])]
    if plan.inner_window is not None and plan.delays:
        found += [ROLLED_UP_AT_ONCE, ROLLED_UP_ACROSS]
    return tuple(found)


Judge = Callable[[Any, Sequence[History], Sequence[Observation]], list[Outcome]]


def check_in_waves(
    judge: Judge, reach: Callable[[Any, History, Observation], list[str]] | None = None
) -> Callable[[Any, Sequence[History]], Trials]:
    """A wave of trials at a time (one oracle job each), until a wave fails: the rest are not run. Each
    outcome carries the hard cases its trial reached (`reached`, or `reach(plan, history, observation)`)."""
    reach = reach or (
        lambda plan, history, obs: (
            reached(plan, history, obs, CRASHES)
            + (processor_reached(history, obs, plan.time_mode) if _is_processor(plan) else [])
        )
    )

    def check(impl: Any, histories: Sequence[History]) -> Trials:
        def judged(run: Sequence[History]) -> list[Outcome]:
            observed = observations(impl, "observe_stateful", run)
            return [
                attrs.evolve(o, reached=tuple(reach(impl.plan, h, obs)))
                for o, h, obs in zip(judge(impl, run, observed), run, observed)
            ]

        def refused(history: History) -> Outcome | None:
            return wrong_trigger(impl.plan, history) or streaming.unknown_partition(history)

        return in_waves(histories, TRIAL_WAVE, lambda wave: unless_refused(wave, refused, judged))

    return check


def _is_processor(plan: Any) -> bool:
    """Whether `plan` is a user's processor's (a join's plan, `JoinPlan`, has no operator)."""
    return getattr(plan, "operator", None) == StatefulOperator.PROCESSOR


def wrong_trigger(plan: StatefulPlan, history: History) -> Outcome | None:
    """A processor in processing time runs only under `once` (`processor_trigger`): Spark never ends a drain of
    it under a processing-time trigger, nor an `availableNow` start. A history that runs it under another
    (a shrink's candidate without its `query` action) is refused unrun, a generator/model disagreement.

    >>> plan = StatefulPlan("processor", (), None, ("key",), time_mode="processing_time")
    >>> wrong_trigger(plan, History("partitioned", ())).rejected
    True
    >>> from frontier_harness.model.event_time.join import JoinPlan, JoinType, StreamJoin, TimeRange
    >>> join = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000)), (5_000, 5_000))
    >>> wrong_trigger(join, History("partitioned", ())) is None
    True
    """
    if not _is_processor(plan) or processor_trigger(plan) != Trigger.ONCE:
        return None  # a join's plan (`JoinPlan`) has no operator: its histories run under any trigger
    trigger = reference_run.trigger_of(history)
    if trigger == Trigger.ONCE:
        return None
    return Outcome(
        ok=False,
        rejected=True,
        disagreement=True,
        message=(
            f"generator/model disagreement: a processor whose timers fire by the batch clock runs under "
            f"{Trigger.ONCE!r} only, this history under {trigger!r} (Spark would never end its drain)"
        ),
    )


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
    where = {
        row: part.what
        for part in parts
        for pick in part.picks
        for row in rows_of(pick, outputs, window_column)
    }
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
    """A record within the promised lateness of the newest event time before its batch is counted in the
    job's rows (`oracles.promise`), judged from what the job wrote after every up step: one oracle job for
    every frame the wave's promises read."""
    judged = [_promised(impl.plan, h, obs) for h, obs in zip(histories, observed)]
    frames = sorted(
        {
            pick.frame
            for steps in judged
            if isinstance(steps, list)
            for _, promised in steps
            for promise in promised
            for pick in promise.picks
        }
    )
    outputs = dict(zip(frames, impl.stateful_outputs(frames))) if frames else {}
    return [_kept(impl, obs, steps, outputs) for obs, steps in zip(observed, judged)]


def _promised(plan: StatefulPlan, history: History, obs: Observation) -> list[tuple[Step, list]] | Outcome:
    found = []
    for step in up_steps(obs):
        trial = read_step(history, obs, step, plan)
        if isinstance(trial, Outcome):
            return trial
        found.append((trial, promises(plan, trial)))
    return found


def _kept(impl: Any, obs: Observation, steps: Any, outputs: dict[Frame, Counter]) -> Outcome:
    if isinstance(steps, Outcome):
        return steps
    plan: StatefulPlan = impl.plan
    for trial, promised in steps:
        actual = Counter(dict(obs.get((trial.step, StreamingLabel.JOB_ROWS), frozenset())))
        for promise in promised:
            options = [rows_of(pick, outputs, impl.window_column) for pick in promise.picks]
            held = in_window(actual, promise.span, impl.window_column)
            counted = held == options[0] if promise.span is not None else any(not o - actual for o in options)
            if not counted:
                return failed_at(
                    trial.step, _broken(plan, trial, promise, held, options[0]), obs, StreamingLabel.JOB_ROWS
                )
    return Outcome(ok=True)


def _broken(plan: StatefulPlan, trial: Step, promise: Promise, held: Counter, promised: Counter) -> str:
    record, batch = promise.records[0]
    newest = covered(plan, trial.done, record, batch)
    assert newest is not None, "a promise holds only records the promise covers"
    behind = f"{newest - record.event_time} ms behind the newest event time before it ({newest})"
    where = f"window [{promise.span.start}, {promise.span.end})" if promise.span is not None else "the result"
    rows = ", ".join(show_row(r) for r in sorted(held, key=repr)) or "no row"
    wanted = ", ".join(show_row(r) for r in sorted(promised, key=repr)) or "no row"
    return (
        f"record {record.data} (key {record.key!r}, event_time {record.event_time}) of batch {batch} is {behind}, "
        f"within the promised lateness of {plan.lateness} ms, but the job's rows do not count it in {where}: "
        f"they hold {rows}; counting it, {wanted} (its watermark's delay of {plan.delay} ms drops what is at "
        f"or below {trial.marks.late(batch)} in batch {batch})"
    )


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
        completed = _completed(impl.plan, trial)
        for part in parts:
            span = part.picks[0].span
            options = [rows_of(pick, outputs, impl.window_column) for pick in part.picks]
            if part.unjudged or part.optional or any(not rows - actual for rows in options):
                continue
            rows = options[0]
            if span in completed:
                batch = completed[span]
                message = (
                    f"window [{span.start}, {span.end}) was complete in batch {batch} (E({batch}) = "
                    f"{trial.marks.eviction[batch]} >= its end), but after the batch committed the result "
                    f"lacks {', '.join(show_row(r) for r in sorted(rows - actual, key=repr))}"
                )
                return failed_at(trial.step, message, obs, StreamingLabel.JOB_ROWS)
    return Outcome(ok=True)


def _completed(plan: StatefulPlan, trial: Step) -> dict[Span, int]:
    """Each window (or session) complete in the committed batches, and the batch it was complete in."""
    if plan.gap is not None:
        emitted = sessionize(plan.gap, trial.done, trial.marks, plan.keys).emitted
        return {s.span: s.batch for s in emitted if s.batch is not None}
    return completed(plan, trial.done, trial.marks)


def _windows_only(impl: Any) -> str | None:
    plan = getattr(impl, "plan", None)
    if plan is None or plan.output_mode != OutputMode.APPEND:
        return "update mode: a window's row changes until it is evicted, none is final"
    if plan.window is None and plan.gap is None:
        return "the job aggregates no window"
    return None


def state_bounded(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """Each operator's key holds event time under a watermark, and after every committed batch N each
    operator's state (read from the checkpoint) holds no entry whose bound is at or below E(N), nor one
    without a bound."""
    plan: StatefulPlan = impl.plan
    message = _grows(plan)
    if message is None:
        return [_evicted(plan, h, obs) for h, obs in zip(histories, observed)]
    return [Outcome(ok=False, message=message, step=_first_batch_step(h)) for h in histories]


def _grows(plan: StatefulPlan) -> str | None:
    """Which operator keeps every group forever, and why, or None (operators by Spark's ids, top down:
    `_operators`)."""
    for op, (name, keys, bound) in enumerate(_operators(plan)):
        if bound is Bound.NONE:
            shown = ", ".join(keys) or "nothing"
            why = "the job has no watermark" if not plan.delays else f"its key ({shown}) holds no event time"
            return (
                f"state grows without bound: operator {op} ({name}) keeps every group forever, {why} "
                "(group by a window of event_time, or deduplicate on event_time or within the watermark)"
            )
    return None


def _operators(plan: StatefulPlan) -> list[tuple[str, tuple[str, ...], Bound]]:
    """The plan's stateful operators by Spark's ids, top down (an aggregation over a deduplication or over a
    window aggregation is operator 0, the one below it operator 1): each one's name, keys and the bound of
    its state's entries."""
    first = plan.deduplication
    found = [(plan.operator, plan.keys, plan.bound)]
    if plan.inner_window is not None:  # its state's entries are bounded by their window's end, as the outer's
        return [*found, (StatefulOperator.AGGREGATION, plan.keys, plan.bound)]
    return found + ([(first.operator, first.keys, first.bound(plan.delays))] if first is not None else [])


def _evicted(plan: StatefulPlan, history: History, obs: Observation) -> Outcome:
    """Every committed batch's state of every operator against its E(N) (entries `(batch, bound, count,
    operator)`); a trial that committed a batch and shows no state of an operator fails (nothing says it
    was evicted), one that committed none shows nothing either way."""
    final = len(history.actions)
    trial = read_step(history, obs, final, plan)
    if isinstance(trial, Outcome) or not trial.committed:
        return trial if isinstance(trial, Outcome) else Outcome(ok=True)
    entries = sorted(
        obs.get((final, StreamingLabel.STATE), ()), key=lambda e: (e[0], e[1] is not None, e[1] or 0)
    )
    for op, (name, _, bound) in enumerate(_operators(plan)):
        held = [(at, b, n) for at, b, n, o in entries if o == op]
        if not held:
            unread = (
                f"no state was read after batches {sorted(trial.committed)}: the checkpoint has no state store of "
                f"operator {op} ({name}), so nothing shows that it evicts"
            )
            return failed_at(final, unread, obs, StreamingLabel.COMMITS)
        stale = _stale(trial, f"operator {op} ({name})", bound, held)
        if stale is not None:
            return failed_at(final, stale, obs, StreamingLabel.STATE)
    return Outcome(ok=True)


def _stale(trial: Step, operator: str, bound: Bound, entries: Sequence[tuple]) -> str | None:
    """What an operator's state holds after a committed batch that it should not: an entry with no bound,
    or one bounded at or below the batch's E; None when nothing."""
    for batch in sorted(trial.committed):
        after = [(b, n) for at, b, n in entries if at == batch]
        unbounded = sum(n for b, n in after if b is None)
        if unbounded:
            return (
                f"after batch {batch} the state of {operator} holds {unbounded} entries with no event-time bound, "
                f"where the plan bounds each by {bound}: nothing evicts them"
            )
        mark = trial.marks.eviction[batch]
        stale = [(b, n) for b, n in after if b is not None and b <= mark]
        if stale:
            return (
                f"after batch {batch} the state of {operator} still holds {sum(n for _, n in stale)} entries "
                f"bounded by {sorted(b for b, _ in stale)} ({bound}), at or below E({batch}) = {mark}: nothing "
                "that is not late can update them, and they were not evicted"
            )
    return None


def _first_batch_step(history: History) -> int:
    """The step whose batch first stores state: the first trigger or restart, else the final step."""
    names = (StreamingAction.TRIGGER, StreamingAction.RESTART)
    return next((i for i, a in enumerate(history.actions) if a.name in names), len(history.actions))


def crash_invisible(
    impl: Any, histories: Sequence[History], observed: Sequence[Observation]
) -> list[Outcome]:
    """A processor's `read(spark)` after every up step equals its run over the same batches without a crash
    (`oracles.reference_run`): one reference run per history, made by the implementation, for the wave."""
    trials = [reference_run.trial_of(h, obs, impl.plan) for h, obs in zip(histories, observed)]
    references = {
        i: reference_run.reference_of(h.domain, t.batches, reference_run.journaled_offsets(h, obs))
        for i, (h, obs, t) in enumerate(zip(histories, observed, trials))
        if not isinstance(t, Outcome)
    }
    runs = dict(zip(references, impl.reference_runs(list(references.values())))) if references else {}
    return [
        t
        if isinstance(t, Outcome)
        else reference_run.crash_invisible(h, obs, t, references[i], runs[i], impl.plan.time_mode)
        for i, (h, obs, t) in enumerate(zip(histories, observed, trials))
    ]


def _processor(impl: Any) -> str | None:
    """Why `crash_invisible` does not apply: the job is no user's processor (the model states its output)."""
    plan = getattr(impl, "plan", None)
    if plan is None or plan.operator != StatefulOperator.PROCESSOR:
        return "the job is no user's processor: the model states its rows (exactly_once)"
    return None


def _not_processor(applies: Callable[[Any], str | None] | None = None) -> Callable[[Any], str | None]:
    """Why a property of the model's operators does not apply: the job is a user's processor, whose rows
    no model states (`crash_invisible` judges them); else what `applies` says."""

    def check(impl: Any) -> str | None:
        if _processor(impl) is None:
            return "a user's processor: no model states its rows, crash_invisible judges them"
        return applies(impl) if applies is not None else None

    return check


def laws(judge: Callable[[History, Observation], Outcome]) -> Judge:
    """A law of the streaming suite as a judge of a wave of trials."""
    return lambda impl, histories, observed: [judge(h, obs) for h, obs in zip(histories, observed)]


def all_laws(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """Every property's judge that applies to the job, in turn: the first failure of each trial."""
    if _processor(impl) is None:
        processor: list[Judge] = [
            crash_invisible,
            laws(streaming.offset_log_is_remap),
            laws(streaming.bounded_input_reliance),
        ]
        verdicts = [judge(impl, histories, observed) for judge in processor]
        return [next((o for o in outcomes if not o.ok), Outcome(ok=True)) for outcomes in zip(*verdicts)]
    judges: list[Judge] = [
        exactly_once,
        *([lateness_kept] if implied(impl.plan) is None else []),
        *([complete_windows_emitted] if _windows_only(impl) is None else []),
        state_bounded,
        laws(streaming.offset_log_is_remap),
        laws(streaming.bounded_input_reliance),
    ]
    verdicts = [judge(impl, histories, observed) for judge in judges]
    return [next((o for o in outcomes if not o.ok), Outcome(ok=True)) for outcomes in zip(*verdicts)]


def _property(
    name: str, doc: str, judge: Judge, plan: StatefulPlan, kill: bool = False, **more: Any
) -> Property:
    draw = draw_processor_history if plan.operator == StatefulOperator.PROCESSOR else draw_stateful_history
    return Property(
        name=name,
        doc=doc,
        draw=HistoryDraw(draw, (plan,), kill),
        check=check_in_waves(judge),  # its outcomes carry what each trial reached
        profiles=("thorough",) if kill else (),
        reference=more.pop("reference", Reference.MODEL),
        directed=directed(plan, kill),
        **more,
    )


def properties(plan: StatefulPlan) -> tuple[Property, ...]:
    """The suite's properties, their histories (drawn and directed) scaled to `plan`; `state_bounded` first
    when the plan alone breaks it (`decided_first`)."""
    return decided_first(_grows(plan), _properties(plan))


def decided_first(grows: str | None, found: tuple[Property, ...]) -> tuple[Property, ...]:
    """`found` in its order, or with `state_bounded` first when the job's plan alone breaks it (`grows` says
    why): its lane runs first and prints that failure at its first trial, not after the other properties'
    trials (a run without `--fail-fast` goes on to the others after it).

    >>> names = lambda ps: [p.name for p in ps]
    >>> names(decided_first(None, SUITE.properties))[:4]
    ['exactly_once', 'lateness_kept', 'complete_windows_emitted', 'state_bounded']
    >>> names(decided_first("state grows without bound", SUITE.properties))[:2]
    ['state_bounded', 'exactly_once']
    """
    if grows is None:
        return found
    return (
        *(p for p in found if p.name == "state_bounded"),
        *(p for p in found if p.name != "state_bounded"),
    )


def _properties(plan: StatefulPlan) -> tuple[Property, ...]:
    """The suite's properties in the order a job whose plan decides none of them runs them."""
    return (
        _property(
            "exactly_once",
            "After every step, read(spark) is transform over what the model keeps, per window, from the committed batches.",
            exactly_once,
            plan,
            applies=_not_processor(),
        ),
        _property(
            "lateness_kept",
            "A record within the promised lateness of the newest event time before its batch is counted in "
            "the job's rows.",
            lateness_kept,
            plan,
            applies=_not_processor(lambda impl: implied(impl.plan)),
        ),
        _property(
            "complete_windows_emitted",
            "Once E reaches a window's end, its rows are in the result after the batch commits (append mode).",
            complete_windows_emitted,
            plan,
            applies=_not_processor(_windows_only),
        ),
        _property(
            "state_bounded",
            "The operator's key holds event time, so its state is evicted: it never grows without bound.",
            state_bounded,
            plan,
            applies=_not_processor(),
        ),
        _property(
            "crash_invisible",
            "A user's processor: its timers fire once due, and after every step read(spark) equals its run over "
            "the same batches without a crash or restart.",
            crash_invisible,
            plan,
            applies=_processor,
        ),
        _property(
            "offset_log_is_remap",
            "The offset log is a valid remap, its watermark and batch timestamp never go back.",
            laws(streaming.offset_log_is_remap),
            plan,
            reference=Reference.LAWS,
        ),
        _property(
            "bounded_input_reliance",
            "commit(end) never passes the durable frontier; upstream compaction never breaks a restart.",
            laws(streaming.bounded_input_reliance),
            plan,
            reference=Reference.LAWS,
        ),
        _property(
            "laws_under_sigkill",
            "Every law when a separate driver process is SIGKILLed at the crash points (thorough only).",
            all_laws,
            plan,
            kill=True,
        ),
    )


@attrs.frozen
class JobSuite(Suite):
    """A suite whose histories and hard cases depend on the job under test: it carries the job's `plan`, its
    properties' histories are scaled to it and `required_events` are its (`scaled_to`); the runner gives it
    the plan of the job it runs (`for_implementation`). It checks a user's job (`--job`) with more trials than
    the default run's example (`under_job`).

    >>> other = attrs.evolve(EXAMPLE_PLAN, output_mode=OutputMode.APPEND)
    >>> SUITE.plan == EXAMPLE_PLAN, REEMIT in SUITE.required_events, REEMIT in SUITE.scaled_to(other).required_events
    (True, False, True)
    """

    plan: StatefulPlan = EXAMPLE_PLAN
    job_batched_cost: float = 160.0
    # Other kinds of plan, each with the module of its properties (`properties(plan)`,
    # `required_events(plan)`): a stream-stream join's (`JoinPlan`: `event_time.join`, given in registry.py,
    # which imports both: join's properties reuse this module's laws).
    plan_kinds: tuple[tuple[type, Any], ...] = ()

    def for_implementation(self, impl: Any) -> Suite:
        """Scaled to the plan of the job `impl` runs (`impl.plan`), if it has one and it differs."""
        plan = getattr(impl, "plan", None)
        return self if plan is None or plan == self.plan else self.scaled_to(plan)

    def scaled_to(self, plan: StatefulPlan) -> JobSuite:
        """This suite (the properties it holds, by name) with `plan`'s histories and hard cases."""
        names = {p.name for p in self.properties}
        kept = tuple(p for p in self.properties_of(plan) if p.name in names)
        return attrs.evolve(self, plan=plan, properties=kept, required_events=self.events_of(plan))

    def properties_of(self, plan: Any) -> tuple[Property, ...]:
        """`plan`'s properties: a `StatefulPlan`'s, or those of its kind's module (`plan_kinds`)."""
        kind = dict(self.plan_kinds).get(type(plan))
        return kind.properties(plan) if kind is not None else properties(plan)

    def events_of(self, plan: Any) -> tuple[str, ...]:
        kind = dict(self.plan_kinds).get(type(plan))
        return kind.required_events(plan) if kind is not None else required_events(plan)

    def under_job(self) -> Suite:
        """The suite as `--job` runs it: `job_batched_cost` (ci: 62 trials after the directed ones)."""
        return attrs.evolve(self, batched_cost=self.job_batched_cost)


SUITE = JobSuite(
    name="stateful",
    doc="A stateful, event-time job under crash trials: results, lateness, emission and state by the model's frontiers.",
    properties=properties(EXAMPLE_PLAN),
    default_impl="stateful-job:frontier_harness.streaming_job_example.windowed_counts:factory",
    plan=EXAMPLE_PLAN,
    required_events=required_events(EXAMPLE_PLAN),
    # The default run's example job: ci screens one wave (6 trials) after the directed ones; --job, 62.
    batched_cost=1667.0,
    job_batched_cost=160.0,
    serial_jobs=True,
    shrink_batch=TRIAL_WAVE,
    domains=("partitioned",),
    calls=("observe_stateful",),
)
