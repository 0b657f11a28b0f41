"""Histories of a stream-stream join's query: records on two sides, each side with its own event times and
keys, matching across the sides, at the range's boundary, late, and far ahead, with crashes and restarts.

Actions as the stateful suite's (`strategies.stateful`), a `produce` also naming its record's `side` (`left`
or `right`): the query reads the two sides as two sources (`frontier_harness.spark_impl.streaming.event_source`).
Event times are on a grid (`unit`) every delay and bound of the join's range is a multiple of, and each is
drawn as one of (`KINDS`):

- `ahead`: beyond the newest event time of its side (its side's watermark moves);
- `match`: of the key of an earlier record of the other side, its event time in the range of that record;
- `boundary`: the same, exactly at a bound of the range (`left == right + lower` or `right + upper`);
- `late`: at or behind the query's watermark (`E`, the meet of the watermarked sides' newest minus their
  delays): a side with a watermark drops it;
- `far`: a record on each side far ahead of every record so far (the watermark then passes every stored row:
  each side's state is evicted by the other side's watermark plus the range, an outer row is emitted);
- `lag` (drawn for a job that counts the joined rows per window, `JoinPlan.counted`): a record on each side
  at the end of the newest window of the counted side's newest record plus that side's delay, so the query's
  watermark reaches that end exactly while the join's output watermark, the range behind it, has not.

The generator follows the watermark the query will have (`JoinTracker`), the records of a batch that crashed
counting once it ran again.

>>> from frontier_harness.model.event_time.join import JoinPlan, JoinType, StreamJoin, TimeRange
>>> from frontier_harness.properties.engine.source import RandomSource
>>> plan = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000)), (5_000, 5_000))
>>> h = scripted_join(RandomSource(0), "partitioned", plan, "L.ahead trigger R.boundary trigger")
>>> [(a.args.get("side"), a.args.get("event_time")) for a in h.actions if a.name == "produce"]
[('left', 20000), ('right', 10000)]
"""

from __future__ import annotations

import math
from typing import Any

from frontier_harness.model.event_time.join import JoinPlan, Side
from frontier_harness.model.event_time.stateful import StatefulPlan
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import StreamingAction, Trigger
from frontier_harness.properties.checks.event_time.strategies.stateful import (
    KEYS,
    MAX_PARTITIONS,
    Drawing,
    Tracker,
    _trigger,
)
from frontier_harness.properties.checks.streaming.strategies.streaming import CRASH_POINTS, TRIGGERS
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

KINDS = ("ahead", "ahead", "match", "match", "boundary", "late", "far")
COUNTED_KINDS = (*KINDS, "lag")
BOTH_SIDES = ("far", "lag")  # the watermark moves only when every watermarked side moves
SIDES = {"L": Side.LEFT, "R": Side.RIGHT}


def unit(plan: JoinPlan) -> int:
    """The grid event times are drawn on: the largest step every delay and bound of the range is a multiple of.

    >>> from frontier_harness.model.event_time.join import JoinType, StreamJoin, TimeRange
    >>> unit(JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000)), (5_000, 2_000)))
    1000
    """
    bounds = (plan.join.range.lower, plan.join.range.upper)
    return math.gcd(*plan.watermarked_delays, *(abs(b) for b in bounds if b is not None)) or 1_000


def span(plan: JoinPlan) -> int:
    """The event-time distance the generator moves in: the largest delay or bound (one unit at least)."""
    bounds = [abs(b) for b in (plan.join.range.lower, plan.join.range.upper) if b is not None]
    return max([plan.delay, *bounds, unit(plan)])


class JoinTracker(Tracker):
    """The watermark the query will have (`Tracker`'s crashes and restarts): each side's newest event time of
    the batches that ran (`newest_of`), and E (the meet of the watermarked sides' newest minus their delays, a
    side that saw nothing counting 0, never back); `arrived` holds the pending records' sides."""

    def __init__(self, plan: JoinPlan):
        super().__init__(StatefulPlan("join", plan.watermarked_delays))
        self.join = plan
        self.newest_of: dict[Side, int | None] = {Side.LEFT: None, Side.RIGHT: None}
        self.arrived: list[tuple[Side, int]] = []

    def run(self) -> None:
        for side, t in self.arrived:
            seen = self.newest_of[side]
            self.newest_of[side] = t if seen is None else max(seen, t)
        self.pending, self.arrived = [], []
        fronts = [
            (seen - d) if (seen := self.newest_of[s]) is not None else 0
            for s in Side
            if (d := self.join.side_delay(s)) is not None
        ]
        self.mark = max(self.mark, min(fronts)) if fronts else self.mark

    def step(self, action: Action) -> None:
        if action.name == StreamingAction.PRODUCE:
            self.arrived.append((Side(action.args[IngestionArg.SIDE]), action.args[IngestionArg.EVENT_TIME]))
        super().step(action)


class JoinDrawing(Drawing):
    """What the generator knows while it draws (a `Drawing`'s records, partitions, whether the query is down):
    the join's plan, its tracker, its grid."""

    tracker: JoinTracker

    def __init__(self, plan: JoinPlan):
        super().__init__(StatefulPlan("join", plan.watermarked_delays))
        self.join, self.tracker = plan, JoinTracker(plan)
        self.unit, self.span = unit(plan), span(plan)

    def newest_on(self, side: Side | None = None) -> int:
        times = [t for s, t in self.tracker.arrived if side in (None, s)]
        times += [t for s, t in self.tracker.newest_of.items() if t is not None and side in (None, s)]
        return max(times, default=self.span)


def _event_time(source: Source, drawing: JoinDrawing, side: Side, kind: str, partner: dict | None) -> int:
    u, steps = drawing.unit, max(1, drawing.span // drawing.unit)
    if kind in ("match", "boundary") and partner is not None:
        other = partner[IngestionArg.EVENT_TIME]
        lower, upper = drawing.join.join.range.lower, drawing.join.join.range.upper
        lo = lower if lower is not None else (upper or 0) - drawing.span
        hi = upper if upper is not None else lo + drawing.span
        # left = right + c for c in [lo, hi]; right = left - c
        c = (
            source.choice((lo, hi))
            if kind == "boundary"
            else lo + u * source.integer(0, max(0, (hi - lo) // u))
        )
        return max(u, other + c if side is Side.LEFT else other - c)
    if kind == "late":
        return max(u, drawing.tracker.mark - u * source.integer(0, steps))
    if kind == "far":
        return drawing.newest_on() + 2 * drawing.span + drawing.join.delay + u * source.integer(0, steps)
    if kind == "lag":
        return _lagging(drawing, side)
    return drawing.newest_on(side) + u * source.integer(1, steps)


def _both(drawing: JoinDrawing, kind: str) -> tuple[Side, Side]:
    """The order a record on each side is drawn in: a `lag` record of the counted side last, so that the
    other's is drawn from the same newest record."""
    counts = drawing.join.counted
    return (
        (counts.side.other, counts.side) if kind == "lag" and counts is not None else (Side.LEFT, Side.RIGHT)
    )


def _lagging(drawing: JoinDrawing, side: Side) -> int:
    """A `lag` record's event time on `side`: the end of the newest window of the counted side's newest
    record, plus `side`'s delay, so that the query's watermark reaches that end exactly."""
    counts = drawing.join.counted
    assert counts is not None, "lag is drawn under a count over the join"
    end = counts.window.containing(drawing.newest_on(counts.side))[-1].end
    return end + (drawing.join.side_delay(side) or 0)


def produce(
    source: Source, drawing: JoinDrawing, side: Side, kind: str, partition: int | None = None
) -> Action:
    """A record on `side` of a drawn `kind` (a `match` or `boundary` of an earlier record of the other side,
    an `ahead` one when there is none)."""
    if partition is None:
        partition = source.integer(0, min(drawing.partitions, MAX_PARTITIONS - 1))
    drawing.partitions = max(drawing.partitions, partition + 1)
    others = [r for r in drawing.records if r[IngestionArg.SIDE] == side.other]
    partner = others[source.integer(0, len(others) - 1)] if others and kind in ("match", "boundary") else None
    kind = "ahead" if kind in ("match", "boundary") and partner is None else kind
    args: dict[str, Any] = {
        IngestionArg.PARTITION: partition,
        IngestionArg.SIDE: str(side),
        IngestionArg.KEY: partner[IngestionArg.KEY] if partner is not None else source.choice(KEYS),
        IngestionArg.EVENT_TIME: _event_time(source, drawing, side, kind, partner),
        Arg.DATA: f"{str(side)[0]}{len(drawing.records)}",
    }
    drawing.records.append(args)
    action = Action(StreamingAction.PRODUCE, args)
    drawing.tracker.step(action)
    return action


def _records(source: Source, drawing: JoinDrawing, kind: str | None = None) -> list[Action]:
    kind = kind or source.choice(KINDS if drawing.join.counted is None else COUNTED_KINDS)
    if kind in BOTH_SIDES:
        return [produce(source, drawing, side, kind) for side in _both(drawing, kind)]
    return [produce(source, drawing, source.choice(tuple(Side)), kind)]


def _round(source: Source, drawing: JoinDrawing, kill: bool) -> list[Action]:
    """One to three draws of records, then a trigger (a crash now and then); a query that is down restarts
    instead, now and then after the upstream compacted."""
    actions = [a for draw in repeat(source, lambda: _records(source, drawing), 1, 3, 0.4) for a in draw]
    if source.boolean(0.15) or drawing.down and source.boolean(0.3):
        actions.append(Action(StreamingAction.UPSTREAM_COMPACT, {}))
    if drawing.down:
        drawing.down = False
        actions.append(Action(StreamingAction.RESTART, {}))
        drawing.tracker.step(actions[-1])
    elif source.boolean(0.3):
        actions.append(_trigger(drawing, {IngestionArg.FAULT: source.choice(CRASH_POINTS)}, kill))
    else:
        actions.append(_trigger(drawing, {}))
    return actions


def draw_join_history(
    source: Source, domain_name: str, plan: JoinPlan, max_rounds: int = 5, kill: bool = False
) -> History:
    """The query's trigger, then one to `max_rounds` rounds of records and a trigger or restart."""
    drawing = JoinDrawing(plan)
    # availableNow runs no batch without data: a count's window completes in the next data batch, where a crash
    # after the write re-runs its emission. 1 in 3, 1 in 2 under a count over the join.
    trigger = source.choice((*TRIGGERS, Trigger.PROCESSING_TIME) if plan.counted is None else TRIGGERS)
    actions = [Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger})]
    for chunk in repeat(source, lambda: _round(source, drawing, kill), 1, max_rounds, 0.8):
        actions += chunk
    return History(domain_name, tuple(actions))


def scripted_join(
    source: Source, domain_name: str, plan: JoinPlan, script: str, trigger: str = Trigger.PROCESSING_TIME
) -> History:
    """A small history that follows `script`, words separated by spaces: a record `L.kind` or `R.kind` (a kind
    of `KINDS`; `far` or `lag` alone for one on each side), `trigger`, `crash:POINT` (`kill:POINT` by SIGKILL),
    `compact`, `restart`."""
    drawing = JoinDrawing(plan)
    actions = [Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger})]
    for word in script.split():
        name, _, point = word.partition(":")
        if name == "trigger":
            actions.append(_trigger(drawing, {}))
        elif name in ("crash", "kill"):
            actions.append(_trigger(drawing, {IngestionArg.FAULT: point}, kill=name == "kill"))
        elif name in ("compact", "restart"):
            what = StreamingAction.UPSTREAM_COMPACT if name == "compact" else StreamingAction.RESTART
            actions.append(Action(what, {}))
            drawing.tracker.step(actions[-1])
            drawing.down = False if name == "restart" else drawing.down
        elif name in BOTH_SIDES:
            actions += _records(source, drawing, name)
        else:
            side, _, kind = word.partition(".")
            actions.append(produce(source, drawing, SIDES[side], kind, 0))
    return History(domain_name, tuple(actions))
