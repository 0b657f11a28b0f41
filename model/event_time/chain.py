"""Chained stateful operators: what one operator emits becomes the next one's input, batch by batch.

Spark 4.3 runs a chain of stateful operators in append mode within each micro-batch: the rows an operator
emits in batch N are the next operator's input in batch N, judged with that operator's own watermarks
(`dag.per_operator`). Pinned against real queries by `tests/test_spark_stateful_operators.py`:

- **Deduplication, then an aggregation.** The deduplication passes on the rows it keeps, their event
  times unchanged; a duplicate it drops is counted nowhere, whatever window its own event time falls in.
- **Aggregation, then an aggregation.** A window aggregation emits a window once it completes; downstream,
  its event time is `window_time(window)`, the window's end less 1 microsecond (`window(window_time(w),
  ...)`, or a `window` over the window column itself). On windows whose grid is whole milliseconds, the
  windows that hold `end - 1 µs` are those that hold `end - 1 ms`, which is what the model carries. A window
  emitted in batch N has `end > E(N-1)`, so it is not late downstream (`L(N) = E(N-1)`): the next operator
  counts it in batch N, and emits its own window in the same batch when E(N) reaches that window's end
  (before Spark 3.4 one watermark did both, and such rows were dropped as late: SPARK-40925).
- **A processor, then an aggregation.** `transformWithState` in event time passes its input watermark on
  (`dag.py`) when it names a timestamp column of its output its event time (`eventTimeColumnName`); the next
  operator judges each row by that column. Spark fails the query at a row at or before the processor's own
  late-rows watermark `L_op(N)` (`stamped_in_time`), so what a processor emits is never late downstream.
- **Join, then an aggregation.** A joined row carries both sides' event times; the next operator uses the
  one the job keeps (`paired`), under the join's output watermark (`dag.py`); a count per key and window
  over the join (`counted`) emits a window once that watermark, not the query's, passes its end.

>>> from frontier_harness.model.event_time.stateful import Watermarks, Window, aggregate
>>> r = lambda t, data: Record("a", t, data, 0, 0)
>>> batches = [Batch(0, (r(5_000, "a5"), r(15_000, "a15"))), Batch(1, ()), Batch(2, ())]
>>> marks = Watermarks((0, 15_000, 20_000), 20_000)
>>> first = aggregate(Window(10_000), batches, marks)
>>> second = aggregate(Window(20_000), carried(first, batches), marks)
>>> [(s.end, [x.data for x in rows], second.completed[s]) for s, rows in second.kept.items()]
[(20000, ['0:10000', '10000:20000'], 2)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.errors import UndecidedChoice
from frontier_harness.model.event_time.join import CountedWindows, Joined, Side
from frontier_harness.model.event_time.stateful import (
    Aggregated,
    Batch,
    Deduplicated,
    Record,
    Span,
    Watermarks,
    aggregate,
)


def carried(aggregated: Aggregated, batches: Sequence[Batch]) -> list[Batch]:
    """An append-mode window aggregation's output as the next operator's input: each window, in the batch it
    completed, as a record at `end - 1` (its `window_time`) whose `data` is `start:end` and whose `offset` is
    its start."""
    done: dict[int, list[Record]] = {}
    for span, batch in sorted(aggregated.completed.items(), key=lambda item: (item[1], item[0])):
        row = Record("", span.end - 1, f"{span.start}:{span.end}", 0, span.start)
        done.setdefault(batch, []).append(row)
    return [Batch(b.id, tuple(done.get(b.id, ())), b.run_start) for b in batches]


def stamped_in_time(stamp_ms: int, late_ms: int) -> bool:
    """Whether Spark accepts a row a processor emits in batch N stamped `stamp_ms` in its event-time column,
    its late-rows watermark `late_ms` (`L_op(N)`): a row at or before it fails the query with
    `EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED`, as a record there is late; one after it is late for no
    operator downstream.

    >>> stamped_in_time(7_001, 7_000), stamped_in_time(7_000, 7_000)
    (True, False)
    """
    return stamp_ms > late_ms


def passed_on(deduplicated: Deduplicated, batches: Sequence[Batch]) -> list[Batch]:
    """A deduplication's output as the next operator's input: each group's emitted record in its batch.

    Where Spark's choice decides what is passed on (candidates that differ in event time or data, or an
    emission that depends on an earlier choice), the next operator's input is not one thing: `UndecidedChoice`.

    >>> from frontier_harness.model.event_time.stateful import Emission
    >>> passed_on(Deduplicated((Emission(("x",), (Record("x", 1, "p", 0, 0), Record("x", 2, "q", 0, 1)), 0),), ()), [Batch(0, ())])
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.UndecidedChoice: group ('x',) passes on one of ['p', 'q'], which differ: the next operator's input depends on Spark's choice
    """
    out: dict[int, list[Record]] = {}
    for emission in deduplicated.emitted:
        first = emission.candidates[0]
        differ = any((c.event_time, c.data) != (first.event_time, first.data) for c in emission.candidates)
        if differ or not emission.certain:
            raise UndecidedChoice(emission.group, [c.data for c in emission.candidates])
        out.setdefault(emission.batch, []).append(first)
    return [Batch(b.id, tuple(out.get(b.id, ())), b.run_start) for b in batches]


def paired(joined: Joined, batches: Sequence[Batch], side: Side) -> list[Batch]:
    """A join's output as the next operator's input, keeping `side`'s event time: each matched pair (its
    `data` is `left|right`) and each unmatched row of `side`, in the batch it was emitted. Unmatched rows of
    the other side have no event time in that column; the model states nothing about them downstream.
    """
    out: dict[int, list[Record]] = {}
    for pair in joined.matched:
        kept = pair.left if side is Side.LEFT else pair.right
        row = Record(kept.key, kept.event_time, f"{pair.left.data}|{pair.right.data}", 0, kept.offset)
        out.setdefault(pair.batch, []).append(row)
    for lone in joined.unmatched:
        if lone.side is side:
            out.setdefault(lone.batch, []).append(lone.record)
    return [Batch(b.id, tuple(out.get(b.id, ())), b.run_start) for b in batches]


def counted(
    joined: Joined, batches: Sequence[Batch], counts: CountedWindows, marks: Watermarks
) -> dict[tuple[Any, Span], tuple[int, int]]:
    """A join's rows (its pairs, and an outer join's unmatched rows of `counts.side`) counted per join key
    and window of `counts.side`'s event time, under the aggregation's own watermarks (`marks`,
    `dag.per_operator`: the join's output watermark): each complete window's count and the batch it is
    emitted in.

    >>> from frontier_harness.model.event_time.join import Pair
    >>> from frontier_harness.model.event_time.stateful import Window
    >>> r = lambda t, data: Record("k", t, data, 0, 0)
    >>> out = Joined((Pair(r(5_000, "l"), r(4_000, "r"), 0), Pair(r(6_000, "l2"), r(4_000, "r"), 1)), (), (), {}, ())
    >>> counts = CountedWindows(Window(10_000), Side.LEFT, "key", ("key", "window", "n"))
    >>> counted(out, [Batch(0, ()), Batch(1, ()), Batch(2, ())], counts, Watermarks((0, 9_999, 10_000), 10_000))
    {('k', Span(start=0, end=10000)): (2, 2)}
    """
    windows = aggregate(counts.window, paired(joined, batches, counts.side), marks)
    found: dict[tuple[Any, Span], tuple[int, int]] = {}
    for span, batch in windows.completed.items():
        for record in windows.kept[span]:
            key = record.field(counts.key)
            n, _ = found.get((key, span), (0, batch))
            found[(key, span)] = (n + 1, batch)
    return found
