"""What a stream-stream join job's result must hold after a trial's step, by the model's join
(`frontier_harness.model.event_time.join`), never by Spark's engine nor by the job's code.

A step is read as the model reads a join's query (`read_join_step`): each side's records fall into the batches
that side's source logged (its own offsets in `offsets/N`, reclocked as `committed.committed_batches` does for
one source); the query's watermarks follow from the watermarked sides' event times (`stateful.watermarks`,
one input per watermarked side, the policy the checkpoint pinned), and the join's own from the operator DAG
(`dag.per_operator`). A joined row is named by the records it joins, the pair of `data` values in the
output's two data columns (`JoinPlan.data_columns`; None for the side an outer row has nulls on), so the
result must hold, as a multiset (`expected_pairs`): each pair the model's join emits in the committed
batches, and each outer row it emits there, once.

>>> from frontier_harness.model.event_time.join import JoinPlan, JoinType, StreamJoin, TimeRange
>>> plan = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000)), (5_000, 5_000), "append", ("l", "r"))
>>> pairs_of(plan, Counter({(("k", "a"), ("l", "L1"), ("r", "R0")): 2}))
Counter({('L1', 'R0'): 2})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from frontier_harness.model.event_time.chain import counted
from frontier_harness.model.event_time.dag import Node, Passing, per_operator
from frontier_harness.model.event_time.join import Joined, JoinPlan, Side, join
from frontier_harness.model.event_time.stateful import Batch, Record, Span, Watermarks, watermarks
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import StreamingAction, StreamingLabel
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import policy_of
from frontier_harness.properties.checks.streaming.committed import committed_batches
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Outcome

Pair = tuple  # (left data, right data), None on an outer row's null side


@attrs.frozen
class JoinStep:
    """One step of a join trial as the model reads it: each side's batches (every batch logged, in id order),
    the committed ones, the query's watermarks (`marks`) and the join's (`own`)."""

    step: int
    left: tuple[Batch, ...]
    right: tuple[Batch, ...]
    committed: frozenset[int]
    marks: Watermarks
    own: Watermarks

    def done(self, side: Side) -> tuple[Batch, ...]:
        """`side`'s committed batches."""
        return tuple(b for b in (self.left if side is Side.LEFT else self.right) if b.id in self.committed)

    @property
    def last(self) -> int | None:
        return max(self.committed, default=None)


def sides_of(history: History) -> dict[str, Side]:
    """Each record's side, by its `data` (unique in a join's history)."""
    return {
        a.args[Arg.DATA]: Side(a.args[IngestionArg.SIDE])
        for a in history.actions
        if a.name == StreamingAction.PRODUCE
    }


def read_join_step(history: History, obs: Observation, step: int, plan: JoinPlan) -> JoinStep | Outcome:
    """The join trial at `step` as the model reads it, or the failing outcome `committed_batches` gives."""
    sides = sides_of(history)
    per_side: dict[Side, dict[int, list]] = {}
    offsets = obs.get((step, StreamingLabel.SIDE_OFFSETS), frozenset())
    for side in Side:
        own = frozenset((b, f) for b, s, f in offsets if s == side)
        logged = committed_batches(
            history, {**obs, (step, StreamingLabel.OFFSETS): own}, step, uncommitted=True
        )
        if isinstance(logged, Outcome):
            return logged
        per_side[side] = {b: [r for r in rs if sides[r[2]] is side] for b, rs in logged.items()}
    ids = {b for b, *_ in obs[(step, StreamingLabel.OFFSET_METADATA)]}
    starts = {b for (b,) in obs.get((step, StreamingLabel.RUNS), ())}
    count = max(ids, default=-1) + 1

    def batches(side: Side) -> tuple[Batch, ...]:
        return tuple(
            Batch(b, tuple(Record(*r) for r in per_side[side].get(b, [])), b in starts) for b in range(count)
        )

    left, right = batches(Side.LEFT), batches(Side.RIGHT)
    watermarked = [s for s in Side if plan.side_delay(s) is not None]
    inputs = [
        Batch(
            b,
            (),
            b in starts,
            inputs=tuple(_times(left[b] if s is Side.LEFT else right[b]) for s in watermarked),
        )
        for b in range(count)
    ]
    marks = watermarks(inputs, plan.watermarked_delays, policy_of(obs, step))
    committed = frozenset(obs[(step, StreamingLabel.COMMITS)])
    return JoinStep(step, left, right, committed, marks, join_marks(plan, marks))


def _times(batch: Batch) -> tuple[int, ...]:
    return tuple(r.event_time for r in batch.records)


def join_marks(plan: JoinPlan, marks: Watermarks) -> Watermarks:
    """The join's own watermarks from the query's: the join over its two sides, each under its
    `withWatermark` or not (`dag.per_operator`)."""
    return per_operator(_dag(plan), marks)["join"]


def count_marks(plan: JoinPlan, marks: Watermarks) -> Watermarks:
    """The watermarks of the aggregation over the join (`JoinPlan.counted`): its input is the join's output
    watermark, the least of the join's state watermarks and its input (`dag.per_operator`).

    >>> from frontier_harness.model.event_time.join import CountedWindows, StreamJoin, JoinType, TimeRange
    >>> from frontier_harness.model.event_time.stateful import Window
    >>> counts = CountedWindows(Window(10_000), Side.LEFT, "key", ("key", "window", "n"))
    >>> plan = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000)), (5_000, 5_000), counted=counts)
    >>> count_marks(plan, Watermarks((0, 20_000, 20_001), 20_001))
    Watermarks(eviction=(0, 9999, 10000), next=10000)
    """
    return per_operator(_dag(plan), marks)["count"]


def _dag(plan: JoinPlan) -> Node:
    def side(name: str, delay: int | None) -> Node:
        source = Node(f"{name}_source", Passing.SOURCE)
        return source if delay is None else Node(name, Passing.WATERMARK, (source,))

    root = Node(
        "join", Passing.JOIN, (side("left", plan.delays[0]), side("right", plan.delays[1])), plan.join
    )
    return root if plan.counted is None else Node("count", Passing.STATEFUL, (root,))


def joined(plan: JoinPlan, trial: JoinStep) -> Joined:
    """The model's join over the committed batches under the join's own watermarks."""
    return join(plan.join, trial.done(Side.LEFT), trial.done(Side.RIGHT), trial.own)


def expected_pairs(out: Joined) -> Counter:
    """The rows (as pairs) the result must hold: each joined pair and each outer row, once.

    >>> from frontier_harness.model.event_time.join import Pair as Joint, Unmatched
    >>> r = lambda d: Record("k", 0, d, 0, 0)
    >>> out = Joined((Joint(r("l1"), r("r1"), 0),), (Unmatched(Side.LEFT, r("l2"), 1),), (), {}, ())
    >>> sorted(expected_pairs(out).items(), key=repr)
    [(('l1', 'r1'), 1), (('l2', None), 1)]
    """
    found: Counter = Counter((p.left.data, p.right.data) for p in out.matched)
    for u in out.unmatched:
        found[(u.record.data, None) if u.side is Side.LEFT else (None, u.record.data)] += 1
    return found


def counted_windows(plan: JoinPlan, trial: JoinStep) -> dict[tuple[Any, Span], tuple[int, int]]:
    """The model's count per key and window over the join of the committed batches (`chain.counted`): each
    complete window's count and the batch it is emitted in."""
    assert plan.counted is not None, "a counted join"
    return counted(
        joined(plan, trial), trial.done(plan.counted.side), plan.counted, count_marks(plan, trial.marks)
    )


def expected_counts(plan: JoinPlan, trial: JoinStep) -> Counter:
    """The rows a job counting the join's pairs per window (`plan.counted`) must hold: each window the model
    completes in a committed batch, per key, with its count, as `(key, (start, end), count)`."""
    found = counted_windows(plan, trial)
    return Counter({(key, (span.start, span.end), n): 1 for (key, span), (n, _) in found.items()})


def actual_counts(plan: JoinPlan, obs: Observation, step: int) -> Counter:
    """What the job's `read(spark)` returned after `step`, as `(key, (start, end), count)`.

    >>> from frontier_harness.model.event_time.join import CountedWindows, StreamJoin, JoinType, TimeRange
    >>> from frontier_harness.model.event_time.stateful import Window
    >>> counts = CountedWindows(Window(10_000), Side.LEFT, "key", ("key", "window", "n"))
    >>> plan = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10_000)), (5_000, 5_000), counted=counts)
    >>> row = (("key", "a"), ("n", 2), ("window", (("end", 10_000), ("start", 0))))
    >>> actual_counts(plan, {(3, StreamingLabel.JOB_ROWS): frozenset({(row, 1)})}, 3)
    Counter({('a', (0, 10000), 2): 1})
    """
    assert plan.counted is not None, "a counted join"
    key, window, count = plan.counted.columns
    found: Counter = Counter()
    for row, n in obs.get((step, StreamingLabel.JOB_ROWS), frozenset()):
        values = dict(row)
        span = dict(values.get(window) or ())
        found[(values.get(key), (span.get("start"), span.get("end")), values.get(count))] += n
    return found


def pairs_of(plan: JoinPlan, rows: Counter) -> Counter:
    """The job's rows as pairs of the `data` in its two data columns."""
    left, right = plan.data_columns
    found: Counter = Counter()
    for row, n in rows.items():
        values = dict(row)
        found[(values.get(left), values.get(right))] += n
    return found


def actual_pairs(plan: JoinPlan, obs: Observation, step: int) -> Counter:
    """What the job's `read(spark)` returned after `step`, as pairs."""
    return pairs_of(plan, Counter(dict(obs.get((step, StreamingLabel.JOB_ROWS), frozenset()))))


def batch_of(trial: JoinStep, side: Side, data: str) -> int | None:
    """The committed batch `side`'s record `data` came in."""
    return next((b.id for b in trial.done(side) for r in b.records if r.data == data), None)


def records_of(trial: JoinStep) -> dict[str, tuple[Side, Record]]:
    """Every committed record by its data, with its side."""
    return {r.data: (side, r) for side in Side for b in trial.done(side) for r in b.records}


def show_pairs(pairs: Sequence[Pair] | Counter, trial: JoinStep) -> str:
    """Pairs as a failure names them: each record's data, side, event time and batch."""
    records = records_of(trial)

    def one(data: str | None) -> str:
        if data is None:
            return "null"
        if data not in records:
            return repr(data)
        side, record = records[data]
        return f"{data} ({side} {record.key!r}@{record.event_time}, batch {batch_of(trial, side, data)})"

    return "; ".join(f"({one(left)}, {one(right)})" for left, right in sorted(pairs, key=repr))
