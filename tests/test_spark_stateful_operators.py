"""The model's rules per stateful operator (`model/event_time/`: `dag`, `join`, `session`, `chain`), each pinned
at its boundary against a real query on the PySpark we run (4.3): a `MemoryStream` fed batch by batch
(`tests/memory_query.py`), what each batch wrote, the watermark each `offsets/N` journaled and, where the rule
is about state, the state Spark kept (its state data source). Each test asks the model the same question and
compares every row written, with its batch.

The Spark source each rule restates: `WatermarkPropagator.scala` (`PropagateWatermarkSimulator`: input
watermark the least of the children's outputs; late rows by batch N-1's), `StreamingSymmetricHashJoinExec` and
`StreamingSymmetricHashJoinHelper` (with catalyst's `StreamingJoinHelper.getStateValueWatermark`: state
watermarks, the `matched` flag, outer rows at eviction), `statefulOperators.scala`
(`SessionWindowStateStoreRestoreExec`/`SaveExec`: late and evicted by the session's end;
`StreamingDeduplicateWithinWatermarkExec`: expiry at the first event time plus the delay) and
`MergingSessionsIterator` (sessions merge when `start <= end`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from frontier_harness.model.event_time.chain import carried, paired, passed_on, stamped_in_time
from frontier_harness.model.event_time.dag import Node, Passing, per_operator
from frontier_harness.model.event_time.join import JoinType, Side, StreamJoin, TimeRange, join
from frontier_harness.model.event_time.output_modes import Shape, modes
from frontier_harness.model.event_time.session import sessionize
from frontier_harness.model.event_time.stateful import (
    Batch,
    Bound,
    Record,
    Span,
    Watermarks,
    Window,
    aggregate,
    deduplicate,
    watermarks,
)
from frontier_harness.model.event_time.timers import fires_in, times_out_in
from frontier_harness.model.vocabulary.event_time import OutputMode
from frontier_harness.spark_impl.streaming.query import PROVIDER
from frontier_harness.spark_impl.ttl.state.query import ROCKSDB
from tests.jobs.stateful import group_counts
from tests.memory_query import MemoryQuery, left, right, row

pytestmark = pytest.mark.spark
S = 1_000
BETWEEN = "lk = rk AND lt >= rt AND lt <= rt + interval 10 seconds"  # right <= left <= right + 10 s
RANGE = TimeRange(0, 10 * S)


def sides(rows: DataFrame, watermarked: tuple[bool, bool] = (True, True)) -> tuple[DataFrame, DataFrame]:
    """The stream's "L" and "R" rows as the two inputs of a join, each with a 5-second watermark or none."""
    out = []
    for side, prefix, marked in zip("LR", "lr", watermarked):
        named = rows.filter(F.col("side") == side).select(
            F.col("key").alias(f"{prefix}k"),
            F.col("event_time").alias(f"{prefix}t"),
            F.col("data").alias(f"{prefix}d"),
        )
        out.append(named.withWatermark(f"{prefix}t", "5 seconds") if marked else named)
    return out[0], out[1]


def advance(t: int) -> list:
    """A left and a right row at `t` with a key nothing else has: each input's watermark moves to `t - 5 s`."""
    return [left("adv", t, f"aL{t}"), right("adv", t, f"aR{t}")]


def join_marks(q: MemoryQuery, delays: tuple[int, ...]) -> Any:
    """The model's watermarks for a join query: one input per watermarked side, each seeing its own rows."""
    ls, rs = q.batches("L"), q.batches("R")
    seen = [
        (tuple(r.event_time for r in lb.records), tuple(r.event_time for r in rb.records))
        for lb, rb in zip(ls, rs)
    ]
    inputs = [Batch(lb.id, (), inputs=s if len(delays) == 2 else (s[1],)) for lb, s in zip(ls, seen)]
    return ls, rs, watermarks(inputs, delays)


def joined_rows(out: Any) -> set[tuple]:
    return {(p.left.data, p.right.data, p.batch) for p in out.matched} | {
        (u.record.data, None, u.batch) for u in out.unmatched
    }


@pytest.mark.slow
def test_a_left_outer_join_emits_an_unmatched_row_once_its_sides_state_watermark_passes_it(
    spark_session, tmp_path
):
    """`right <= left <= right + 10 s`, 5-second watermarks on both sides, batches with data only.

    - A left row at 20 s stays while E is 20 s and is emitted with nulls once E is 20.001 s (the left state
      watermark is `E - 1 ms` for the inclusive `left >= right`); `l2`, matched, is evicted then without a
      null row (SPARK-26154).
    - With L = 20.001 s and E = 35 s: a left row at L is dropped as late, one at L + 1 ms is kept and, at or
      below `E - 1 ms`, emitted with nulls in the batch it came in (SPARK-49829); one at E stays in the state.
    - The right state keeps rows above `E - 10 s - 1 ms`: after E = 35 s, 25 s stays and 24.999 s is gone."""

    def outer(rows: DataFrame) -> DataFrame:
        ls, rs = sides(rows)
        return ls.join(rs, F.expr(BETWEEN), "leftOuter").select("ld", "rd")

    q = MemoryQuery(
        spark_session, tmp_path, outer, conf={"spark.sql.streaming.noDataMicroBatches.enabled": "false"}
    )
    q.start()
    q.feed(
        left("a", 20 * S, "l1"),
        left("b", 20 * S, "l2"),
        right("b", 15 * S, "r2"),
        right("z", 24_999, "r_gone"),
        *advance(25 * S),
    )
    q.feed(*advance(25_001))
    q.feed(*advance(40 * S))
    q.feed(
        left("e", 30 * S, "l_now"),
        left("f", 20_001, "l_late"),
        left("g", 20_002, "l_above"),
        left("h", 34_999, "l_now2"),
        left("i", 35 * S, "l_kept"),
        *advance(40 * S),
    )
    q.stop()
    assert list(q.eviction().values()) == [0, 20 * S, 20_001, 35 * S]
    written = q.emitted()
    assert (
        ("l1", None, 2) in written
        and ("l2", "r2", 0) in written
        and not any(r[:2] == ("l2", None) for r in written)
    )
    assert {r[0] for r in written if r[1] is None and r[2] == 3} == {"l_above", "l_now", "l_now2"}
    right_state = [d for (d,) in q.state("value.rd", joinSide="right")]
    left_state = [d for (d,) in q.state("value.ld", joinSide="left")]
    assert "aR25000" in right_state and "r_gone" not in right_state and "l_kept" in left_state

    ls, rs, marks = join_marks(q, (5 * S, 5 * S))
    assert marks.eviction == tuple(q.eviction().values())
    out = join(StreamJoin(JoinType.LEFT_OUTER, RANGE), ls, rs, marks)
    assert joined_rows(out) == written
    assert [r.data for _, r in out.late] == ["l_late"]
    assert sorted(r.data for r in out.state[Side.RIGHT]) == right_state
    assert sorted(r.data for r in out.state[Side.LEFT]) == left_state


def test_a_join_with_a_watermark_on_one_side_only_never_evicts_either_side(spark_session, tmp_path):
    """A left outer join with a watermark on the right only, which Spark accepts (its docs call the left's
    optional, for cleaning up state): neither side's state is ever evicted, so no unmatched left row is ever
    emitted (SPARK-46350 is not in 4.3), and the unwatermarked left drops nothing as late (a row 94 s behind
    the watermark is kept). No batch without data runs: no operator would evict."""

    def one_sided(rows: DataFrame) -> DataFrame:
        ls, rs = sides(rows, (False, True))
        return ls.join(rs, F.expr(BETWEEN), "leftOuter").select("ld", "rd")

    q = MemoryQuery(spark_session, tmp_path, one_sided).start()
    q.feed(left("a", 20 * S, "l1"), right("b", 15 * S, "r1"), right("adv", 100 * S, "aR"))
    q.feed(right("adv", 200 * S, "aR2"), left("c", 1 * S, "l_old"))
    q.stop()
    assert q.eviction() == {0: 0, 1: 95 * S} and q.emitted() == set()
    left_state = [d for (d,) in q.state("value.ld", joinSide="left")]
    right_state = [d for (d,) in q.state("value.rd", joinSide="right")]
    assert left_state == ["l1", "l_old"] and right_state == ["aR", "aR2", "r1"]

    ls, rs, marks = join_marks(q, (5 * S,))
    assert marks.eviction == (0, 95 * S)
    out = join(StreamJoin(JoinType.LEFT_OUTER, RANGE, left_watermarked=False), ls, rs, marks)
    assert joined_rows(out) == set() and out.unbounded == (Side.LEFT, Side.RIGHT)
    assert sorted(r.data for r in out.state[Side.LEFT]) == left_state
    assert sorted(r.data for r in out.state[Side.RIGHT]) == right_state


@pytest.mark.slow
def test_an_aggregation_after_a_join_evicts_by_the_joins_output_watermark(spark_session, tmp_path):
    """An inner join (`right <= left <= right + 10 s`), then a count per 10-second window of the left's time:
    the join passes on `min(E - 1 ms, E - 10.001 s, E)`, so the window [0 s, 10 s) is not emitted while E is
    20 s (the query's watermark alone would have emitted it) and is emitted once E is 20.001 s. After E = 21 s
    the inner join's state keeps left rows above 20.999 s and right rows above 10.999 s, both sides evicted."""

    def joined_counts(rows: DataFrame) -> DataFrame:
        ls, rs = sides(rows)
        pairs = ls.join(rs, F.expr(BETWEEN)).select(
            F.col("lt").alias("event_time"), F.concat_ws("|", "ld", "rd").alias("d")
        )
        counted = pairs.groupBy(F.window("event_time", "10 seconds")).agg(
            F.sort_array(F.collect_list("d")).alias("d")
        )
        return counted.select(F.unix_millis("window.end").alias("end"), "d")

    q = MemoryQuery(spark_session, tmp_path, joined_counts).start()
    bounds = [left("x", 21 * S, "l_stays"), left("y", 20_999, "l_gone")]
    bounds += [right("x2", 11 * S, "r_stays"), right("y2", 10_999, "r_gone")]
    q.feed(left("a", 5 * S, "l1"), right("a", 1 * S, "r1"), *bounds, *advance(25 * S))
    q.feed(*advance(25_001))
    q.feed(*advance(26 * S))
    q.stop()
    eviction = q.eviction()
    assert list(eviction.values())[-1] == 21 * S
    state = {
        side: [d for (d,) in q.state(f"value.{side[0]}d", operatorId="1", joinSide=side)]
        for side in ("left", "right")
    }
    assert "l_stays" in state["left"] and "l_gone" not in state["left"] and "l1" not in state["left"]
    assert "r_stays" in state["right"] and "r_gone" not in state["right"] and "r1" not in state["right"]
    emitted = {end: (data, b) for end, data, b in q.emitted()}
    assert emitted[10 * S][0] == ("l1|r1",) and eviction[emitted[10 * S][1]] == 20_001
    assert 20 * S in eviction.values()  # a batch ran with E = 20 s and did not emit it

    ls, rs, marks = join_marks(q, (5 * S, 5 * S))
    spec = StreamJoin(JoinType.INNER, RANGE)
    sources = [Node(f"w{s}", Passing.WATERMARK, (Node(s, Passing.SOURCE),)) for s in "lr"]
    plan = Node("count", Passing.STATEFUL, (Node("join", Passing.JOIN, tuple(sources), spec),))
    own = per_operator(plan, marks)
    joined = join(spec, ls, rs, own["join"])
    counted = aggregate(Window(10 * S), paired(joined, ls, Side.LEFT), own["count"])
    assert {s.end: b for s, b in counted.completed.items()} == {end: b for end, (_, b) in emitted.items()}
    assert {side: sorted(r.data for r in joined.state[Side(side)]) for side in state} == state


def test_a_right_outer_join_with_a_strict_bound_emits_its_unmatched_rows_at_e_minus_the_range(
    spark_session, tmp_path
):
    """`right <= left < right + 10 s` (a strict upper bound: the right state watermark is `E - 10 s`, no
    millisecond less), right outer, batches without data as Spark runs them: an unmatched right row at 15 s
    stays while E is 24.999 s and is emitted with nulls in the batch without data whose E is 25 s; a pair 10 s
    apart does not match (strict), so its right row is emitted alone too; a left row alone is never emitted."""

    def outer(rows: DataFrame) -> DataFrame:
        ls, rs = sides(rows)
        strict = F.expr("lk = rk AND lt >= rt AND lt < rt + interval 10 seconds")
        return ls.join(rs, strict, "rightOuter").select("ld", "rd")

    q = MemoryQuery(spark_session, tmp_path, outer).start()
    q.feed(
        right("a", 15 * S, "r1"),
        right("b", 15 * S, "r2"),
        left("b", 15 * S, "l2"),
        right("d", 15 * S, "r_apart"),
        left("d", 25 * S, "l_apart"),
        left("c", 30 * S, "l_alone"),
        *advance(29_999),
    )
    q.feed(*advance(30 * S))
    q.stop()
    eviction = q.eviction()
    written = q.emitted()
    lone = {(rd, eviction[b]) for ld, rd, b in written if ld is None}
    assert lone == {("r1", 25 * S), ("r_apart", 25 * S)} and 24_999 in eviction.values()
    assert ("l2", "r2", 0) in written and not any(ld in ("l_alone", "l_apart") for ld, _, _ in written)

    ls, rs, marks = join_marks(q, (5 * S, 5 * S))
    assert marks.eviction == tuple(eviction.values())
    out = join(StreamJoin(JoinType.RIGHT_OUTER, TimeRange(0, 10 * S, strict_upper=True)), ls, rs, marks)
    assert {(p.left.data, p.right.data, p.batch) for p in out.matched} | {
        (None, u.record.data, u.batch) for u in out.unmatched
    } == written


def test_a_window_aggregation_after_another_counts_what_the_first_emits_in_the_same_batch(
    spark_session, tmp_path
):
    """Counts per 10-second window, then per 20-second window of their `window_time`, watermark delay 10 s. In
    the batch whose E is 20 s the first emits [10 s, 20 s), which the second counts (its late rows are those at
    or below the batch before's 19.999 s) and emits [0 s, 20 s) with, in that same batch (SPARK-40925); E at
    19.999 s emits neither."""

    def chained(rows: DataFrame) -> DataFrame:
        first = rows.withWatermark("event_time", "10 seconds").groupBy(F.window("event_time", "10 seconds"))
        first = first.agg(F.collect_list("data").alias("d"))
        second = first.groupBy(F.window(F.window_time("window"), "20 seconds")).agg(
            F.flatten(F.collect_list("d")).alias("d")
        )
        return second.select(F.unix_millis("window.end").alias("end"), F.sort_array("d").alias("d"))

    q = MemoryQuery(spark_session, tmp_path, chained).start()
    q.feed(row("a", 5 * S, "a5"), row("a", 15 * S, "a15"), row("z", 25 * S, "z25"))
    q.feed(row("z", 29_999, "z29.999"))
    q.feed(row("z", 30 * S, "z30"))
    q.stop()
    eviction = q.eviction()
    [(end, data, b)] = q.emitted()
    assert (end, data, eviction[b]) == (20 * S, ("a15", "a5"), 20 * S) and 19_999 in eviction.values()

    batches = q.batches()
    marks = watermarks(batches, (10 * S,))
    assert marks.eviction == tuple(eviction.values())
    first = aggregate(Window(10 * S), batches, marks)
    second = aggregate(Window(20 * S), carried(first, batches), marks)
    spans = [Span(*map(int, x.data.split(":"))) for x in second.kept[Span(0, 20 * S)]]
    assert second.completed == {Span(0, 20 * S): b}
    assert tuple(sorted(r.data for s in spans for r in first.kept[s])) == data


@pytest.mark.slow
def test_a_deduplication_within_the_watermark_then_a_window_count(spark_session, tmp_path):
    """`dropDuplicatesWithinWatermark(["key"])` (delay 5 s), then a count per 10-second window: a duplicate
    2.001 s after the first, in the next window, is counted nowhere (the duplicate still moves the watermark);
    once E reaches the first's 9.999 s plus the delay, the key is new again and counts in its own window."""

    def deduplicated_counts(rows: DataFrame) -> DataFrame:
        kept = rows.withWatermark("event_time", "5 seconds").dropDuplicatesWithinWatermark(["key"])
        counted = kept.groupBy(F.window("event_time", "10 seconds")).agg(
            F.sort_array(F.collect_list("data")).alias("d")
        )
        return counted.select(F.unix_millis("window.end").alias("end"), "d")

    q = MemoryQuery(spark_session, tmp_path, deduplicated_counts).start()
    q.feed(row("x", 9_999, "first"))
    q.feed(row("x", 12 * S, "dup"))
    q.feed(row("y", 30 * S, "y"))
    q.feed(row("x", 25_001, "again"))
    q.feed(row("y2", 50 * S, "flush"))
    q.stop()
    written = {end: (data, b) for end, data, b in q.emitted()}
    assert {end: data for end, (data, _) in written.items()} == {
        10 * S: ("first",),
        30 * S: ("again",),
        40 * S: ("y",),
    }

    batches = q.batches()
    marks = watermarks(batches, (5 * S,))
    assert marks.eviction == tuple(q.eviction().values())
    kept = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, batches, marks, delay=5 * S)
    counted = aggregate(Window(10 * S), passed_on(kept, batches), marks)
    model = {s.end: (tuple(sorted(r.data for r in counted.kept[s])), b) for s, b in counted.completed.items()}
    assert model == written


FILTERS = {  # where the job writes its filter, what it reads: (transform, the watermark follows kept rows)
    "key_before_the_watermark": (lambda r: r.where(KEY).withWatermark(*MARK), True),
    "key_after_the_watermark": (lambda r: r.withWatermark(*MARK).where(KEY), True),
    "event_time_after_the_watermark": (lambda r: r.withWatermark(*MARK).where(EARLY), False),
}
KEY, EARLY = "key != 'c'", "event_time < timestamp_millis(30000)"  # SQL: no session at import
MARK = ("event_time", "5 seconds")


@pytest.mark.slow
@pytest.mark.parametrize("where", FILTERS)
def test_a_filter_spark_runs_under_the_watermark_keeps_a_dropped_row_from_moving_it(
    where, spark_session, tmp_path
):
    """A filter, then a count per 10-second window (update mode), over `r0` at 12 s, `r1` (key `c`) at
    30 s and `r2` at 13 s, each a batch. Spark's optimizer pushes a filter that does not read the event
    time under `withWatermark` wherever the job writes it: `r1` dropped moves nothing, E stays 7 s and
    `r2` counts. A filter on the event time stays above it: `r1` moves E to 25 s before it is dropped, and
    `r2`, late for [10 s, 20 s), counts nowhere (`prefix.filters_before`; `stateful_rows.read_step` reads
    the batches so)."""
    filtered, under = FILTERS[where]

    def filtered_counts(rows: DataFrame) -> DataFrame:
        counted = filtered(rows).groupBy(F.window("event_time", "10 seconds"))
        return counted.agg(F.sort_array(F.collect_list("data")).alias("d")).select(
            F.unix_millis("window.end").alias("end"), "d"
        )

    q = MemoryQuery(spark_session, tmp_path, filtered_counts, mode="update").start()
    for record in (row("a", 12 * S, "r0"), row("c", 30 * S, "r1"), row("a", 13 * S, "r2")):
        q.feed(record)
    q.stop()
    newest = {end: data for end, data, _ in sorted(q.emitted(), key=lambda r: r[-1])}
    assert newest == {20 * S: ("r0", "r2") if under else ("r0",)}

    batches = q.batches()
    kept = [Batch(b.id, tuple(r for r in b.records if r.data != "r1")) for b in batches]
    marks = watermarks(kept if under else batches, (5 * S,))
    assert marks.eviction == tuple(q.eviction().values())
    assert max(marks.eviction) == (8 * S if under else 25 * S)
    counted = aggregate(Window(10 * S), kept, marks)
    assert {s.end: tuple(sorted(r.data for r in rs)) for s, rs in counted.kept.items()} == newest


def test_session_windows_merge_within_the_gap_are_late_and_emitted_by_their_end(spark_session, tmp_path):
    """`session_window(event_time, "10 seconds")` per key, watermark delay 20 s, append mode.

    - Records exactly the gap apart share a session (`b`), 1 ms more apart do not (`c`); a record between
      two sessions bridges them (`d`).
    - E = 130 s emits the session ending at 130 s (`e`) and not the one ending at 130.001 s (`f`).
    - With L = 130 s, a record at 120 s is late (its session ends at L: `g`) and one at 120.001 s is kept
      although 9.999 s behind the watermark (`h`); `e` at 125 s, within the gap of `e`'s emitted session,
      opens a new one.
    (Update mode is refused: `test_the_output_modes_spark_runs_each_shape_in`.)"""

    def sessions(rows: DataFrame) -> DataFrame:
        grouped = rows.withWatermark("event_time", "20 seconds").groupBy(
            F.session_window("event_time", "10 seconds"), "key"
        )
        counted = grouped.agg(F.sort_array(F.collect_list("data")).alias("d"))
        window = F.col("session_window")
        return counted.select("key", F.unix_millis(window.start), F.unix_millis(window.end), "d")

    q = MemoryQuery(spark_session, tmp_path, sessions).start()
    q.feed(
        row("b", 100 * S, "b100"),
        row("b", 110 * S, "b110"),
        row("c", 100 * S, "c100"),
        row("c", 110_001, "c110.001"),
        row("d", 100 * S, "d100"),
        row("d", 118 * S, "d118"),
    )
    q.feed(row("d", 109 * S, "d109"), row("e", 120 * S, "e120"), row("f", 120_001, "f120.001"))
    q.feed(row("z", 150 * S, "z150"))
    q.feed(row("g", 120 * S, "g120"), row("h", 120_001, "h120.001"), row("e", 125 * S, "e125"))
    q.feed(row("z", 200 * S, "z200"))
    q.stop()
    eviction = q.eviction()
    written = {(key, start, end): (data, eviction[b]) for key, start, end, data, b in q.emitted()}
    assert written[("b", 100 * S, 120 * S)][0] == ("b100", "b110")
    assert ("c", 100 * S, 110 * S) in written and ("c", 110_001, 120_001) in written
    assert written[("d", 100 * S, 128 * S)][0] == ("d100", "d109", "d118")
    assert written[("e", 120 * S, 130 * S)][1] == 130 * S and written[("f", 120_001, 130_001)][1] == 180 * S
    assert "g" not in {key for key, _, _ in written} and ("h", 120_001, 130_001) in written
    assert ("e", 125 * S, 135 * S) in written

    batches = q.batches()
    marks = watermarks(batches, (20 * S,))
    assert marks.eviction == tuple(eviction.values())
    out = sessionize(10 * S, batches, marks)
    model = {
        (s.group[0], s.span.start, s.span.end): (
            tuple(sorted(r.data for r in s.records)),
            marks.eviction[s.batch],
        )
        for s in out.emitted
    }
    assert model == written and [r.data for r in out.late] == ["g120"]


def _joined(how: str) -> Any:
    def transform(rows: DataFrame) -> DataFrame:
        ls, rs = sides(rows)
        return ls.join(rs, F.expr(BETWEEN), how).select("ld", "rd")

    return transform


def _counted(rows: DataFrame) -> DataFrame:
    return rows.groupBy(F.window("event_time", "10 seconds")).count()


def _chained(rows: DataFrame) -> DataFrame:
    first = _counted(rows.withWatermark("event_time", "10 seconds"))
    return first.groupBy(F.window(F.window_time("window"), "20 seconds")).count()


def _deduplicated_counts(rows: DataFrame) -> DataFrame:
    return _counted(rows.withWatermark("event_time", "10 seconds").dropDuplicatesWithinWatermark(["key"]))


def _sessions(rows: DataFrame) -> DataFrame:
    watermarked = rows.withWatermark("event_time", "10 seconds")
    return watermarked.groupBy(F.session_window("event_time", "10 seconds"), "key").count()


SHAPES = {
    Shape.SESSION_WINDOW: _sessions,
    Shape.INNER_JOIN: _joined("inner"),
    Shape.OUTER_JOIN: _joined("leftOuter"),
    Shape.AGGREGATION_AFTER_AGGREGATION: _chained,
    Shape.AGGREGATION_AFTER_DEDUPLICATION: _deduplicated_counts,
}


def test_the_output_modes_spark_runs_each_shape_in(spark_session, tmp_path):
    """Update mode: refused for a session window (`STREAMING_OUTPUT_MODE`), an outer join and an aggregation
    after an aggregation (the check for rows emitted late downstream); run for an inner join, which emits the
    pairs the model matches, and for an aggregation after a deduplication."""
    refused = {
        Shape.SESSION_WINDOW: "session window streaming aggregations",
        Shape.OUTER_JOIN: "not supported in Update output mode",
        Shape.AGGREGATION_AFTER_AGGREGATION: "possible 'correctness' issue due to global watermark",
    }
    for shape, transform in SHAPES.items():
        q = MemoryQuery(spark_session, tmp_path / shape.replace(" ", "_"), transform, mode="update")
        assert (OutputMode.UPDATE in modes(shape)) is (shape not in refused)
        if shape in refused:
            with pytest.raises(Exception, match=re.escape(refused[shape])):
                q.start()
            continue
        q.start()
        q.feed(left("a", 20 * S, "l1"), right("a", 15 * S, "r1"), row("k", 15 * S, "x"))
        q.stop()
        assert q.written[0], f"{shape} in update mode wrote nothing"
        if shape is Shape.INNER_JOIN:
            ls, rs, marks = join_marks(q, (5 * S, 5 * S))
            assert joined_rows(join(StreamJoin(JoinType.INNER, RANGE), ls, rs, marks)) == q.emitted()


class TimerAt20s(StatefulProcessor):
    """Registers one event-time timer at 20 s for key `a` on its first record; emits `(key, due, mark)` when it
    fires, `mark` the watermark Spark hands the processor then."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: TimerValues) -> Iterator[Any]:
        list(rows)
        if key[0] == "a" and not list(self.handle.listTimers()):
            self.handle.registerTimer(20 * S)
        return iter(())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Any]:
        import pandas as pd

        due, mark = expiredTimerInfo.getExpiryTimeInMs(), timerValues.getCurrentWatermarkInMs()
        yield pd.DataFrame({"key": [key[0]], "due": [due], "mark": [mark]})

    def close(self) -> None:
        """Nothing to release."""


def test_an_event_time_timer_fires_in_the_first_batch_whose_eviction_watermark_reaches_it(
    spark_session, tmp_path
):
    """`transformWithStateInPandas` in event-time mode, delay 5 s, a timer at 20 s registered in batch 0: the
    watermark a millisecond short of it (E = 19.999 s) fires nothing, the batch whose E is exactly 20 s fires it,
    once, handing the processor that watermark (`model/event_time/timers.py`)."""

    def fired(rows: DataFrame) -> DataFrame:
        marked = rows.withWatermark("event_time", "5 seconds").groupBy("key")
        return marked.transformWithStateInPandas(
            TimerAt20s(), "key string, due long, mark long", "Append", "EventTime"
        )

    q = MemoryQuery(spark_session, tmp_path, fired, conf={PROVIDER: ROCKSDB}).start()
    q.feed(row("a", 12 * S, "registers"))
    q.feed(row("w", 24_999, "short"))
    q.feed(row("w", 25 * S, "reaches"))
    q.feed(row("w", 30 * S, "past"))
    q.stop()
    eviction = q.eviction()
    [(key, due, mark, batch)] = q.emitted()
    assert (key, due, mark) == ("a", 20 * S, 20 * S) and eviction[batch] == 20 * S
    assert 19_999 in eviction.values() and batch == fires_in(20 * S, eviction, registered_in=0), eviction


class TimerAt20sRearmed(TimerAt20s):
    """`TimerAt20s` whose handler sets the key's next timer a second after the one that fired."""

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Any]:
        self.handle.registerTimer(expiredTimerInfo.getExpiryTimeInMs() + S)
        yield from super().handleExpiredTimer(key, timerValues, expiredTimerInfo)


def test_a_timer_set_at_or_below_the_watermark_fires_in_its_own_batch_from_a_row_and_in_the_next_from_a_timer(
    spark_session, tmp_path
):
    """Key `a`'s first record arrives after the watermark passed 20 s (batch 2, E = 25 s): the timer its row
    sets at 20 s fires in batch 2 itself. The handler sets the next at 21 s, also at or below E: it stays
    registered, expired, and Spark plans no batch for it; it fires in the next batch there is (batch 3, fed a
    record that moves nothing), whose handler's 22 s timer waits in turn (`model/event_time/timers.py`)."""

    def fired(rows: DataFrame) -> DataFrame:
        marked = rows.withWatermark("event_time", "5 seconds").groupBy("key")
        return marked.transformWithStateInPandas(
            TimerAt20sRearmed(), "key string, due long, mark long", "Append", "EventTime"
        )

    def timers() -> list[tuple]:
        return q.state("expiration_timestamp_ms", readRegisteredTimers="true")

    q = MemoryQuery(spark_session, tmp_path, fired, conf={PROVIDER: ROCKSDB}).start()
    q.feed(row("w", 30 * S, "moves"))  # batch 0, then batch 1 (no data): E = 25 s
    q.feed(row("a", 26 * S, "sets 20 s"))  # batch 2
    after_row, waiting = q.eviction(), timers()
    q.feed(row("w", 30 * S, "moves nothing"))  # batch 3
    q.stop()
    eviction = q.eviction()
    assert after_row == {0: 0, 1: 25 * S, 2: 25 * S} and waiting == [(21 * S,)], (after_row, waiting)
    assert q.emitted() == {("a", 20 * S, 25 * S, 2), ("a", 21 * S, 25 * S, 3)}, q.emitted()
    assert eviction == {**after_row, 3: 25 * S} and timers() == [(22 * S,)], (eviction, timers())
    assert fires_in(20 * S, eviction, registered_in=2) == 2
    assert fires_in(21 * S, eviction, registered_in=2, by_timer=True) == 3


def test_a_group_state_timeout_fires_only_once_the_eviction_watermark_is_past_it(spark_session, tmp_path):
    """`applyInPandasWithState` with an event-time timeout, delay 5 s (`tests.jobs.stateful:GroupCounts`, its
    function `count_until_window_end`): key `a`'s record at 12 s sets its timeout at 20 s in batch 0. Unlike a
    `transformWithState...` timer, the batch whose E is exactly 20 s does not time it out; the first whose E
    is past it, by a millisecond, does, once (`model/event_time/timers.py`)."""

    def counted(rows: DataFrame) -> DataFrame:
        return group_counts(str(tmp_path / "job")).transform(rows)

    q = MemoryQuery(spark_session, tmp_path, counted).start()
    q.feed(row("a", 12 * S, "sets 20 s"))
    q.feed(row("w", 25 * S, "reaches"))
    q.feed(row("w", 25_001, "passes"))
    q.stop()
    eviction = q.eviction()
    [(key, due, count, batch)] = q.emitted()
    assert (key, due, count) == ("a", 20 * S, 1) and eviction[batch] == 20_001, (q.emitted(), eviction)
    assert 20 * S in eviction.values() and batch == times_out_in(20 * S, eviction, set_in=0), eviction


class StampedOnTimer(StatefulProcessor):
    """Key `a`'s first record registers a timer at 20 s; when it fires, the processor emits one row stamped
    with the event time the record's `data` names (`stamp=<ms>`), its output's event-time column."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.stamp = handle.getValueState("stamp", "stamp long")

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: TimerValues) -> Iterator[Any]:
        for frame in rows:
            for data in frame["data"]:
                if data.startswith("stamp="):
                    self.stamp.update((int(data.removeprefix("stamp=")),))
                    self.handle.registerTimer(20 * S)
        return iter(())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Any]:
        import pandas as pd

        yield pd.DataFrame({"key": [key[0]], "stamp": [pd.Timestamp(self.stamp.get()[0], unit="ms")]})

    def close(self) -> None:
        """Nothing to release."""


PROCESSOR_THEN_COUNT = Node(
    "count",
    Passing.STATEFUL,
    (Node("processor", Passing.STATEFUL, (Node("w", Passing.WATERMARK, (Node("s", Passing.SOURCE),)),)),),
)


@pytest.mark.parametrize("stamp", [10 * S, 7_001, 7 * S])
def test_a_processors_row_feeds_the_next_operator_unless_older_than_the_processors_late_rows_watermark(
    stamp, spark_session, tmp_path
):
    """`transformWithStateInPandas` in event time, delay 5 s, its output's event time `stamp`
    (`eventTimeColumnName`), then a 10-second window count in append mode. Key `a`'s timer at 20 s fires in
    the batch whose E is 20 s, the batch before's 7 s: a row stamped between the two (10 s) or a millisecond
    after 7 s is counted downstream and its window emitted in that batch (the processor passes its input
    watermark on: `dag.py`); one at 7 s fails the query, `EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED`
    (`chain.stamped_in_time`)."""

    def counted(rows: DataFrame) -> DataFrame:
        stamped = (
            rows.withWatermark("event_time", "5 seconds")
            .groupBy("key")
            .transformWithStateInPandas(
                StampedOnTimer(),
                "key string, stamp timestamp",
                "Append",
                "EventTime",
                eventTimeColumnName="stamp",
            )
        )
        return (
            stamped.groupBy(F.window("stamp", "10 seconds"))
            .count()
            .select(F.col("window.start").cast("long"), "count")
        )

    q = MemoryQuery(spark_session, tmp_path, counted, conf={PROVIDER: ROCKSDB}).start()
    q.feed(row("a", 12 * S, f"stamp={stamp}"))
    failed = None
    try:
        q.feed(row("w", 25 * S, "moves E to 20 s"))
    except Exception as exc:  # py4j's StreamingQueryException: the query died in the batch that fired
        failed = str(exc)
    q.stop()
    eviction = q.eviction()
    fired = fires_in(20 * S, eviction, registered_in=0)
    late = eviction[fired - 1]
    assert (eviction[fired], late) == (20 * S, 7 * S), eviction
    if not stamped_in_time(stamp, late):
        assert failed is not None and "EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED" in failed, failed
        return
    marks = per_operator(PROCESSOR_THEN_COUNT, Watermarks(tuple(eviction.values()), 20 * S))["count"]
    emitted = [Batch(b, (Record("a", stamp, "", 0, 0),) if b == fired else ()) for b in eviction]
    model = aggregate(Window(10 * S), emitted, marks)
    assert failed is None, failed
    assert q.emitted() == {(s.start // S, 1, model.completed[s]) for s in model.kept}, (q.emitted(), eviction)
