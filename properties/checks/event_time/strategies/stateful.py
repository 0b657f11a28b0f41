"""Histories of a stateful job's query: keyed, timed records in order, out of order, late, at the
watermark and redelivered, with crashes and restarts.

Actions as the streaming suite's (`frontier_harness.properties.checks.streaming.strategies.streaming`):
`query {trigger}` first, then `produce {partition, key, event_time, data}`, `trigger {fault?, kill?}`,
`upstream_compact {}`, `restart {}`. Keys are a few letters (groups collide), `data` is unique per
history but for a redelivery, which repeats an earlier record's key, data and event time at a new
offset (the at-least-once upstream deduplication exists for).

Event times are scaled to the job's plan (`frontier_harness.model.event_time.stateful.StatefulPlan`):
its delay, its window and the lateness it promises, on a grid (`unit`) that every one of them is a
multiple of, so every boundary can be hit exactly. The generator follows the watermark the query will
have (`Tracker`: the newest event time triggered so far minus the delay, the records of a batch that
crashed counting only once it ran again) and draws each event time as one of: ahead of the newest
(the watermark moves), far ahead (every window so far completes), within the delay, exactly on the watermark's boundary (a deduplication: the
watermark itself; a window: a time in the window that ends at it), beyond the delay but within the
promised lateness, well behind it (late), or a redelivery. A partition may stay idle while others
move the watermark. A job that deduplicates within the watermark also gets its defining cases
(`DEDUPLICATION_KINDS`): a duplicate of an earlier record (its key and data) whose event time is later by
up to the delay, the bound of the first's entry included (`duplicate`), and a record that moves the
watermark exactly to that bound, so the entry expires there (`expiry`). A duplicate is never earlier than
its original nor more than the delay later: the group is then never emitted twice (an emission again needs
an event time beyond the emitted one's entry, `event_time + delay`). A session-window job gets its own
(`SESSION_KINDS`): a record exactly the gap after an earlier one of its key (`gap`: one session), and one
behind the watermark by less than the gap (`behind`: its session is not late, it counts); its `boundary`
is a record whose session ends exactly at the watermark (late). A job that deduplicates on keys it derives,
which merge records of different keys into one group (`StatefulPlan.merged_keys`, probed), gets its defining
case (`merged`): a record of another key of an earlier record's group, new data, its event time later by up to
the delay (the same, when the deduplication is not within the watermark), so its derived key makes it the
earlier record's duplicate.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> from frontier_harness.model.event_time.stateful import StatefulPlan, Window
>>> plan = StatefulPlan("aggregation", (10_000,), Window(10_000), ("key",), "update", 10_000)
>>> h = draw_stateful_history(RandomSource(3), "partitioned", plan)
>>> h.actions[1].name, sorted(h.actions[1].args)
('produce', ['data', 'event_time', 'key', 'partition'])
"""

from __future__ import annotations

import math
from typing import Any

from frontier_harness.model.event_time.stateful import Bound, Span, StatefulPlan, Window
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.event_time import OutputMode, Prefix, TimeMode
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, Trigger
from frontier_harness.properties.checks.streaming.strategies.streaming import CRASH_POINTS, TRIGGERS
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

KEYS = ("a", "b", "c")
MAX_PARTITIONS = 3
DEFAULT_UNIT = 1_000  # ms, for a job with no delay and no window
# How an event time is drawn (`_event_time`), each as often as it is listed.
KINDS = ("ahead", "ahead", "far", "within", "within", "boundary", "boundary", "promise", "late", "redelivery")
DEDUPLICATION_KINDS = ("duplicate", "duplicate", "expiry")
SESSION_KINDS = ("gap", "gap", "behind")
MERGED_KINDS = ("merged", "merged")
ROLL_UP_KINDS = ("outer", "inner", "delay")  # a roll-up's directed steps (`_rolled_up`), drawn by script only


def kinds(plan: StatefulPlan) -> tuple[str, ...]:
    """The kinds of event time drawn for `plan`'s records: `KINDS`, `DEDUPLICATION_KINDS` for a job that
    deduplicates within the watermark, and `MERGED_KINDS` for one whose derived keys merge keys.

    >>> tenant = StatefulPlan("dropDuplicates", (5_000,), None, ("t",), derived=("t",), merged_keys=(("b", "c"),))
    >>> [(k in kinds(tenant)) for k in ("duplicate", "merged")]
    [False, True]
    """
    sessions = SESSION_KINDS if plan.gap is not None else ()
    merged = MERGED_KINDS if plan.merged_keys else ()
    return KINDS + (DEDUPLICATION_KINDS if plan.within_watermark and plan.delays else ()) + sessions + merged


def unit(plan: StatefulPlan) -> int:
    """The grid event times are drawn on: the largest step every delay, window length, slide, window
    start and the promised lateness are multiples of.

    >>> from frontier_harness.model.event_time.stateful import StatefulPlan, Window
    >>> unit(StatefulPlan("aggregation", (1_500,), Window(10_000, 5_000), ("key",)))
    500
    """
    parts = [*plan.delays, plan.lateness or 0, plan.gap or 0]
    for window in (plan.window, plan.inner_window):
        parts += [window.duration, window.slide, window.start] if window is not None else []
    return math.gcd(*parts) or DEFAULT_UNIT


def span(plan: StatefulPlan) -> int:
    """The event-time distance the generator moves in: the largest of the delay, the window and the
    promise (one unit when none is set)."""
    window = plan.window.duration if plan.window is not None else 0
    return max(plan.delay, window, plan.lateness or 0, plan.gap or 0, unit(plan))


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
        # In append mode a re-run batch writes again the windows it emitted: `after_sink` twice as often.
        self.append = plan.output_mode == OutputMode.APPEND and plan.window is not None
        self.crash_points = (*CRASH_POINTS, CrashPoint.AFTER_SINK) if self.append else CRASH_POINTS
        self.kinds = kinds(plan)
        # Under a job that filters before its operator, records of the keys it keeps, but the dropped ones.
        self.keys = plan.kept_keys or KEYS
        self.dropped = tuple(k for k in KEYS if k not in self.keys)

    @property
    def newest(self) -> int:
        times = [*self.tracker.pending, *([self.tracker.newest] if self.tracker.newest is not None else [])]
        return max(times, default=self.span)


def _event_time(source: Source, drawing: Drawing, kind: str) -> int:
    plan, u, newest, mark = drawing.plan, drawing.unit, drawing.newest, drawing.tracker.mark
    steps = max(1, drawing.span // u)
    if kind == "ahead":
        return newest + u * source.integer(1, steps)
    if kind == "behind" and plan.gap is not None and mark > 0:  # behind the watermark, its session not late
        return mark - u * source.integer(0, max(0, plan.gap // u - 1))
    if kind == "expiry" and drawing.records:  # E reaches the newest record's entry's bound exactly
        return drawing.records[-1][IngestionArg.EVENT_TIME] + 2 * plan.delay
    # `far`: the next batch's watermark passes every window so far, landing on a window's end; `past`: one unit
    # beyond it (a group's timeout fires only below the watermark)
    if kind in ("far", "past"):
        ahead = newest + drawing.span + u * source.integer(0, steps)
        end = _window_ending_at(plan.window, ahead).end if plan.window else ahead
        return end + plan.delay + (u if kind == "past" else 0)
    if plan.inner_window is not None and kind in ROLL_UP_KINDS:
        return _rolled_up(plan, newest, kind)
    if kind == "within":
        return newest - u * source.integer(0, max(0, plan.delay // u - 1))
    if kind == "boundary":
        if plan.gap is not None:  # its session ends exactly at the watermark: late
            return max(u, mark - plan.gap) if mark > 0 else newest
        if plan.record_window is None:
            return max(u, mark)
        return max(u, _window_ending_at(plan.record_window, mark).end - 1) if mark > 0 else newest
    if kind == "promise" and plan.lateness:
        return max(u, newest - u * source.integer(plan.delay // u, max(plan.delay, plan.lateness) // u))
    return max(u, mark - u * source.integer(1, 2 * steps))


def _rolled_up(plan: StatefulPlan, newest: int, kind: str) -> int:
    """A roll-up's steps (`ROLL_UP_KINDS`): `outer`, the start of the first outer window after the newest;
    `inner`, the next inner window's start; `delay`, the newest plus the delay (E reaches the newest).

    >>> plan = StatefulPlan("aggregation", (5_000,), Window(30_000), inner_window=Window(10_000))
    >>> [_rolled_up(plan, 42_000, k) for k in ROLL_UP_KINDS], _rolled_up(plan, 60_000, "outer")
    ([60000, 52000, 47000], 90000)
    """
    outer, inner = plan.window, plan.inner_window
    assert outer is not None and inner is not None, "a roll-up's steps need its two windows"
    if kind == "outer":
        return _window_ending_at(outer, newest + 1 + outer.duration).start
    return newest + (inner.duration if kind == "inner" else plan.delay)


def _window_ending_at(window: Window, end: int) -> Span:
    """The window whose end is the first on the window grid at or after `end`."""
    start = end - window.duration
    start += (window.start - start) % window.slide
    return Span(start, start + window.duration)


def _new_key(drawing: Drawing) -> str:
    """The first of the keys drawn from (`KEYS`, or those a job's filters keep) no record drawn so far has."""
    used = {r[IngestionArg.KEY] for r in drawing.records}
    for key in drawing.keys:
        if key not in used:
            return key
    raise ValueError(f"a record of a new key after records of every key {drawing.keys}")


def produce(
    source: Source,
    drawing: Drawing,
    kind: str | None = None,
    partition: int | None = None,
    new_key: bool = False,
    dropped: bool = False,
) -> Action:
    """A record to a known partition or the next new one (or `partition`), its event time of a drawn kind
    (or `kind`); `new_key`: of a key no earlier record has; `dropped`: of a key the job's filters drop (it
    moves no watermark the generator tracks when they drop it under the watermark)."""
    kind = kind or source.choice(drawing.kinds)
    if partition is None:
        partition = source.integer(0, min(drawing.partitions, MAX_PARTITIONS - 1))
    drawing.partitions = max(drawing.partitions, partition + 1)
    if kind in ("redelivery", "duplicate") and drawing.records:
        earlier = drawing.records[source.integer(0, len(drawing.records) - 1)]
        later = (
            drawing.unit * source.integer(0, drawing.plan.delay // drawing.unit) if kind == "duplicate" else 0
        )
        args = {**earlier, IngestionArg.PARTITION: partition}
        args[IngestionArg.EVENT_TIME] += later
    elif kind == "merged" and drawing.plan.merged_keys:
        args = _merged(source, drawing, partition)
        drawing.records.append(args)
    elif kind == "gap" and drawing.records and drawing.plan.gap is not None:
        # exactly the gap after an earlier record of its key: the two share a session (a record 1 ms further
        # would open one of its own)
        earlier = drawing.records[source.integer(0, len(drawing.records) - 1)]
        args = {
            IngestionArg.PARTITION: partition,
            IngestionArg.KEY: earlier[IngestionArg.KEY],
            IngestionArg.EVENT_TIME: earlier[IngestionArg.EVENT_TIME] + drawing.plan.gap,
            Arg.DATA: f"r{len(drawing.records)}",
        }
        drawing.records.append(args)
    else:
        args = {
            IngestionArg.PARTITION: partition,
            IngestionArg.KEY: source.choice(drawing.dropped if dropped else drawing.keys),
            IngestionArg.EVENT_TIME: _event_time(source, drawing, kind),
            Arg.DATA: f"r{len(drawing.records)}",
        }
        if new_key:
            args[IngestionArg.KEY] = _new_key(drawing)
        drawing.records.append(args)
    action = Action(StreamingAction.PRODUCE, args)
    if not (dropped and drawing.plan.prefix == Prefix.WATERMARK):
        drawing.tracker.step(action)
    return action


def _merged(source: Source, drawing: Drawing, partition: int) -> dict[str, Any]:
    """A record the job's derived keys put in an earlier record's group though its key is another
    (`MERGED_KINDS`); with no earlier record of a merged key, one of such a key, ahead of the newest.

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> plan = StatefulPlan("dropDuplicatesWithinWatermark", (5_000,), None, ("t",), derived=("t",), merged_keys=(("b", "c"),))
    >>> h = scripted(RandomSource(0), "partitioned", plan, "ahead#new merged trigger merged ahead trigger")
    >>> [(a.args["key"], a.args["data"], a.args["event_time"]) for a in h.actions if a.name == "produce"]
    [('a', 'r0', 10000), ('b', 'r1', 15000), ('c', 'r2', 20000), ('b', 'r3', 25000)]
    >>> pair = lambda seed: scripted(RandomSource(seed), "partitioned", plan, "merged trigger merged trigger").actions
    >>> {len({a.args["key"] for a in pair(seed) if a.name == "produce"}) for seed in range(20)}  # always the other
    {2}
    """
    plan = drawing.plan
    merged = {key: group for group in plan.merged_keys for key in group}  # each reaches the deduplication
    earlier = [r for r in drawing.records if r[IngestionArg.KEY] in merged]
    data = f"r{len(drawing.records)}"
    if not earlier:
        return {
            IngestionArg.PARTITION: partition,
            IngestionArg.KEY: source.choice(sorted(merged)),
            IngestionArg.EVENT_TIME: _event_time(source, drawing, "ahead"),
            Arg.DATA: data,
        }
    first = source.choice(earlier)
    later = drawing.unit * source.integer(0, plan.delay // drawing.unit) if plan.within_watermark else 0
    others = [k for k in merged[first[IngestionArg.KEY]] if k != first[IngestionArg.KEY]]
    return {
        IngestionArg.PARTITION: partition,
        IngestionArg.KEY: source.choice(others),
        IngestionArg.EVENT_TIME: first[IngestionArg.EVENT_TIME] + later,
        Arg.DATA: data,
    }


def _round(source: Source, drawing: Drawing, kill: bool) -> list[Action]:
    """One to three records, then a trigger (a crash now and then); a query that is down restarts instead,
    now and then after the upstream compacted (the hard case). For an append-mode window job, now and then
    a record far ahead, a trigger, and a batch that crashes after writing the windows it completed."""
    if drawing.append and not drawing.down and source.boolean(0.15):
        completing = [produce(source, drawing, "far"), _trigger(drawing, {}), produce(source, drawing)]
        return completing + [_trigger(drawing, {IngestionArg.FAULT: CrashPoint.AFTER_SINK}, kill)]
    actions = repeat(source, lambda: produce(source, drawing), 1, 3, 0.4)
    if drawing.dropped and source.boolean(0.2):  # a record the job's filters drop, now and then ahead of all
        actions.append(produce(source, drawing, source.choice(("ahead", "within")), dropped=True))
    if source.boolean(0.15) or drawing.down and source.boolean(0.3):
        actions.append(Action(StreamingAction.UPSTREAM_COMPACT, {}))  # the tracker needs no step for it
    if drawing.down:
        drawing.down = False
        actions.append(Action(StreamingAction.RESTART, {}))
        drawing.tracker.step(actions[-1])
    elif source.boolean(0.3):
        actions.append(_trigger(drawing, {IngestionArg.FAULT: source.choice(drawing.crash_points)}, kill))
    else:
        actions.append(_trigger(drawing, {}))
    return actions


def _trigger(drawing: Drawing, args: dict[str, Any], kill: bool = False) -> Action:
    """A trigger, crashing at `args`' fault if any (by SIGKILL when `kill`), followed by the tracker."""
    if IngestionArg.FAULT in args:
        drawing.down = True
        args = {**args, **({IngestionArg.KILL: True} if kill else {})}
    action = Action(StreamingAction.TRIGGER, args)
    drawing.tracker.step(action)
    return action


def draw_stateful_history(
    source: Source, domain_name: str, plan: StatefulPlan, max_rounds: int = 5, kill: bool = False
) -> History:
    """The query's trigger, then one to `max_rounds` rounds of records and a trigger or restart; `kill`
    crashes by SIGKILL."""
    drawing = Drawing(plan)
    # availableNow starts a query per trigger and runs no batch without data: a window completes in the next
    # data batch, where a crash after the write re-runs its emission. 1 in 3, 1 in 2 for an append-mode job.
    append = plan.output_mode == OutputMode.APPEND and plan.window is not None
    trigger = source.choice(TRIGGERS if append else (*TRIGGERS, Trigger.PROCESSING_TIME))
    actions = [Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger})]
    for chunk in repeat(source, lambda: _round(source, drawing, kill), 1, max_rounds, 0.8):
        actions += chunk
    return History(domain_name, tuple(actions))


def processor_trigger(plan: StatefulPlan) -> str:
    """The trigger a user's processor's histories run under: a processing-time one (its reference run, the
    same batches in one start of the query, is a processing-time query), but `once` for a processor whose
    timers fire by the batch clock, which always wants another batch (an `availableNow` start of it never
    ends): at most one batch a start, none when nothing is new, so the history, not the wall clock, decides the
    batches.

    >>> processor_trigger(StatefulPlan("processor", (), None, ("key",), time_mode="processing_time"))
    'once'
    """
    return Trigger.ONCE if plan.time_mode == TimeMode.PROCESSING_TIME else Trigger.PROCESSING_TIME


def draw_processor_history(
    source: Source, domain_name: str, plan: StatefulPlan, max_rounds: int = 5, kill: bool = False
) -> History:
    """`draw_stateful_history` under the processor's trigger (`processor_trigger`)."""
    drawn = draw_stateful_history(source, domain_name, plan, max_rounds, kill)
    query = Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: processor_trigger(plan)})
    return History(domain_name, (query, *drawn.actions[1:]))


def scripted(
    source: Source, domain_name: str, plan: StatefulPlan, script: str, trigger: str = Trigger.PROCESSING_TIME
) -> History:
    """A small history that follows `script`, words separated by spaces: a record of a kind (`far`,
    `ahead`, `boundary`, ...; `kind@p` to partition `p`; `kind#new` of a key no earlier record has),
    `trigger`, `crash:POINT` (`kill:POINT` by SIGKILL), `compact`, `restart`.

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> from frontier_harness.model.event_time.stateful import StatefulPlan, Window
    >>> plan = StatefulPlan("aggregation", (5_000,), Window(10_000), ("key",), "update", 5_000)
    >>> h = scripted(RandomSource(0), "partitioned", plan, "ahead far@1 trigger")
    >>> [(a.name, a.args.get("event_time"), a.args.get("partition")) for a in h.actions]
    [('query', None, None), ('produce', 20000, 0), ('produce', 45000, 1), ('trigger', None, None)]
    >>> h = scripted(RandomSource(0), "partitioned", plan, "ahead past ahead#new trigger")
    >>> [(a.args["key"], a.args["event_time"]) for a in h.actions[1:-1]]  # E = 45 s: one unit past 40 s
    [('b', 20000), ('a', 50000), ('c', 60000)]
    """
    drawing = Drawing(plan)
    actions = [Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger})]
    for word in script.split():
        name, _, point = word.partition(":")
        kind, _, partition = word.partition("@")
        if name == "trigger":
            actions.append(_trigger(drawing, {}))
        elif name in ("crash", "kill"):
            actions.append(_trigger(drawing, {IngestionArg.FAULT: point}, kill=name == "kill"))
        elif name in ("compact", "restart"):
            actions.append(
                Action(StreamingAction.UPSTREAM_COMPACT if name == "compact" else StreamingAction.RESTART, {})
            )
            drawing.tracker.step(actions[-1])
        else:
            kind, _, key = kind.partition("#")
            dropped = key == "dropped" and bool(drawing.dropped)
            actions.append(
                produce(source, drawing, kind, int(partition) if partition else 0, key == "new", dropped)
            )
            drawing.partitions = max(drawing.partitions, actions[-1].args[IngestionArg.PARTITION] + 1)
    return History(domain_name, tuple(actions))


def is_late(plan: StatefulPlan, event_time: int, mark: int) -> list[bool]:
    """Per window of the record (one entry when the job has no window), whether it is late at `mark`."""
    if not plan.delays or plan.bound is Bound.NONE and plan.operator == "aggregation":
        return [False]
    if plan.gap is not None:  # late by its own session's end
        return [event_time + plan.gap <= mark]
    if (
        plan.window is None or plan.deduplication is not None
    ):  # a deduplication drops it, whatever its windows
        return [event_time <= mark] * (1 if plan.window is None else len(plan.window.containing(event_time)))
    window = plan.record_window  # a roll-up's records are late for their inner window
    assert window is not None
    return [s.end <= mark for s in window.containing(event_time)]
