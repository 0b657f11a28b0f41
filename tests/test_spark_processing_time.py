"""A user's processor in processing-time mode, pinned against real queries on the PySpark we run: when its
timers fire by each batch's timestamp T(N) (`batchTimestampMs`, journaled in `offsets/N`), that a batch
Spark runs again after a crash runs at the T(N) it journaled (`model/event_time/timers.py`), and that a
`trigger(once=True)` start runs a pending batch alone, at that T(N): what a reference run at a crashed trial's
own clock would rest on (docs/streaming.md, "A user's own processor"). An `availableNow` start of such a
processor never ends, so trigger-once starts are the only runs whose batches a history decides; and Spark allows
state TTL in processing-time mode only, so a processor with TTL is one of these.

The clock is the wall clock, so a boundary is reached by reading it, not by setting it: a timer registered at
the batch's own timestamp (`getCurrentProcessingTimeInMs`) and one a millisecond after it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from frontier_harness.model.event_time.timers import fires_in, times_out_in
from frontier_harness.spark_impl.streaming.query import PROVIDER
from frontier_harness.spark_impl.ttl.state.query import ROCKSDB
from tests.memory_query import MemoryQuery, journaled, row

pytestmark = pytest.mark.spark
SCHEMA = "key string, due long, now long"


@pytest.fixture(autouse=True)
def _queries_stopped(spark_session: Any) -> Iterator[None]:
    """Every query a test started is stopped after it, also when it failed: a processing-time processor's
    query runs a batch on every trigger until stopped, for the rest of the worker's session."""
    yield
    for query in spark_session.streams.active:
        query.stop()


def batch_timestamps(checkpoint: Path) -> dict[int, int]:
    """T(N): `batchTimestampMs` of each `offsets/N` of a checkpoint."""
    return journaled(checkpoint, "batchTimestampMs")


class TimerAtItsOwnBatch(StatefulProcessor):
    """On a key's first record, registers a processing-time timer at the batch's own timestamp plus the
    milliseconds its key names (`"0"`, `"1"`); emits `(key, due, now)` when it fires, `now` the batch
    timestamp Spark hands the handler then."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: TimerValues) -> Iterator[Any]:
        list(rows)
        if not list(self.handle.listTimers()):
            self.handle.registerTimer(timerValues.getCurrentProcessingTimeInMs() + int(key[0]))
        return iter(())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Any]:
        import pandas as pd

        due, now = expiredTimerInfo.getExpiryTimeInMs(), timerValues.getCurrentProcessingTimeInMs()
        yield pd.DataFrame({"key": [key[0]], "due": [due], "now": [now]})

    def close(self) -> None:
        """Nothing to release."""


def _processed(processor: StatefulProcessor):
    def transform(rows: DataFrame) -> DataFrame:
        return rows.groupBy("key").transformWithStateInPandas(processor, SCHEMA, "Append", "ProcessingTime")

    return transform


def _timeout_a_millisecond_on(key: Any, frames: Iterator[Any], state: GroupState) -> Iterator[Any]:
    """An `applyInPandasWithState` function: a group's call with data sets its processing-time timeout a
    millisecond (the least Spark allows) past the batch's timestamp, `due`; when it times out it emits
    `(key, due, now)`, `now` the batch timestamp Spark hands the function then."""
    import pandas as pd

    if state.hasTimedOut:
        (due,) = state.get
        state.remove()
        yield pd.DataFrame({"key": [key[0]], "due": [due], "now": [state.getCurrentProcessingTimeMs()]})
        return
    list(frames)
    state.update((state.getCurrentProcessingTimeMs() + 1,))
    state.setTimeoutDuration(1)


def _grouped(rows: DataFrame) -> DataFrame:
    return rows.groupBy("key").applyInPandasWithState(
        _timeout_a_millisecond_on, SCHEMA, "due long", "append", GroupStateTimeout.ProcessingTimeTimeout
    )


PROCESSORS = {"a processor": _processed(TimerAtItsOwnBatch()), "a group": _grouped}


def until(done: Any, what: str, timeout_s: float = 60.0) -> None:
    """Waits until `done()`: a processing-time processor's query runs a batch on every trigger, so it never
    has nothing left to do, and `processAllAvailable` never returns."""
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"not within {timeout_s} s: {what}"
        time.sleep(0.05)


def moved(checkpoint: Path, batch: int) -> bool:
    """Whether batch `batch` read records: its `offsets/N` binds the source further than the batch before."""

    def offsets(b: int) -> str:
        return (checkpoint / "offsets" / str(b)).read_text().splitlines()[2]

    return batch == 0 or offsets(batch) != offsets(batch - 1)


def test_a_processing_time_timer_at_the_batch_timestamp_fires_in_its_batch_one_a_millisecond_later_after_it(
    spark_session, tmp_path
):
    """Batch 0 registers a timer at T(0) (key `0`) and one at T(0) + 1 ms (key `1`): the first fires in batch
    0 itself (a timer at or below T(N) has expired; the timers are read after the rows), the second in the
    first later batch whose T reaches it, a batch without data: Spark runs one on every trigger for a
    processing-time processor, data or none."""
    q = MemoryQuery(
        spark_session, tmp_path, _processed(TimerAtItsOwnBatch()), conf={PROVIDER: ROCKSDB}
    ).start()
    q.offer(row("0", 0, "at T(0)"), row("1", 0, "a millisecond after T(0)"))
    until(lambda: {r[0] for r in q.emitted()} == {"0", "1"}, "both timers fired")
    until(lambda: len(q.written) > 5, "batches without data ran")
    q.stop()
    stamps = batch_timestamps(q.checkpoint)
    fired = {key: (due, now, batch) for key, due, now, batch in q.emitted()}
    assert fired["0"] == (stamps[0], stamps[0], 0), (fired, stamps)
    due, now, batch = fired["1"]
    assert due == stamps[0] + 1 and now == stamps[batch] >= due, (fired, stamps)
    assert batch == fires_in(due, stamps, registered_in=0) and batch > 0, (fired, stamps)
    assert not any(moved(q.checkpoint, b) for b in stamps if b > 0), "only batch 0 read records"


def test_a_groups_processing_time_timeout_times_out_in_the_first_batch_whose_timestamp_is_past_it(
    spark_session, tmp_path
):
    """`applyInPandasWithState` with `GroupStateTimeout.ProcessingTimeTimeout`: a group's timeout set in batch 0 a
    millisecond past T(0) times out in the first later batch whose T is past it (strictly, as an event-time
    timeout's E: `timeoutTimestamp < batchTimestampMs`), a batch without data, once; the function is handed
    that batch's T."""
    q = MemoryQuery(spark_session, tmp_path, _grouped).start()
    q.offer(row("a", 0, "sets T(0) + 1 ms"))
    until(lambda: q.emitted(), "the timeout fired")
    until(lambda: len(q.written) > 5, "batches without data ran")
    q.stop()
    stamps = batch_timestamps(q.checkpoint)
    [(key, due, now, batch)] = q.emitted()
    assert due == stamps[0] + 1 and now == stamps[batch], (q.emitted(), stamps)
    assert batch == times_out_in(due, stamps, set_in=0) and batch > 0, (q.emitted(), stamps)
    assert not any(moved(q.checkpoint, b) for b in stamps if b > 0), "only batch 0 read records"


class StampsEachRow(StatefulProcessor):
    """Emits `(key, 0, now)` for each record, `now` the batch timestamp Spark hands the processor."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        """No state."""

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: TimerValues) -> Iterator[Any]:
        import pandas as pd

        n = sum(len(frame) for frame in rows)
        now = timerValues.getCurrentProcessingTimeInMs()
        yield pd.DataFrame({"key": [key[0]] * n, "due": [0] * n, "now": [now] * n})

    def close(self) -> None:
        """Nothing to release."""


class CrashOnce:
    """A `foreachBatch` writer that records each batch that wrote rows, and fails the first batch with a row
    of key `key`, after recording it (a crash between the sink's write and the commit)."""

    def __init__(self, key: str):
        self.key, self.attempts, self.crashed = key, [], False

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        rows = sorted(tuple(r) for r in batch.collect())
        if rows:
            self.attempts.append((batch_id, rows))
        if not self.crashed and any(r[0] == self.key for r in rows):
            self.crashed = True
            raise RuntimeError(f"planted crash after batch {batch_id}'s write")

    def runs_of(self, key: str) -> list[tuple[int, list]]:
        return [(b, rows) for b, rows in self.attempts if any(r[0] == key for r in rows)]


def _start(q: MemoryQuery, writer: CrashOnce, **trigger: Any) -> Any:
    """`q`'s stream through its transform into `writer`, on its checkpoint, under `trigger` (default: every
    100 ms)."""
    q.session.conf.set(PROVIDER, ROCKSDB)
    try:
        out = q.transform(q.rows).writeStream.foreachBatch(writer)
        out = out.option("checkpointLocation", str(q.checkpoint))
        return out.trigger(**(trigger or {"processingTime": "100 milliseconds"})).start()
    finally:
        q.session.conf.unset(PROVIDER)


def _crashed_at_b(session: Any, root: Path) -> tuple[MemoryQuery, CrashOnce]:
    """A `StampsEachRow` query whose batch with key `b`'s record failed after its write: its `offsets/N`
    journaled, no `commits/N`."""
    q, writer = MemoryQuery(session, root, _processed(StampsEachRow())), CrashOnce("b")
    q.query = _start(q, writer)
    q.offer(row("a", 0, "a first batch"))
    until(lambda: writer.runs_of("a"), "key a's batch ran")
    q.offer(row("b", 0, "the batch that fails"))
    until(lambda: not q.query.isActive, "the query failed")
    assert "planted crash after batch" in str(q.query.exception())
    return q, writer


def test_a_batch_run_again_after_a_crash_runs_at_the_batch_timestamp_it_journaled(spark_session, tmp_path):
    """Batch N (key `b`'s record) fails after its write; the query started again on the checkpoint a second
    later runs batch N again, and the processor is handed the T(N) `offsets/N` journaled, not the clock of the
    restart: a processing-time timer fires in the re-run batch as it did in the first run."""
    q, writer = _crashed_at_b(spark_session, tmp_path)
    time.sleep(1.0)  # the restart's clock is a second past T(N)
    q.query = _start(q, writer)
    until(lambda: len(writer.runs_of("b")) == 2, "key b's batch ran again")
    q.stop()
    stamps = batch_timestamps(q.checkpoint)
    (first, rows), (again, rows_again) = writer.runs_of("b")
    [(key, _, now)] = rows_again
    assert again == first and rows_again == rows and now == stamps[first], (writer.attempts, stamps)
    assert time.time() * 1000 - now > 1_000, (now, stamps)


def test_a_trigger_once_start_on_a_pending_batch_runs_that_batch_alone_at_its_journaled_clock(
    spark_session, tmp_path
):
    """Batch N (key `b`'s record) failed after its write, and the source has a record more since: a start with
    `trigger(once=True)` runs batch N again, at the T(N) it journaled, and ends without planning batch N+1. So
    a batch's run can be repeated from a journaled `offsets/N` alone, at the clock it first ran at."""
    q, writer = _crashed_at_b(spark_session, tmp_path)
    q.offer(row("c", 0, "after the crash"))
    q.query = _start(q, writer, once=True)
    assert q.query.awaitTermination(60), "a trigger(once=True) start did not end by itself"
    stamps = batch_timestamps(q.checkpoint)
    (first, rows), (again, rows_again) = writer.runs_of("b")
    assert again == first == max(stamps) and rows_again == rows, (writer.attempts, stamps)
    assert rows_again[0][2] == stamps[first] and not writer.runs_of("c"), (writer.attempts, stamps)
    assert (q.checkpoint / "commits" / str(first)).exists()


@pytest.mark.parametrize("processor", PROCESSORS)
def test_an_available_now_start_of_a_processing_time_processor_never_ends(spark_session, tmp_path, processor):
    """An `availableNow` start runs the records the source holds, then keeps planning batches without data: a
    processing-time processor (or a group with a processing-time timeout) always wants another batch, so the
    start never ends by itself. Only a `trigger(once=True)` start (one batch) ends: the one trigger a trial of
    such a processor can run under."""
    q, writer = MemoryQuery(spark_session, tmp_path, PROCESSORS[processor]), CrashOnce("none")
    q.offer(row("0", 0, "the only record"))
    q.query = _start(q, writer, availableNow=True)
    until(lambda: max(batch_timestamps(q.checkpoint), default=0) >= 10, "ten batches after the first ran")
    assert q.query.isActive, q.query.exception()
    q.stop()
    assert len(writer.attempts) == 1, writer.attempts  # the timer's row (batch 0), or the timeout's (later)
    assert not any(moved(q.checkpoint, b) for b in batch_timestamps(q.checkpoint) if b > 0)


class CountsWithTtl(StatefulProcessor):
    """A key's record count in a value state with a TTL of an hour."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.count = handle.getValueState("count", "n long", 3_600_000)

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: TimerValues) -> Iterator[Any]:
        import pandas as pd

        n = (self.count.get()[0] if self.count.exists() else 0) + sum(len(frame) for frame in rows)
        self.count.update((n,))
        yield pd.DataFrame({"key": [key[0]], "due": [0], "now": [n]})

    def close(self) -> None:
        """Nothing to release."""


@pytest.mark.parametrize("time_mode", ["None", "EventTime", "ProcessingTime"])
def test_state_with_a_ttl_is_refused_by_spark_unless_the_processor_runs_in_processing_time(
    spark_session, tmp_path, time_mode
):
    """State TTL counts from the batch clock T(N): Spark refuses a state variable with a TTL, when the
    processor's `init` declares it, in a processor whose time mode is not `ProcessingTime`, and runs it in one
    that is. So a processor with state TTL is a processing-time processor, which the stateful suite runs one
    batch a start (docs/streaming.md, "Processing-time timers and state TTL")."""

    def transform(rows: DataFrame) -> DataFrame:
        timed = rows.withWatermark("event_time", "1 second") if time_mode == "EventTime" else rows
        return timed.groupBy("key").transformWithStateInPandas(CountsWithTtl(), SCHEMA, "Append", time_mode)

    q, writer = MemoryQuery(spark_session, tmp_path, transform), CrashOnce("none")
    q.offer(row("a", 0, "a record"))
    q.query = _start(q, writer)
    if time_mode == "ProcessingTime":
        until(lambda: writer.attempts, "the record's count was written")
        assert writer.attempts[0][1] == [("a", 0, 1)], writer.attempts
        return
    until(lambda: not q.query.isActive, "the query failed")
    assert "STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL" in str(q.query.exception())
    assert not writer.attempts, writer.attempts


@pytest.mark.parametrize("processor", PROCESSORS)
def test_a_once_start_with_nothing_new_runs_no_batch_even_for_a_processing_time_processor(
    spark_session, tmp_path, processor
):
    """A `trigger(once=True)` start runs the records the source holds in one batch and ends; a second start with
    nothing new ends without a batch, though the processor has a timer registered (or the group a timeout set; a
    processing-time trigger would run one on every trigger). So a processing-time timer fires in a `once` run
    only in a batch with data."""
    q, writer = MemoryQuery(spark_session, tmp_path, PROCESSORS[processor]), CrashOnce("none")
    q.offer(row("1", 0, "a timer a millisecond after T(0)"))
    for _ in range(2):
        q.query = _start(q, writer, once=True)
        assert q.query.awaitTermination(60), "a trigger(once=True) start did not end by itself"
        time.sleep(0.01)  # past the timer
    assert sorted(batch_timestamps(q.checkpoint)) == [0] and not writer.attempts, writer.attempts
