"""The *upgrade* suite, the dynamic half of `upgrade`: a stateful job's query under crash trials, switched
at a drawn point to a changed job that restarts on its checkpoint, judged by the model.

`check --suite upgrade --job OLD --upgrade-to NEW`. Histories are the stateful suite's, scaled to the new
job's plan, each with one `restart {upgrade}` (`strategies.upgrade`: after a clean stop or a crash). Each
runs as a real query (`observe_upgrade`: the old job, then the new one from the switch on), judged by
`upgrade_as_predicted` against the static verdict of the two plans (`frontier_harness.model.upgrade`):

- **restart fails**: once the new job has run a batch, the query failed with the error the verdict names
  (its error class), and was down;
- **safe** or **restarts, results change**: after every step from the switch on that left the query up,
  the new job's `read(spark)` equals, as a multiset, the rows the model says the upgrade makes
  (`oracles.switch_rows`): the old job's transform over the groups held before the switch only, the new
  job's over those after, and for the groups held on both sides (those the verdict names) the rule of the
  change's `Mix`: the new job's over all their records (safe; a key computed otherwise, the old records
  those its old key filed under the value the new key meets: the groups no new value meets orphaned) or
  the two added (an additive aggregate replaced). A failure names the switch batch, the window and the row.

Hard cases are counted from what each trial showed (`reached`: a crash or kill seen before the switch,
the new job's commits after the old job's, a window group the observed batches put on both sides, the
predicted failure seen), never from the history; an upgrade predicted to fail its restart requires the
cases its trials can show (`EVENTS_WHEN_RESTART_FAILS`).

The dynamic half judges window aggregations whose window and delay the upgrade keeps; the static half
(`upgrade`) judges every change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from frontier_harness.model.event_time.stateful import StatefulPlan
from frontier_harness.model.upgrade.switch import Mix
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, StreamingLabel
from frontier_harness.model.vocabulary.upgrade import Verdict
from frontier_harness.properties.checks.event_time import stateful
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import read_step
from frontier_harness.properties.checks.event_time.strategies.stateful import Tracker
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.checks.streaming.committed import failed_at, observed_steps, up_steps
from frontier_harness.properties.checks.upgrade.oracles.switch_rows import (
    NEW,
    OLD,
    expected_groups,
    expected_rows,
    frames,
    state_keys_of,
    switch_batch,
)
from frontier_harness.properties.checks.upgrade.strategies.upgrade import (
    draw_upgrade_history,
    held_across,
    scripted_upgrade,
    switch_step,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import (
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    observations,
)
from frontier_harness.properties.engine.trials import Trials, in_waves, unless_refused

TRIAL_WAVE = stateful.TRIAL_WAVE
SHOWN = 6
SWITCH_CLEAN = "the new job took over after a clean stop"
SWITCH_CRASH = "the new job took over after a crash"
RAN_AFTER = "the new job ran a batch after the old one ran one"
HELD_ACROSS = "a window group held on both sides of the switch"
FAILED_AS_PREDICTED = "the new job's restart failed as predicted, on a checkpoint the old job committed to"
EVENTS = (SWITCH_CLEAN, SWITCH_CRASH, RAN_AFTER, HELD_ACROSS)
# An upgrade whose restart fails runs no batch of the new job: its trials can show only how the old job
# stopped and the predicted failure.
EVENTS_WHEN_RESTART_FAILS = (SWITCH_CLEAN, SWITCH_CRASH, FAILED_AS_PREDICTED)
# Small histories that reach each hard case (`strategies.upgrade.scripted_upgrade`, and `held_across`), checked
# first.
SCRIPTS = {
    SWITCH_CLEAN: "ahead trigger upgrade ahead trigger",
    SWITCH_CRASH: f"ahead trigger ahead crash:{CrashPoint.AFTER_SINK} upgrade ahead trigger",
    RAN_AFTER: "ahead trigger upgrade ahead trigger",
    FAILED_AS_PREDICTED: "ahead trigger upgrade ahead trigger",
}


def aimed_at(plan: StatefulPlan, history: History) -> list[str]:
    """The hard cases `history` is drawn to reach under the new job's `plan`, as the generator's `Tracker`
    follows the watermark: the records a batch ran before the switch (the old job's) and those produced
    after it. The suite counts what each trial showed (`reached`), never this."""
    switch = switch_step(history)
    if switch is None:
        return []
    tracker, found = Tracker(plan), set()
    before: list[tuple[tuple, int]] = []  # (group, event time) of each record a batch ran before the switch
    waiting: list[tuple[tuple, int]] = []  # those produced, not yet run
    for i, action in enumerate(history.actions):
        if i == switch:
            found.add(SWITCH_CRASH if tracker.down else SWITCH_CLEAN)
        if action.name == StreamingAction.PRODUCE:
            group = tuple(action.args[k] for k in plan.keys)  # the plan's keys are the records' columns
            waiting.append((group, action.args[IngestionArg.EVENT_TIME]))
        had = bool(tracker.pending)
        mark = tracker.mark
        tracker.step(action)
        if had and not tracker.pending:  # the waiting records ran in a batch
            found |= _ran(plan, mark, before, waiting) if i >= switch else set()
            before += waiting if i < switch else []
            waiting = []
    found |= _ran(plan, tracker.mark, before, waiting)  # the final step runs what is left
    return sorted(found | ({FAILED_AS_PREDICTED} if RAN_AFTER in found else set()))  # where a restart fails


def _ran(plan: StatefulPlan, mark: int, before: Sequence[tuple[tuple, int]], records: Sequence) -> set[str]:
    """The hard cases of records the new job runs in a batch, after the old job ran `before`."""
    if not before or not records:
        return set()
    return {RAN_AFTER} | (
        {HELD_ACROSS} if any(_held_across(plan, mark, before, r) for r in records) else set()
    )


def _held_across(
    plan: StatefulPlan, mark: int, before: Sequence[tuple[tuple, int]], record: tuple[tuple, int]
) -> bool:
    """Whether a record the new job runs (its group's key values and event time) falls, not late, in a window
    a record of the same group left in state before the switch."""
    if plan.window is None:
        return False
    group, time = record
    spans = {s for s in plan.window.containing(time) if s.end > mark}
    return any(g == group and spans & set(plan.window.containing(t)) for g, t in before)


def directed(plan: StatefulPlan) -> dict[str, Any]:
    """For each hard case a draw of a small history that reaches it, scaled to the new job's `plan`."""
    drawn = {
        event: (lambda source, domain, script=script: scripted_upgrade(source, domain, plan, script))
        for event, script in SCRIPTS.items()
    }
    return {**drawn, HELD_ACROSS: lambda source, domain: held_across(source, domain, plan)}


def _check(impl: Any, histories: Sequence[History]) -> Trials:
    """A wave of trials at a time (one oracle job each), until a wave fails: the rest are not run."""

    def judged(run: Sequence[History]) -> list[Outcome]:
        return upgrade_as_predicted(impl, run, observations(impl, "observe_upgrade", run))

    return in_waves(
        histories, TRIAL_WAVE, lambda wave: unless_refused(wave, streaming.unknown_partition, judged)
    )


def upgrade_as_predicted(
    impl: Any, histories: Sequence[History], observed: Sequence[Observation]
) -> list[Outcome]:
    """Each trial after its switch is what the static verdict predicts (see the module docstring)."""
    comparison = impl.comparison
    if comparison.outcome() is Verdict.RESTART_FAILS:
        failed = [_failed_as_predicted(comparison.error(), h, obs) for h, obs in zip(histories, observed)]
        return [_with_reached(o, h, obs, None) for o, h, obs in zip(failed, histories, observed)]
    judged = [_steps(impl, h, obs) for h, obs in zip(histories, observed)]
    groups = [g for steps in judged if not isinstance(steps, Outcome) for _, gs in steps[1] for g in gs]
    outputs: dict[str, dict] = {OLD: {}, NEW: {}}
    for job, call in ((OLD, impl.old_outputs), (NEW, impl.stateful_outputs)):
        wanted = frames(groups, job)
        outputs[job] = dict(zip(wanted, call(wanted))) if wanted else {}
    return [
        _with_reached(_as_predicted(impl, obs, steps, outputs), h, obs, steps)
        for h, obs, steps in zip(histories, observed, judged)
    ]


def _with_reached(outcome: Outcome, history: History, obs: Observation, judged: Any) -> Outcome:
    """`outcome`, carrying the hard cases its trial showed (and those its judge saw, `outcome.reached`)."""
    found = set(outcome.reached or ()) | reached(history, obs, judged)
    return attrs.evolve(outcome, reached=tuple(sorted(found)))


def reached(history: History, obs: Observation, judged: Any) -> set[str]:
    """The hard cases the trial showed, never the history: how the old job stopped (a crash or a kill seen
    before the switch and the query down at it, or the query up), a batch the new job committed after
    the old job committed one, a window group the observed batches put on both sides of the switch
    (`judged`: the steps `_steps` read, None when the restart fails), or the predicted failure seen on a
    checkpoint the old job committed to (`FAILED_AS_PREDICTED`: the trial's outcome says so)."""
    switch = switch_step(history)
    before = [s for s in observed_steps(obs) if switch is not None and s < switch]
    if switch is None or not before:
        return set()
    first, last = switch_batch(obs, switch), before[-1]
    crashed = any(
        (s, label) in obs for s in before for label in (StreamingLabel.CRASH, StreamingLabel.KILLED)
    )
    down = (last, StreamingLabel.DOWN) in obs
    found = {SWITCH_CRASH} if down and crashed else set() if down else {SWITCH_CLEAN}
    after = [s for s in observed_steps(obs) if s >= switch]
    if first > 0 and any(b >= first for s in after for b in obs[(s, StreamingLabel.COMMITS)]):
        found.add(RAN_AFTER)
    if judged is not None and not isinstance(judged, Outcome):
        found |= {HELD_ACROSS} if any(g.named for _, gs in judged[1] for g in gs) else set()
    return found


def _failed_as_predicted(error: str | None, history: History, obs: Observation) -> Outcome:
    """The new job's restart failed with the predicted error, or ran no batch; where the old job committed
    nothing, the new one may also start the checkpoint afresh, but never fail otherwise."""
    switch = switch_step(history)
    assert switch is not None and error is not None
    expected = error.split(":")[0]  # an error class, or the exception Spark raises without one
    first = switch_batch(obs, switch)
    for step in observed_steps(obs):
        if step < switch:
            continue
        errors = obs.get((step, StreamingLabel.ERROR), frozenset())
        if any(expected in str(message) for _, message in errors):
            return Outcome(ok=True, reached=(FAILED_AS_PREDICTED,) if first > 0 else ())
        ran = [b for b in obs[(step, StreamingLabel.COMMITS)] if b >= first] if first > 0 else []
        if ran or errors:
            message = (
                f"the upgrade at step {switch} was predicted to fail with {expected}, but the new job "
                + (f"committed batches {sorted(ran)}" if ran else f"failed otherwise: {sorted(errors)}")
            )
            return failed_at(step, message, obs, StreamingLabel.ERROR if errors else StreamingLabel.COMMITS)
    return Outcome(ok=True)  # the new job ran no batch: nothing to fail (`RAN_AFTER` counts those that did)


def _steps(impl: Any, history: History, obs: Observation) -> tuple[int, list] | Outcome:
    """The switch batch, and each up step from the switch on with the groups its result must hold (or the
    failing outcome)."""
    switch = switch_step(history)
    assert switch is not None
    first = switch_batch(obs, switch)
    keys = state_keys_of(history, obs)
    found = []
    for step in up_steps(obs):
        if step < switch:
            continue
        trial = read_step(history, obs, step, impl.plan)
        if isinstance(trial, Outcome):
            return trial
        found.append((trial, expected_groups(impl.plan, trial, first, impl.mix, keys)))
    return first, found


def _as_predicted(impl: Any, obs: Observation, judged: Any, outputs: dict) -> Outcome:
    if isinstance(judged, Outcome):
        return judged
    first, steps = judged
    for trial, groups in steps:
        expected, of = expected_rows(groups, outputs, impl.window_column, impl.plan.keys)
        actual = Counter(dict(obs.get((trial.step, StreamingLabel.JOB_ROWS), frozenset())))
        if actual != expected:
            return _mismatch(impl, trial.step, first, actual, expected, of)
    return Outcome(ok=True)


def _mismatch(impl: Any, step: int, first: int, actual: Counter, expected: Counter, of: dict) -> Outcome:
    missing, extra = expected - actual, actual - expected
    shown = [f"missing {stateful.show_row(r)} ({of[r].what()})" for r in sorted(missing, key=repr)]
    shown += [f"unexpected {stateful.show_row(r)}" for r in sorted(extra, key=repr)]
    more = f" and {len(shown) - SHOWN} more" if len(shown) > SHOWN else ""
    mix = impl.mix.value if isinstance(impl.mix, Mix) else impl.mix
    message = (
        f"after the switch to {impl.streaming_job} from batch {first} ({impl.comparison.outcome().value}, "
        f"groups held across it {mix}), the job's rows are not what the upgrade makes: "
        + "; ".join(shown[:SHOWN])
        + more
    )
    label = StreamingLabel.JOB_ROWS
    return Outcome(
        ok=False,
        message=message,
        expected={(step, label): frozenset(_counted(expected))},
        actual={(step, label): frozenset(_counted(actual))},
        step=step,
    )


def _counted(rows: Counter) -> list[str]:
    return [stateful.show_row(row) + (f" x{n}" if n != 1 else "") for row, n in rows.items()]


def properties(plan: StatefulPlan) -> tuple[Property, ...]:
    """The suite's one property, its histories scaled to the new job's `plan`."""
    return (
        Property(
            name="upgrade_as_predicted",
            doc="From the switch on, the query fails as predicted, or its rows are what the upgrade makes of old and new.",
            draw=lambda source, domain: draw_upgrade_history(source, domain, plan),
            check=_check,
            reference=Reference.MODEL,
            directed=directed(plan),
        ),
    )


@attrs.frozen
class UpgradeSuite(stateful.JobSuite):
    """The stateful suite's kind of suite (scaled to the new job's plan; `under_job`: more trials for a user's
    jobs), with hard cases of its own."""

    def properties_of(self, plan: StatefulPlan) -> tuple[Property, ...]:
        return properties(plan)

    def events_of(self, plan: StatefulPlan) -> tuple[str, ...]:
        return EVENTS

    def for_implementation(self, impl: Any) -> Suite:
        """Scaled to the new job's plan; an upgrade predicted to fail its restart requires the hard cases its
        trials can show (`EVENTS_WHEN_RESTART_FAILS`)."""
        suite = super().for_implementation(impl)
        comparison = getattr(impl, "comparison", None)
        if comparison is None or comparison.outcome() is not Verdict.RESTART_FAILS:
            return suite
        return attrs.evolve(suite, required_events=EVENTS_WHEN_RESTART_FAILS)


SUITE = UpgradeSuite(
    name="upgrade",
    doc="A stateful job switched to a changed job at a drawn batch: the restart and the results as the static verdict predicts.",
    properties=properties(stateful.EXAMPLE_PLAN),
    default_impl=(
        "upgrade-job:frontier_harness.streaming_job_example.windowed_counts:factory"
        "->frontier_harness.streaming_job_example.windowed_counts_changed:refactored"
    ),
    required_events=EVENTS,
    # ci: one wave (6 trials) after the directed ones, as the stateful suite's default run; --job, 62.
    batched_cost=1667.0,
    job_batched_cost=160.0,
    serial_jobs=True,
    shrink_batch=TRIAL_WAVE,
    domains=("partitioned",),
    calls=("observe_upgrade",),
)
