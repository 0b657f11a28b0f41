"""Each rule of the model's event-time contract (`model/event_time/stateful.py`), pinned at its boundary
against a real query on the PySpark we run (4.3): the stateful suite's source, a `processingTime` trigger,
records fed batch by batch (`Query.feed`: one batch with data, and the batch without data Spark runs after
the watermark moved), what each batch wrote and the watermark each `offsets/N` journaled. Each test also
asks the model the same question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F

from frontier_harness.model.event_time.stateful import (
    Batch,
    Bound,
    Policy,
    Record,
    Window,
    aggregate,
    deduplicate,
    watermarks,
)

pytestmark = pytest.mark.spark
S = 1_000
PLANTED_CRASH = "crash after the write, before the commit"


class Query:
    """A streaming query over the stateful source (one log per input), its output collected per batch."""

    def __init__(self, session: Any, root: Path, transform: Any, inputs: int = 1, mode: str = "append"):
        from frontier_harness.spark_impl.streaming.event_source import NAME, EventSource
        from frontier_harness.spark_impl.streaming.query import _checkpoints_without_processes
        from frontier_harness.spark_impl.streaming.upstream_log import UpstreamLog

        _checkpoints_without_processes(session)
        session.dataSource.register(EventSource)
        self.session, self.root, self.transform, self.mode, self.name = session, root, transform, mode, NAME
        self.logs = [UpstreamLog.create(root / f"log{i}") for i in range(inputs)]
        self.written: dict[int, list[tuple]] = {}
        self.crash_next = False
        self.query: Any = None

    def start(self, trigger: str = "processingTime") -> Query:
        streams = [
            self.session.readStream.format(self.name).option("path", str(log.path)).load()
            for log in self.logs
        ]

        def write(batch: Any, batch_id: int) -> None:
            self.written[batch_id] = sorted(tuple(r) for r in batch.collect())
            if self.crash_next:
                self.crash_next = False
                raise RuntimeError(PLANTED_CRASH)

        out = self.transform(*streams).writeStream.outputMode(self.mode).foreachBatch(write)
        out = out.option("checkpointLocation", str(self.root / "checkpoint"))
        out = (
            out.trigger(availableNow=True)
            if trigger == "availableNow"
            else out.trigger(processingTime="100 milliseconds")
        )
        self.query = out.start()
        return self

    def feed(self, *records: tuple[str, int, str], log: int = 0) -> None:
        """Appends `(key, event_time_ms, data)` records and waits until the query processed them."""
        self.logs[log].append([(0, [key, t, data]) for key, t, data in records])
        try:
            self.query.processAllAvailable()
        except (
            StreamingQueryException
        ) as exc:  # the planted crash, and only it: the query is down until `start`
            if PLANTED_CRASH not in str(exc):
                raise
            self.query = None

    def wait(self) -> None:
        self.query.awaitTermination()

    def stop(self) -> None:
        if self.query is not None:
            self.query.stop()

    def eviction(self) -> dict[int, int]:
        """E(N): `batchWatermarkMs` of each `offsets/N`."""
        files = (self.root / "checkpoint" / "offsets").iterdir()
        found = {int(f.name): json.loads(f.read_text().splitlines()[1]) for f in files if f.name.isdigit()}
        return {b: meta["batchWatermarkMs"] for b, meta in sorted(found.items())}


def windowed(delay: str) -> Any:
    def transform(records: Any) -> Any:
        counted = records.withWatermark("event_time", delay).groupBy(F.window("event_time", "10 seconds"))
        return counted.agg(F.sort_array(F.collect_list("data")).alias("data")).select(
            F.unix_millis("window.end").alias("end"), "data"
        )

    return transform


def rows(*records: tuple[str, int, str]) -> tuple[Record, ...]:
    return tuple(Record(k, t, d, 0, i) for i, (k, t, d) in enumerate(records))


@pytest.mark.slow
def test_a_window_ending_at_L_is_late_and_a_window_is_emitted_in_the_batch_whose_E_reaches_its_end(
    spark_session, tmp_path
):
    """Delay 15 s, windows of 10 s. After 35 s, L = 20 s: the window [10 s, 20 s) ends at it and its record
    is dropped. [30 s, 40 s) is not emitted when E is 39.999 s, and is emitted in the batch whose E is 40 s."""
    q = Query(spark_session, tmp_path, windowed("15 seconds")).start()
    fed = [
        rows(("a", 35 * S, "m")),
        rows(("a", 15 * S, "late")),
        rows(("a", 54_999, "x")),
        rows(("a", 55 * S, "y")),
    ]
    for records in fed:
        q.feed(*[(r.key, r.event_time, r.data) for r in records])
    q.stop()
    eviction = q.eviction()
    emitted = {end: b for b, out in q.written.items() for end, _ in out}
    assert 40 * S in eviction.values() and emitted[40 * S] == min(
        b for b, e in eviction.items() if e == 40 * S
    )
    assert all(e < 40 * S for b, e in eviction.items() if b < emitted[40 * S])
    assert [data for out in q.written.values() for end, data in out if end == 40 * S] == [["m"]]
    assert 20 * S not in emitted  # the late record's window was never counted
    model = _batches(q, fed)
    marks = watermarks(model, (15 * S,))
    assert marks.eviction == tuple(eviction.values())
    agg = aggregate(Window(10 * S), model, marks)
    assert [(r.data, s.end) for r, s in agg.late] == [("late", 20 * S)]
    assert model[agg.completed[next(s for s in agg.completed if s.end == 40 * S)]].id == emitted[40 * S]


@pytest.mark.slow
def test_a_window_ending_a_millisecond_above_L_is_counted(spark_session, tmp_path):
    q = Query(spark_session, tmp_path, windowed("15 seconds")).start()
    fed = [rows(("a", 34_999, "m")), rows(("a", 15 * S, "kept")), rows(("a", 60 * S, "flush"))]
    for records in fed:
        q.feed(*[(r.key, r.event_time, r.data) for r in records])
    q.stop()
    assert [data for out in q.written.values() for end, data in out if end == 20 * S] == [["kept"]]
    model = _batches(q, fed)
    assert (
        Window(10 * S).containing(15 * S)[0]
        in aggregate(Window(10 * S), model, watermarks(model, (15 * S,))).kept
    )


def test_a_deduplication_drops_a_record_at_L_and_keeps_one_a_millisecond_above(spark_session, tmp_path):
    def dedup(records: Any) -> Any:
        watermarked = records.withWatermark("event_time", "10 seconds").dropDuplicates(["key", "event_time"])
        return watermarked.select("data")

    q = Query(spark_session, tmp_path, dedup).start()
    fed = [
        rows(("a", 30 * S, "m")),
        rows(("b", 20 * S, "at"), ("c", 20_001, "above")),
        rows(("a", 60 * S, "z")),
    ]
    for records in fed:
        q.feed(*[(r.key, r.event_time, r.data) for r in records])
    q.stop()
    written = sorted(d for out in q.written.values() for (d,) in out)
    assert written == ["above", "m", "z"]
    model = _batches(q, fed)
    out = deduplicate(("key", "event_time"), Bound.EVENT_TIME, model, watermarks(model, (10 * S,)))
    assert [r.data for r in out.late] == ["at"] and tuple(q.eviction().values()) == watermarks(
        model, (10 * S,)
    ).eviction


@pytest.mark.slow
def test_after_a_restart_the_first_batch_filters_late_rows_with_the_previous_offsets_watermark(
    spark_session, tmp_path
):
    """L(N) is `offsets/N-1`'s watermark in a run's first batch too: after a clean restart (a new batch),
    and after a crash between the write and the commit (the batch re-run). Had the first batch of a run no
    L, the records at 15 s and 45 s would be counted."""
    q = Query(spark_session, tmp_path, windowed("10 seconds")).start()
    q.feed(("a", 35 * S, "m"))
    q.stop()
    q.start()
    q.feed(("a", 15 * S, "late after a restart"), ("a", 22 * S, "kept"))
    q.feed(("a", 60 * S, "n"))
    q.crash_next = True
    q.feed(("a", 45 * S, "late in a re-run"), ("a", 52 * S, "kept too"))
    q.start()
    q.feed(("a", 90 * S, "flush"))
    q.stop()
    counted = sorted(d for out in q.written.values() for _, data in out for d in data)
    assert "late after a restart" not in counted and "late in a re-run" not in counted
    assert {"kept", "kept too", "m"} <= set(counted)


@pytest.mark.slow
@pytest.mark.parametrize("policy,expected", [("min", 10 * S), ("max", 40 * S)])
def test_several_watermarked_inputs_combine_by_the_policy_and_a_restart_keeps_only_the_global(
    spark_session, tmp_path, policy, expected
):
    """Two sources, watermarks of 10 s and 20 s, see 50 s and 30 s: min gives 10 s, max 40 s. After a restart
    the inputs start afresh: 31 s on the second alone leaves the global watermark where it was."""

    def two(a: Any, b: Any) -> Any:
        x, y = a.withWatermark("event_time", "10 seconds"), b.withWatermark("event_time", "20 seconds")
        return x.unionByName(y).groupBy(F.window("event_time", "10 seconds")).count()

    spark_session.conf.set("spark.sql.streaming.multipleWatermarkPolicy", policy)
    try:
        q = Query(spark_session, tmp_path, two, inputs=2).start()
        q.feed(("a", 50 * S, "p"), log=0)
        q.feed(("a", 30 * S, "q"), log=1)
        q.stop()
        q.start()
        q.feed(("a", 31 * S, "r"), log=1)
        q.stop()
    finally:
        spark_session.conf.unset("spark.sql.streaming.multipleWatermarkPolicy")
    eviction = list(q.eviction().values())
    assert max(eviction) == expected and eviction[-1] == expected
    model = [Batch(0, (), inputs=((50 * S,), ())), Batch(1, (), inputs=((), (30 * S,)))]
    model += [Batch(b, ()) for b in range(2, len(eviction) - 1)]
    model.append(Batch(len(eviction) - 1, (), run_start=True, inputs=((), (31 * S,))))
    marks = watermarks(model, (10 * S, 20 * S), Policy(policy))
    assert marks.next == expected and max(marks.eviction) == expected


@pytest.mark.slow
@pytest.mark.parametrize("advance,again", [(20 * S, True), (19_999, False)])
def test_within_the_watermark_a_key_expires_once_E_reaches_its_event_time_plus_the_delay(
    spark_session, tmp_path, advance, again
):
    """`a` at 10 s under a 5 s delay expires once E reaches 15 s: a duplicate at 16 s is emitted again then,
    and dropped while E is 14.999 s."""

    def within(records: Any) -> Any:
        return (
            records.withWatermark("event_time", "5 seconds")
            .dropDuplicatesWithinWatermark(["key"])
            .select("data")
        )

    q = Query(spark_session, tmp_path, within).start()
    fed = [rows(("a", 10 * S, "first")), rows(("b", advance, "adv")), rows(("a", 16 * S, "dup"))]
    for records in fed:
        q.feed(*[(r.key, r.event_time, r.data) for r in records])
    q.stop()
    assert ("dup" in [d for out in q.written.values() for (d,) in out]) is again
    model = _batches(q, fed)
    out = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, model, watermarks(model, (5 * S,)), delay=5 * S)
    assert ("dup" in [e.candidates[0].data for e in out.emitted]) is again


@pytest.mark.slow
def test_an_available_now_run_runs_no_batch_without_data(spark_session, tmp_path):
    """The model reads batches without data from the offset log, never assumes them: a `processingTime`
    query runs one after the watermark moved (the tests above), an `availableNow` run does not."""
    q = Query(spark_session, tmp_path, windowed("10 seconds"))
    for t in (5 * S, 35 * S, 36 * S):
        q.logs[0].append([(0, ["a", t, str(t)])])
        q.start("availableNow").wait()
    assert list(q.eviction()) == [0, 1, 2]  # one batch per run, each with data
    assert [end for out in q.written.values() for end, _ in out] == [10 * S]  # emitted in batch 2, not before


def _batches(q: Query, fed: list[tuple[Record, ...]]) -> list[Batch]:
    """The query's batches as the model reads them: each fed record set is the batch whose offsets moved
    (a set fed to a running query is one batch); the batches in between had no data."""
    eviction = q.eviction()
    with_data = [b for b in eviction if _had_data(q, b)]
    assert len(with_data) == len(fed), f"expected one batch with data per feed: {eviction}"
    by_batch = dict(zip(with_data, fed))
    return [Batch(b, by_batch.get(b, ())) for b in eviction]


def _had_data(q: Query, batch: int) -> bool:
    offsets = q.root / "checkpoint" / "offsets"
    this = json.loads((offsets / str(batch)).read_text().splitlines()[2])
    before = json.loads((offsets / str(batch - 1)).read_text().splitlines()[2]) if batch else None
    return this != before
