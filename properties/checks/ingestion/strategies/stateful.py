"""Histories of a stateful job's query: keyed, timed records in order, out of order, late, at the
watermark and redelivered, with crashes and restarts.

Actions as the streaming suite's (`frontier_harness.properties.checks.ingestion.strategies.streaming`):
`query {trigger}` first, then `produce {partition, key, event_time, data}`, `trigger {fault?, kill?}`,
`upstream_compact {}`, `restart {}`. Keys are a few letters (groups collide), `data` is unique per
history but for a redelivery, which repeats an earlier record's key, data and event time at a new
offset (the at-least-once upstream deduplication exists for).

Event times are scaled to the job's plan (`frontier_harness.model.ingestion.event_time.StatefulPlan`):
its delay, its window and the lateness it promises, on a grid (`unit`) that every one of them is a
multiple of, so every boundary can be hit exactly. The generator follows the watermark the query will
have (`Tracker`: the newest event time triggered so far minus the delay, the records of a batch that
crashed counting only once it ran again) and draws each event time as one of: ahead of the newest
(the watermark moves), within the delay, exactly on the watermark's boundary (a deduplication: the
watermark itself; a window: a time in the window that ends at it), beyond the delay but within the
promised lateness, well behind it (late), or a redelivery. A partition may stay idle while others
move the watermark.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> from frontier_harness.model.ingestion.event_time import StatefulPlan, Window
>>> plan = StatefulPlan("aggregation", (10_000,), Window(10_000), ("key",), "update", 10_000)
>>> h = draw_stateful_history(RandomSource(3), "partitioned", plan)
>>> h.actions[1].name, sorted(h.actions[1].args)
('produce', ['data', 'event_time', 'key', 'partition'])
"""

from __future__ import annotations

import math
from typing import Any

from frontier_harness.model.ingestion.event_time import Bound, Span, StatefulPlan, Window
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg, StreamingAction, Trigger
from frontier_harness.properties.checks.ingestion.strategies.streaming import CRASH_POINTS, TRIGGERS
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

KEYS = ("a", "b", "c")
MAX_PARTITIONS = 3
DEFAULT_UNIT = 1_000  # ms, for a job with no delay and no window
# How an event time is drawn (`_event_time`), each as often as it is listed.
KINDS = ("ahead", "ahead", "within", "within", "boundary", "boundary", "promise", "late", "redelivery")


def unit(plan: StatefulPlan) -> int:
    """The grid event times are drawn on: the largest step every delay, window length, slide, window
    start and the promised lateness are multiples of.

    >>> from frontier_harness.model.ingestion.event_time import StatefulPlan, Window
    >>> unit(StatefulPlan("aggregation", (1_500,), Window(10_000, 5_000), ("key",)))
    500
    """
    parts = [*plan.delays, plan.lateness or 0]
    if plan.window is not None:
        parts += [plan.window.duration, plan.window.slide, plan.window.start]
    return math.gcd(*parts) or DEFAULT_UNIT


def span(plan: StatefulPlan) -> int:
    """The event-time distance the generator moves in: the largest of the delay, the window and the
    promise (one unit when none is set)."""
    window = plan.window.duration if plan.window is not None else 0
    return max(plan.delay, window, plan.lateness or 0, unit(plan))


class Tracker:
    """The watermark the query will have, as the generator and `events` follow a history: `newest` is the
    newest event time of the batches that ran, `mark` the watermark after them (`newest - delay`, never
    lower than before), `pending` the records not yet in a batch that ran."""

    def __init__(self, plan: StatefulPlan):
        self.plan = plan
        self.newest: int | None = None
        self.mark = 0
        self.pending: list[int] = []
        self.down = False

    def run(self) -> None:
        """The pending records ran in a batch: the newest and the watermark move."""
        if self.pending:
            self.newest = max([*self.pending, *([self.newest] if self.newest is not None else [])])
            if self.plan.delays:
                self.mark = max(self.mark, self.newest - self.plan.delay)
        self.pending = []

    def step(self, action: Action) -> None:
        """Follows one action (a crashed batch runs, and moves the watermark, at the restart)."""
        if action.name == StreamingAction.PRODUCE:
            self.pending.append(action.args[IngestionArg.EVENT_TIME])
        elif action.name == StreamingAction.TRIGGER and not self.down:
            if action.args.get(IngestionArg.FAULT) and self.pending:
                self.down = True
            else:
                self.run()
        elif action.name == StreamingAction.RESTART:
            self.down = False
            self.run()


class Drawing:
    """What the generator knows while it draws: the plan, the tracker, the records and partitions so far."""

    def __init__(self, plan: StatefulPlan):
        self.plan, self.tracker = plan, Tracker(plan)
        self.unit, self.span = unit(plan), span(plan)
        self.records: list[dict[str, Any]] = []
        self.partitions = 0
        self.down = False

    @property
    def newest(self) -> int:
        times = [*self.tracker.pending, *([self.tracker.newest] if self.tracker.newest is not None else [])]
        return max(times, default=self.span)


def _event_time(source: Source, drawing: Drawing, kind: str) -> int:
    plan, u, newest, mark = drawing.plan, drawing.unit, drawing.newest, drawing.tracker.mark
    steps = max(1, drawing.span // u)
    if kind == "ahead":
        return newest + u * source.integer(1, steps)
    if kind == "within":
        return newest - u * source.integer(0, max(0, plan.delay // u - 1))
    if kind == "boundary":
        if plan.window is None:
            return max(u, mark)
        return max(u, _window_ending_at(plan.window, mark).end - 1) if mark > 0 else newest
    if kind == "promise" and plan.lateness:
        return max(u, newest - u * source.integer(plan.delay // u, max(plan.delay, plan.lateness) // u))
    return max(u, mark - u * source.integer(1, 2 * steps))


def _window_ending_at(window: Window, end: int) -> Span:
    """The window whose end is the first on the window grid at or after `end`."""
    start = end - window.duration
    start += (window.start - start) % window.slide
    return Span(start, start + window.duration)


def produce(source: Source, drawing: Drawing) -> Action:
    """A record to a known partition or the next new one, its event time of a drawn kind."""
    kind = source.choice(KINDS)
    partition = source.integer(0, min(drawing.partitions, MAX_PARTITIONS - 1))
    drawing.partitions = max(drawing.partitions, partition + 1)
    if kind == "redelivery" and drawing.records:
        earlier = drawing.records[source.integer(0, len(drawing.records) - 1)]
        args = {**earlier, IngestionArg.PARTITION: partition}
    else:
        args = {
            IngestionArg.PARTITION: partition,
            IngestionArg.KEY: source.choice(KEYS),
            IngestionArg.EVENT_TIME: _event_time(source, drawing, kind),
            Arg.DATA: f"r{len(drawing.records)}",
        }
        drawing.records.append(args)
    action = Action(StreamingAction.PRODUCE, args)
    drawing.tracker.step(action)
    return action


def _step(source: Source, drawing: Drawing, kill: bool) -> Action:
    kind = source.integer(0, 9)
    if kind < 5:
        return produce(source, drawing)
    if kind == 9 or (kind == 8 and drawing.down):  # compaction while the query is down is a hard case
        action = Action(StreamingAction.UPSTREAM_COMPACT, {})
    elif drawing.down:
        drawing.down = False
        action = Action(StreamingAction.RESTART, {})
    elif source.boolean(0.35):
        drawing.down = True
        args: dict[str, Any] = {IngestionArg.FAULT: source.choice(CRASH_POINTS)}
        action = Action(StreamingAction.TRIGGER, {**args, **({IngestionArg.KILL: True} if kill else {})})
    else:
        action = Action(StreamingAction.TRIGGER, {})
    drawing.tracker.step(action)
    return action


def draw_stateful_history(
    source: Source, domain_name: str, plan: StatefulPlan, max_steps: int = 10, kill: bool = False
) -> History:
    """The query's trigger, two records, then up to `max_steps` mixed steps; `kill` crashes by SIGKILL."""
    drawing = Drawing(plan)
    trigger = source.choice((*TRIGGERS, Trigger.PROCESSING_TIME))  # availableNow: a start per trigger
    actions = [Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger})]
    actions += [produce(source, drawing) for _ in range(2)]
    actions += repeat(source, lambda: _step(source, drawing, kill), 0, max_steps, 0.85)
    return History(domain_name, tuple(actions))


def is_late(plan: StatefulPlan, event_time: int, mark: int) -> list[bool]:
    """Per window of the record (one entry when the job has no window), whether it is late at `mark`."""
    if not plan.delays or plan.bound is Bound.NONE and plan.operator == "aggregation":
        return [False]
    if plan.window is None:
        return [event_time <= mark]
    return [s.end <= mark for s in plan.window.containing(event_time)]
