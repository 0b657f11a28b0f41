"""What a stateful history is drawn to reach: the hard cases its directed draws aim at, read from the history
as the generator's `Tracker` follows the watermark. A diagnostic of the strategies (the suite counts what
each trial observed, `frontier_harness.properties.checks.event_time.reached`, never this).

>>> from frontier_harness.properties.engine.source import RandomSource
>>> from frontier_harness.model.event_time.stateful import StatefulPlan, Window
>>> from frontier_harness.properties.checks.event_time.strategies.stateful import scripted
>>> plan = StatefulPlan("aggregation", (5_000,), Window(10_000), ("key",), "append", 5_000)
>>> aimed_at(plan, scripted(RandomSource(0), "partitioned", plan, "ahead trigger far trigger"))
['a window complete (emitted, evicted)']
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.event_time.stateful import StatefulPlan
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, Trigger
from frontier_harness.properties.checks.event_time.reached import (
    AT_WATERMARK,
    COMPLETE,
    IDLE,
    LATE,
    LATE_AND_KEPT,
    PROMISE,
    REDELIVERY,
    REEMIT,
)
from frontier_harness.properties.checks.event_time.strategies.stateful import Tracker, is_late
from frontier_harness.properties.checks.streaming.strategies.streaming import (
    FIRST_TWO_DIGIT_BATCH,
    TWO_DIGITS,
    aimed_crashes,
)
from frontier_harness.properties.engine.history import History


def aimed_at(plan: StatefulPlan, history: History) -> list[str]:
    """The hard cases `history` is drawn to reach under `plan`, as the generator's `Tracker` follows the
    watermark (what a directed history aims at; the suite counts what each trial observed, `reached`): the
    streaming suite's crashes and restarts, each kind of event time a batch meets, and a batch with a two-digit
    id (more than ten batches with records)."""
    found = aimed_crashes(history)
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
    return sorted(found | ({TWO_DIGITS} if runs > FIRST_TWO_DIGIT_BATCH else set()))


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
        window = plan.record_window
        at = [s.end == mark for s in window.containing(t)] if window else [t == mark]
        found |= {AT_WATERMARK} if plan.delays and mark > 0 and any(at) else set()
        if newest is not None and plan.lateness and plan.delays:
            found |= {PROMISE} if newest - plan.lateness < t <= newest - plan.delay else set()
    return found


def _completes(plan: StatefulPlan, history: History, mark: int) -> bool:
    assert plan.window is not None
    times = [a.args[IngestionArg.EVENT_TIME] for a in history.actions if a.name == StreamingAction.PRODUCE]
    return any(s.end <= mark for t in times for s in plan.window.containing(t)) and mark > 0
