"""Event time in Spark's micro-batches: the watermark is a frontier, state eviction is expiration.

Spark's micro-batch engine (3.4 and later; each rule pinned against a real query on the PySpark
we run by `tests/test_spark_event_time.py`), in the seeds' words:

- **The watermark is a frontier over event time** (a total order, epoch milliseconds). Each
  `withWatermark(event_time, delay)` is an input whose frontier, after a batch, is the newest
  event time it saw since the query (re)started, minus its delay. The query's watermark combines
  its inputs by meet (`min`, the default policy) or join (`max`), an input that saw nothing
  counting as 0, and never goes back. A restart forgets the inputs' frontiers and restores only
  the global watermark the offset log journaled (`watermarks`).
- **Two watermarks per batch.** E(N), `batchWatermarkMs` of `offsets/N`, is the watermark after
  batch N-1; eviction and append-mode emission use it. L(N) = E(N-1) (0 in batch 0, the
  `offsets/N-1` Spark reads on a restart too) filters late rows (`Watermarks.late`).
- **Lateness** is per (record, window) for a window aggregation (late when `window.end <= L(N)`:
  in a sliding window one record can be dropped from one window and counted in another) and per
  record for a deduplication (`event_time <= L(N)`). An aggregation whose key holds no event time
  filters nothing.
- **State eviction is expiration.** A state entry's event-time bound `b` (`window.end`, the event
  time of a deduplication key, a `dropDuplicatesWithinWatermark` entry's first event time plus the
  delay) is dropped at the end of the first batch N with `E(N) >= b`, after that batch's records
  updated it: no record that is not late can update it afterwards (`b <= E(N) <= L(N+1)`), and it
  is dropped by then. Append mode emits a window there, once (`complete`). A key with no event
  time is kept forever (`Bound.NONE`).
- **May.** Whether a batch with no new data runs after the watermark moved (Spark runs one while
  a `processingTime` query is up; an `availableNow` run does not) is read from the offset log,
  never assumed. Which member of a deduplication group Spark keeps when several arrive in one
  batch is a choice: `deduplicate` names every candidate, and a later member whose fate depends
  on that choice may or may not be emitted.

>>> r = lambda t, data="x": Record("k", t, data, 0, t)
>>> batches = [Batch(0, (r(35_000),)), Batch(1, ()), Batch(2, (r(15_000, "late"), r(22_000, "kept")))]
>>> marks = watermarks(batches, (10_000,))
>>> marks.eviction, marks.late(2)
((0, 25000, 25000), 25000)
>>> sorted((w.start, [x.data for x in rs]) for w, rs in aggregate(Window(10_000), batches, marks).kept.items())
[(20000, ['kept']), (30000, ['x'])]
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary.event_time import OutputMode, StatefulOperator

EVENT_TIME = Total()  # event time is a total order: a watermark is a one-element frontier of it


class Policy(enum.StrEnum):
    """How several watermarked inputs combine (`spark.sql.streaming.multipleWatermarkPolicy`)."""

    MIN = "min"  # the meet: the slowest input holds the watermark back (Spark's default)
    MAX = "max"  # the join: the fastest input moves it


class Bound(enum.StrEnum):
    """What bounds a state entry in event time: the entry is dropped once E(N) reaches the bound."""

    WINDOW_END = "window.end"  # a window aggregation's group
    SESSION_END = "session_window.end"  # a session window's session (`session.sessionize`)
    EVENT_TIME = "event_time"  # a deduplication whose key holds the watermarked column
    FIRST_PLUS_DELAY = "event_time + delay"  # dropDuplicatesWithinWatermark: its first row's time + delay
    NONE = "none"  # a key without event time: kept forever, the state grows without bound


@attrs.frozen
class Record:
    """A record as the stateful suite's source makes it (`event_time` in epoch milliseconds), with the
    columns a job derives from it before its deduplication (`derived`: `(name, value)` pairs, as the job's
    stateless prefix computed them; not part of the record's identity)."""

    key: str
    event_time: int
    data: str
    partition: int
    offset: int
    derived: tuple[tuple[str, Any], ...] = attrs.field(default=(), eq=False, repr=False)

    def field(self, name: str) -> Any:
        """The value of one of the record's columns by name, a derived one first (a job may derive a column
        under a record column's name: `withColumn("key", lower("key"))`).

        >>> Record("k", 5, "d", 0, 1).field("data")
        'd'
        >>> Record("b", 5, "d", 0, 1, derived=(("key", "a"),)).field("key")
        'a'
        """
        derived = dict(self.derived)
        return derived[name] if name in derived else getattr(self, name)


@attrs.frozen
class Batch:
    """One micro-batch as the offset log binds it: its id, its records, and whether it is the first batch a
    (re)started query ran (`run_start`: the watermark inputs' frontiers were forgotten before it)."""

    id: int
    records: tuple[Record, ...]
    run_start: bool = False
    # The event times each watermarked input saw, when the inputs read different streams; None: every
    # input saw every record.
    inputs: tuple[tuple[int, ...], ...] | None = None

    def seen(self, count: int) -> list[tuple[int, ...]]:
        """The event times each of `count` watermarked inputs saw in this batch.

        >>> Batch(0, (Record("k", 5, "", 0, 0),)).seen(2), Batch(0, (), inputs=((1,), ())).seen(2)
        ([(5,), (5,)], [(1,), ()])
        """
        if self.inputs is not None:
            return list(self.inputs)
        return [tuple(r.event_time for r in self.records)] * count


@attrs.frozen(order=True)
class Span:
    """One window of event time, `[start, end)`."""

    start: int
    end: int


@attrs.frozen
class Window:
    """A `window(event_time, duration, slide, start)` in milliseconds; tumbling when `slide` is the duration.

    >>> Window(10_000).containing(20_000)
    (Span(start=20000, end=30000),)
    >>> Window(10_000, 5_000).containing(12_000)
    (Span(start=5000, end=15000), Span(start=10000, end=20000))
    """

    duration: int
    slide: int = attrs.field()
    start: int = 0

    @slide.default
    def _tumbling(self) -> int:
        return self.duration

    def containing(self, t: int) -> tuple[Span, ...]:
        """Every window `[s, s + duration)` with `s` on the slide's grid that holds `t`, oldest first."""
        last = t - (t - self.start) % self.slide
        starts = range(last - ((self.duration - 1) // self.slide) * self.slide, last + 1, self.slide)
        return tuple(Span(s, s + self.duration) for s in starts if s <= t < s + self.duration)


@attrs.frozen
class Deduplication:
    """A deduplication an aggregation reads from (a chain, `chain.passed_on`): `dropDuplicates` or
    `dropDuplicatesWithinWatermark` (`operator`) on the record columns `keys`.

    >>> Deduplication(StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK, ("data",)).bound((5_000,))
    <Bound.FIRST_PLUS_DELAY: 'event_time + delay'>
    """

    operator: str
    keys: tuple[str, ...]

    def bound(self, delays: Sequence[int]) -> Bound:
        """What bounds its state entries in event time under watermarks of `delays`."""
        if not delays:
            return Bound.NONE
        if self.operator == StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK:
            return Bound.FIRST_PLUS_DELAY
        return Bound.EVENT_TIME if "event_time" in self.keys else Bound.NONE


@attrs.frozen
class StatefulPlan:
    """A stateful job as the model needs it: its last stateful operator (`StatefulOperator`), the delay of
    each `withWatermark` on the records' event time, the window it groups by (an aggregation), the record
    columns it keys on besides the window, its output mode, the lateness it promises to keep, the
    deduplication an aggregation reads from (`deduplication`: a chain of two operators, each with the
    query's watermarks, `dag.per_operator`), the gap of the session windows it groups by (`gap`, ms;
    `frontier_harness.model.event_time.session`), and the window of the aggregation it rolls up
    (`inner_window`: an aggregation over a window aggregation's `window_time`, `chain.carried`); its
    deduplication's keys that the job derives from a record's columns (`derived`: their values observed), and
    the record keys those derived keys merge into one group (`merged_keys`: a record of one is a duplicate of a
    record of another).

    >>> StatefulPlan(StatefulOperator.AGGREGATION, (10_000,), Window(10_000), ("key",)).bound
    <Bound.WINDOW_END: 'window.end'>
    >>> StatefulPlan(StatefulOperator.DEDUPLICATION, (10_000,), None, ("key", "data")).bound
    <Bound.NONE: 'none'>
    """

    operator: str
    delays: tuple[int, ...]
    window: Window | None = None
    keys: tuple[str, ...] = ()
    output_mode: str = OutputMode.APPEND
    lateness: int | None = None
    deduplication: Deduplication | None = None
    gap: int | None = None
    time_mode: str | None = (
        None  # a user's processor's (`StatefulOperator.PROCESSOR`): what its timers fire by
    )
    prefix: str | None = None  # where it filters before its operator (a `Prefix`): read as the filters pass
    kept_keys: tuple[str, ...] = ()  # under a prefix, the keys whose records it passes (probed), if known
    inner_window: Window | None = None  # a roll-up's: the window of the aggregation below it
    derived: tuple[str, ...] = ()  # the deduplication's keys the job derives from a record (`Record.derived`)
    merged_keys: tuple[tuple[str, ...], ...] = ()  # record keys whose derived keys are one group's (probed)

    @property
    def record_window(self) -> Window | None:
        """The window a record is late for: the inner aggregation's under a roll-up, else the job's.

        >>> StatefulPlan("aggregation", (5_000,), Window(30_000), inner_window=Window(10_000)).record_window
        Window(duration=10000, slide=10000, start=0)
        """
        return self.inner_window or self.window

    @property
    def bound(self) -> Bound:
        """What bounds the last operator's state entries in event time (`Bound.NONE`: nothing evicts them, or,
        for a user's processor, nothing the model knows of: the processor clears its own state)."""
        if self.operator == StatefulOperator.PROCESSOR:
            return Bound.NONE
        if self.operator != StatefulOperator.AGGREGATION:
            return Deduplication(self.operator, self.keys).bound(self.delays)
        if not self.delays:
            return Bound.NONE
        if self.gap is not None:
            return Bound.SESSION_END
        return Bound.WINDOW_END if self.window is not None else Bound.NONE

    @property
    def within_watermark(self) -> bool:
        """Whether a `dropDuplicatesWithinWatermark` is among its operators (its duplicates may differ in
        event time).

        >>> StatefulPlan(StatefulOperator.AGGREGATION, (5_000,), Window(10_000), (), "append", None,
        ...     Deduplication(StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK, ("data",))).within_watermark
        True
        """
        within = StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK
        return self.operator == within or (
            self.deduplication is not None and self.deduplication.operator == within
        )

    @property
    def deduplicated_on(self) -> tuple[str, ...] | None:
        """The record columns its deduplication keys on (the last operator's or the chain's first), if any."""
        if self.deduplication is not None:
            return self.deduplication.keys
        return None if self.operator == StatefulOperator.AGGREGATION else self.keys

    @property
    def delay(self) -> int:
        """The delay of the watermark the query ends up with when every input sees every record: the
        largest under `min`, which a single watermark's delay is too."""
        return max(self.delays, default=0)


@attrs.frozen
class Watermarks:
    """E(N) for every batch N in order (`eviction`), and the watermark after the last batch (`next`)."""

    eviction: tuple[int, ...]
    next: int

    def late(self, batch: int) -> int:
        """L(N) = E(N-1): the watermark batch N filters late rows with (0 for batch 0).

        >>> Watermarks((0, 7, 9), 9).late(0), Watermarks((0, 7, 9), 9).late(2)
        (0, 7)
        """
        return self.eviction[batch - 1] if batch > 0 else 0

    def complete(self, bound: int, batch: int) -> bool:
        """Whether a state entry bounded by `bound` is complete (emitted, evicted) in batch `batch`."""
        return EVENT_TIME.le(bound, self.eviction[batch])


def combine(frontiers: Sequence[int], policy: Policy) -> int:
    """The query's watermark from its inputs' frontiers: their meet (`min`) or their join (`max`).

    >>> combine([40, 10], Policy.MIN), combine([40, 10], Policy.MAX)
    (10, 40)
    """
    pick = EVENT_TIME.meet if policy is Policy.MIN else EVENT_TIME.join
    combined = frontiers[0]
    for frontier in frontiers[1:]:
        combined = pick(combined, frontier)
    return combined


def watermarks(batches: Sequence[Batch], delays: Sequence[int], policy: Policy = Policy.MIN) -> Watermarks:
    """E(N) of each batch, batches in id order from 0 (`delays`: one per watermarked input).

    Each input's frontier is the newest event time it saw in this run minus its delay, and only rises;
    the global watermark is their combination, an input that saw nothing counting as 0, and only rises.
    A batch that starts a run forgets the inputs' frontiers, not the global watermark.

    >>> two = lambda i, a, b, start=False: Batch(i, (), start, inputs=(a, b))  # two sources, two inputs
    >>> watermarks([two(0, (50,), ()), two(1, (), (30,)), two(2, (), ())], (10, 20)).eviction  # min(40, 10)
    (0, 0, 10)
    >>> watermarks([two(0, (50,), ()), two(1, (), (30,)), two(2, (), ())], (10, 20), Policy.MAX).eviction
    (0, 40, 40)
    >>> watermarks([two(0, (50,), ()), two(1, (), (30,)), two(2, (), (31,), True)], (10, 20)).next
    10
    """
    inputs: list[int | None] = [None] * len(delays)
    current, eviction = 0, []
    for batch in batches:
        if batch.run_start:
            inputs = [None] * len(delays)
        eviction.append(current)
        for i, (times, delay) in enumerate(zip(batch.seen(len(delays)), delays)):
            seen = inputs[i]
            if times:
                frontier = max(times) - delay
                inputs[i] = frontier if seen is None else max(seen, frontier)
        if delays:
            current = max(current, combine([0 if seen is None else seen for seen in inputs], policy))
    return Watermarks(tuple(eviction), current)


@attrs.frozen
class Aggregated:
    """What a window aggregation keeps: per window the records that count (`kept`), the (record, window)
    pairs dropped as late (`late`), and the batch each window was complete in (`completed`)."""

    kept: Mapping[Span, tuple[Record, ...]]
    late: tuple[tuple[Record, Span], ...]
    completed: Mapping[Span, int]


def aggregate(window: Window, batches: Sequence[Batch], marks: Watermarks) -> Aggregated:
    """A window aggregation over `batches`: lateness per (record, window) with L(N), and each window
    complete (emitted in append mode, evicted) in the first batch N with `E(N) >= window.end`.

    >>> r = lambda t: Record("k", t, str(t), 0, 0)
    >>> marks = Watermarks((0, 15_000, 15_000, 20_000), 20_000)
    >>> batches = [Batch(0, (r(20_000),)), Batch(1, ()), Batch(2, (r(11_000),)), Batch(3, ())]
    >>> agg = aggregate(Window(10_000, 5_000), batches, marks)
    >>> [(r.data, s.end) for r, s in agg.late], [(s.end, b) for s, b in agg.completed.items()]
    ([('11000', 15000)], [(20000, 3)])
    """
    kept: dict[Span, list[Record]] = {}
    late: list[tuple[Record, Span]] = []
    completed: dict[Span, int] = {}
    for batch in batches:
        floor = marks.late(batch.id)
        for record in batch.records:
            for span in window.containing(record.event_time):
                if EVENT_TIME.le(span.end, floor):
                    late.append((record, span))
                else:
                    kept.setdefault(span, []).append(record)
        for span in kept:
            if span not in completed and marks.complete(span.end, batch.id):
                completed[span] = batch.id
    return Aggregated({s: tuple(rs) for s, rs in kept.items()}, tuple(late), completed)


@attrs.frozen
class Emission:
    """A deduplication group's row: emitted in `batch` as one of `candidates` (several: Spark's choice),
    `certain` unless whether it is emitted at all depends on an earlier choice."""

    group: tuple
    candidates: tuple[Record, ...]
    batch: int
    certain: bool = True


@attrs.frozen
class Deduplicated:
    """What a deduplication emits (`emitted`, in order), and the records it drops as late (`late`)."""

    emitted: tuple[Emission, ...]
    late: tuple[Record, ...]


def deduplicate(
    keys: Sequence[str],
    bound: Bound,
    batches: Sequence[Batch],
    marks: Watermarks,
    delay: int = 0,
    watermarked: bool = True,
) -> Deduplicated:
    """A deduplication on the record columns `keys`.

    Under a watermark a record with `event_time <= L(N)` is late (whatever the key holds). A group whose
    entry is in the state drops its records; otherwise one of the group's records of the batch is
    emitted (Spark's choice among `candidates`) and stored, the entry bounded by `bound` (`delay` for
    `FIRST_PLUS_DELAY`) and dropped at the end of the first batch whose E reaches the bound. When the
    candidates' bounds differ, so may the entry's: a later record whose fate depends on it is an
    uncertain emission.

    >>> r = lambda t, off: Record("k", t, "d", 0, off)
    >>> marks = Watermarks((0, 0, 15_000, 15_000), 15_000)
    >>> out = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, [Batch(0, (r(10_000, 0),)), Batch(1, ()),
    ...     Batch(2, (r(16_000, 1),)), Batch(3, (r(17_000, 2),))], marks, delay=5_000)
    >>> [(e.batch, [c.offset for c in e.candidates]) for e in out.emitted]  # batch 2's record: still held
    [(0, [0]), (3, [2])]
    """
    state: dict[tuple, tuple[int, int]] = {}  # group -> the entry's bound, as an interval (a choice)
    emitted: list[Emission] = []
    late: list[Record] = []
    for batch in batches:
        floor = marks.late(batch.id)  # E(N-1): late rows below it, and the state it left
        fresh: dict[tuple, list[Record]] = {}
        for record in batch.records:
            if watermarked and EVENT_TIME.le(record.event_time, floor):
                late.append(record)
            else:
                fresh.setdefault(tuple(record.field(k) for k in keys), []).append(record)
        for group, records in fresh.items():
            entry = state.get(group)
            if entry is not None and not EVENT_TIME.le(entry[0], floor):
                continue  # held for sure: every record of the group is dropped
            bounds = [_bound(bound, r, delay) for r in records]
            certain = entry is None or EVENT_TIME.le(entry[1], floor)
            emitted.append(Emission(group, tuple(records), batch.id, certain))
            if entry is not None and not certain:
                bounds += list(entry)  # held or not: the entry is the old one or a new one
            state[group] = (min(bounds), max(bounds))
        state = {g: (lo, hi) for g, (lo, hi) in state.items() if not marks.complete(hi, batch.id)}
    return Deduplicated(tuple(emitted), tuple(late))


NEVER = 2**63 - 1  # the bound of an entry whose key holds no event time: no watermark reaches it


def _bound(bound: Bound, record: Record, delay: int) -> int:
    if bound is Bound.FIRST_PLUS_DELAY:
        return record.event_time + delay
    if bound is Bound.EVENT_TIME:
        return record.event_time
    return NEVER
