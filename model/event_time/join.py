"""A stream-stream join in Spark's micro-batches: which rows match, when each side's state goes, when an outer
row is emitted.

Spark 4.3's `StreamingSymmetricHashJoinExec` (with `StreamingSymmetricHashJoinHelper.getStateWatermark` and
catalyst's `StreamingJoinHelper.getStateValueWatermark`), each rule pinned against a real query by
`tests/test_spark_stateful_operators.py`:

- **Late rows, per side.** A side whose rows carry a watermarked column drops a row with `event_time <= L`,
  L the join's late-row watermark (its input watermark of the batch before); a side without a watermark
  drops nothing.
- **Matching.** A left and a right row join when their keys are equal and the time-range condition holds,
  neither was late, and the one that came first was still in its side's state when the other came: rows of
  one batch always meet (each side's new rows are stored, then matched against the other side's state).
- **State goes by the other side's watermark plus the range.** With `right + lower <= left <= right +
  upper`, the left side's state watermark is `E + lower` and the right side's `E - upper`, less 1 ms for an
  inclusive bound (`getStateValueWatermark` cleans up `t <= W` and so solves `t >= W` as `W - 1`); at the
  end of each batch a side drops its rows at or below its state watermark, E the join's eviction watermark.
  A side's state has a watermark only when *both* sides carry a watermark and the condition bounds that side
  from below; otherwise it is never dropped (SPARK-46350 proposed evicting by the other side's watermark
  alone; 4.3 does not: with one watermarked side neither side is ever evicted).
- **Outer rows.** A left (right) outer join emits a row of its outer side with nulls in the batch that drops
  it from the state, unless it ever matched (SPARK-26154's `matched` flag): also in the batch it came in,
  when it is dropped at once (SPARK-49829). A side never dropped never emits its unmatched rows.
- **Output watermark.** The join passes on `min(left state watermark, right state watermark, input)`
  (`produceOutputWatermark`): an operator after it evicts that much later (`dag.py`).

Times are epoch milliseconds; the condition's constants are whole milliseconds, so Spark's microsecond
arithmetic (`(W * 1000 + c) / 1000`) is exact here.

>>> r = lambda key, t, data: Record(key, t, data, 0, 0)
>>> spec = StreamJoin(JoinType.LEFT_OUTER, TimeRange(0, 10_000))  # right <= left <= right + 10 s
>>> left = [Batch(0, (r("a", 20_000, "l1"), r("b", 20_000, "l2"))), Batch(1, ()), Batch(2, ())]
>>> right = [Batch(0, (r("b", 15_000, "r2"),)), Batch(1, ()), Batch(2, ())]
>>> out = join(spec, left, right, Watermarks((0, 20_000, 20_001), 20_001))
>>> [(p.left.data, p.right.data, p.batch) for p in out.matched], [(u.record.data, u.batch) for u in out.unmatched]
([('l2', 'r2', 0)], [('l1', 2)])
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

import attrs

from frontier_harness.model.event_time.stateful import EVENT_TIME, Batch, Record, Watermarks, Window


class Side(enum.StrEnum):
    """One input of a join."""

    LEFT = "left"
    RIGHT = "right"

    @property
    def other(self) -> Side:
        """The other input.

        >>> Side.LEFT.other
        <Side.RIGHT: 'right'>
        """
        return Side.RIGHT if self is Side.LEFT else Side.LEFT


class JoinType(enum.StrEnum):
    """The stream-stream joins the model states (full outer and left semi are not stated)."""

    INNER = "inner"
    LEFT_OUTER = "leftOuter"
    RIGHT_OUTER = "rightOuter"

    @property
    def outer(self) -> Side | None:
        """The side whose unmatched rows are emitted with nulls, if any."""
        return {JoinType.LEFT_OUTER: Side.LEFT, JoinType.RIGHT_OUTER: Side.RIGHT}.get(self)


@attrs.frozen
class TimeRange:
    """The join's time-range condition on the two event times: `right + lower <= left <= right + upper`
    (`<` where `strict_*`; a bound None when the condition has none that way).

    >>> TimeRange(0, 10_000).holds(20_000, 10_000), TimeRange(0, 10_000, strict_upper=True).holds(20_000, 10_000)
    (True, False)
    """

    lower: int | None
    upper: int | None
    strict_lower: bool = False
    strict_upper: bool = False

    def holds(self, left: int, right: int) -> bool:
        """Whether a left row at `left` and a right row at `right` satisfy the condition."""
        above = self.lower is None or (
            left > right + self.lower if self.strict_lower else left >= right + self.lower
        )
        below = self.upper is None or (
            left < right + self.upper if self.strict_upper else left <= right + self.upper
        )
        return above and below


@attrs.frozen
class StreamJoin:
    """A stream-stream join on equal `keys` (record columns) and a `TimeRange`, each side watermarked or not.

    >>> StreamJoin(JoinType.INNER, TimeRange(0, 10_000)).state_watermark(Side.RIGHT, 35_000)
    24999
    >>> StreamJoin(JoinType.INNER, TimeRange(0, 10_000), right_watermarked=False).state_watermark(Side.LEFT, 35_000)
    """

    how: JoinType
    range: TimeRange
    keys: tuple[str, ...] = ("key",)
    left_watermarked: bool = True
    right_watermarked: bool = True

    def watermarked(self, side: Side) -> bool:
        """Whether `side`'s rows carry a watermarked column (its late rows are dropped)."""
        return self.left_watermarked if side is Side.LEFT else self.right_watermarked

    def state_watermark(self, side: Side, eviction: int) -> int | None:
        """The event time at or below which `side`'s stored rows are dropped under eviction watermark
        `eviction`; None when nothing drops them (a side or the other unwatermarked, or no bound)."""
        if not (self.left_watermarked and self.right_watermarked):
            return None
        if side is Side.LEFT:
            if self.range.lower is None:
                return None
            return eviction + self.range.lower - (0 if self.range.strict_lower else 1)
        if self.range.upper is None:
            return None
        return eviction - self.range.upper - (0 if self.range.strict_upper else 1)

    def bound(self, side: Side, record: Record) -> int | None:
        """The eviction watermark that drops `record` from `side`'s state (None: never), the expiration
        form of `state_watermark`: dropped once `E >= bound`.

        >>> spec = StreamJoin(JoinType.INNER, TimeRange(0, 10_000))
        >>> spec.bound(Side.LEFT, Record("k", 20_000, "", 0, 0)), spec.bound(Side.RIGHT, Record("k", 20_000, "", 0, 0))
        (20001, 30001)
        """
        zero = self.state_watermark(side, 0)
        return None if zero is None else record.event_time - zero

    def output_watermark(self, input_watermark: int) -> int:
        """What the join passes on: the least of its sides' state watermarks and its input watermark.

        >>> StreamJoin(JoinType.INNER, TimeRange(0, 10_000)).output_watermark(20_000)
        9999
        """
        marks = [self.state_watermark(side, input_watermark) for side in Side]
        return min([m for m in marks if m is not None] + [input_watermark])

    def matches(self, left: Record, right: Record) -> bool:
        """Whether a left and a right row join: equal keys and the time range."""
        same = all(left.field(k) == right.field(k) for k in self.keys)
        return same and self.range.holds(left.event_time, right.event_time)


@attrs.frozen
class Pair:
    """A joined row, emitted in `batch` (the batch the later of the two came in)."""

    left: Record
    right: Record
    batch: int


@attrs.frozen
class Unmatched:
    """An outer row: `record` of `side` with nulls for the other side, emitted in `batch`."""

    side: Side
    record: Record
    batch: int


@attrs.frozen
class Joined:
    """What a join emits (`matched`, `unmatched`, in order), the rows it dropped as late, and each side's state
    after the last batch (`state`); `unbounded` names the sides no watermark ever evicts."""

    matched: tuple[Pair, ...]
    unmatched: tuple[Unmatched, ...]
    late: tuple[tuple[Side, Record], ...]
    state: Mapping[Side, tuple[Record, ...]]
    unbounded: tuple[Side, ...]


@attrs.define
class _Entry:
    record: Record
    matched: bool = False


def join(spec: StreamJoin, left: Sequence[Batch], right: Sequence[Batch], marks: Watermarks) -> Joined:
    """The join over the two inputs' batches (the same ids, in order from 0) under the join's own watermarks
    (`dag.per_operator` gives them; for a join over two watermarked sources they are the query's)."""
    state: dict[Side, list[_Entry]] = {Side.LEFT: [], Side.RIGHT: []}
    matched: list[Pair] = []
    unmatched: list[Unmatched] = []
    late: list[tuple[Side, Record]] = []
    for batches in zip(left, right):
        n = batches[0].id
        for side, batch in zip(Side, batches):
            fresh = []
            for record in batch.records:
                if spec.watermarked(side) and EVENT_TIME.le(record.event_time, marks.late(n)):
                    late.append((side, record))
                else:
                    fresh.append(_Entry(record))
            for entry in fresh:  # the left's new rows meet the right's stored rows; the right's meet all
                for other in state[side.other]:
                    pair = (entry, other) if side is Side.LEFT else (other, entry)
                    if spec.matches(pair[0].record, pair[1].record):
                        entry.matched = other.matched = True
                        matched.append(Pair(pair[0].record, pair[1].record, n))
            state[side].extend(fresh)
        for side in Side:
            kept = []
            for entry in state[side]:
                bound = spec.bound(side, entry.record)
                if bound is None or not EVENT_TIME.le(bound, marks.eviction[n]):
                    kept.append(entry)
                elif side is spec.how.outer and not entry.matched:
                    unmatched.append(Unmatched(side, entry.record, n))
            state[side] = kept
    unbounded = tuple(side for side in Side if spec.state_watermark(side, 0) is None)
    return Joined(
        tuple(matched),
        tuple(unmatched),
        tuple(late),
        {side: tuple(e.record for e in entries) for side, entries in state.items()},
        unbounded,
    )


@attrs.frozen
class CountedWindows:
    """An append-mode count of a join's rows per join key (`key`, a record column of `side`) and `window` of
    `side`'s event time, over the join (`chain.counted`), and the output columns holding the key, the window
    and the count.

    >>> CountedWindows(Window(10_000), Side.LEFT, "key", ("key", "window", "clicks")).side
    <Side.LEFT: 'left'>
    """

    window: Window
    side: Side
    key: str
    columns: tuple[str, str, str]


@attrs.frozen
class JoinPlan:
    """A stream-stream join job as the stateful suite needs it: its join (`StreamJoin`), each side's watermark
    delay in ms (None: the side has no watermark), its output mode, and the output columns that hold each
    side's `data` (`data_columns`, left then right): a joined row is named by the records it joins; for a job
    that counts the joined rows per window (`counted`), its output is the counts.

    >>> plan = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000), right_watermarked=False), (5_000, None))
    >>> plan.watermarked_delays, plan.delay
    ((5000,), 5000)
    """

    join: StreamJoin
    delays: tuple[int | None, int | None]
    output_mode: str = "append"
    data_columns: tuple[str, str] = ("left_data", "right_data")
    counted: CountedWindows | None = None

    @property
    def watermarked_delays(self) -> tuple[int, ...]:
        """The delays of the watermarked sides, left first: the query's watermarked inputs."""
        return tuple(d for d in self.delays if d is not None)

    @property
    def delay(self) -> int:
        """The largest delay of a watermarked side (0 when none is)."""
        return max(self.watermarked_delays, default=0)

    def side_delay(self, side: Side) -> int | None:
        """`side`'s watermark delay, None when it has none."""
        return self.delays[0] if side is Side.LEFT else self.delays[1]
