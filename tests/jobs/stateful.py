"""Stateful, event-time jobs written as a user would, for `--suite stateful --job tests.jobs.stateful:NAME`:
good ones, and the mistakes users make with watermarks, output modes and writers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from frontier_harness.streaming_job_example.processor_counts import Counts, ProcessorCounts
from frontier_harness.streaming_job_example.windowed_counts import WindowedCounts


def _parquet(directory: Path) -> bool:
    return any(directory.rglob("*.parquet"))


def upsert_counts(directory: str) -> WindowedCounts:
    """The worked example: an update-mode windowed count with an idempotent upsert writer (holds)."""
    return WindowedCounts(directory)


class AppendWindows(WindowedCounts):
    """Append mode: each 10-second window's count and its newest record, written once the watermark passes
    it; the example's writer overwrites one directory per batch (idempotent); every row written is read."""

    output_mode: Literal["append", "update"] = "append"

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"), F.max("data").alias("last"))
        )

    def read(self, spark: SparkSession) -> DataFrame | None:
        return spark.read.parquet(str(self.directory)) if _parquet(self.directory) else None


def append_windows(directory: str) -> AppendWindows:
    return AppendWindows(directory)


class AppendWriter:
    """The pattern of Spark's docs, `mode("append")`: a batch Spark runs again after a crash between the
    write and its commit appends its rows a second time."""

    directory: Path

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(str(self.directory))


class AppendWindowsAppendWriter(AppendWriter, AppendWindows):
    """Append-mode windowed counts written with the docs' `mode("append")` (`AppendWriter`)."""


def append_writer(directory: str) -> AppendWindowsAppendWriter:
    return AppendWindowsAppendWriter(directory)


class AppendWindowsOneBatchLate(AppendWindows):
    """Bug: each batch's windows are staged, and published by the next batch's write (a writer that commits
    one batch behind): after a batch commits, the windows it emitted are not in the result yet."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        for staged in sorted((self.directory / "staged").glob("batch_id=*")):
            if int(staged.name.split("=")[1]) < batch_id and _parquet(staged):
                published = str(self.directory / "published" / staged.name)
                spark.read.parquet(str(staged)).write.mode("overwrite").parquet(published)
        batch.write.mode("overwrite").parquet(str(self.directory / "staged" / f"batch_id={batch_id}"))

    def read(self, spark: SparkSession) -> DataFrame | None:
        published = self.directory / "published"
        return spark.read.parquet(str(published)) if _parquet(published) else None


def one_batch_late(directory: str) -> AppendWindowsOneBatchLate:
    return AppendWindowsOneBatchLate(directory)


class UpsertByWindow(WindowedCounts):
    """Bug: the upsert's key forgets `key`: a window keeps only the row of the key written last."""

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not _parquet(self.directory):
            return None
        rows = spark.read.parquet(str(self.directory))
        newest = rows.groupBy("window").agg(F.max(F.struct("batch_id", "key")).alias("last"))
        return (
            rows.join(newest, "window")
            .where((F.col("batch_id") == F.col("last.batch_id")) & (F.col("key") == F.col("last.key")))
            .drop("last")
        )


def upsert_by_window(directory: str) -> UpsertByWindow:
    return UpsertByWindow(directory)


class NewestByText(WindowedCounts):
    """Bug: the upsert's newest batch is picked by its id as text: from batch 10 on, `"9" > "10"` keeps a
    group's row of batch 9 over its newer one."""

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not _parquet(self.directory):
            return None
        rows = spark.read.parquet(str(self.directory))
        newest = rows.groupBy("key", "window").agg(F.max(F.col("batch_id").cast("string")).alias("last"))
        return (
            rows.join(newest, ["key", "window"])
            .where(F.col("batch_id").cast("string") == F.col("last"))
            .drop("last")
        )


def newest_by_text(directory: str) -> NewestByText:
    return NewestByText(directory)


class PromisesTenSeconds(WindowedCounts):
    """Bug: the job promises to count records up to 10 s late, but its watermark waits 1 s."""

    lateness: str | None = "10 seconds"

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "1 second")
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )


def promises_ten_seconds(directory: str) -> PromisesTenSeconds:
    return PromisesTenSeconds(directory)


class DeduplicatedDeliveries(AppendWindows):
    """At-least-once deliveries deduplicated within the watermark (a redelivery repeats key, data and event
    time), written per batch (idempotent): holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .dropDuplicatesWithinWatermark(["key", "data"])
            .select("key", "data", "event_time")
        )


def deduplicated(directory: str) -> DeduplicatedDeliveries:
    return DeduplicatedDeliveries(directory)


class FirstPerTenant(DeduplicatedDeliveries):
    """The first record of each tenant within the watermark, a tenant derived from the key (keys `b` and `c`
    are one tenant's), written per batch (idempotent): holds. A record of `c` within the delay of one of `b`
    is the tenant's duplicate, though their keys differ."""

    def transform(self, records: DataFrame) -> DataFrame:
        tenant = F.when(F.col("key") == "c", F.lit("b")).otherwise(F.col("key"))
        return (
            records.withWatermark("event_time", "5 seconds")
            .withColumn("tenant", tenant)
            .dropDuplicatesWithinWatermark(["tenant"])
            .select("tenant", "key", "data", "event_time")
        )


def first_per_tenant(directory: str) -> FirstPerTenant:
    return FirstPerTenant(directory)


class DeduplicatedWithPosition(DeduplicatedDeliveries):
    """The deduplication, keeping where each record kept was read (its partition and offset) for audit: holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .dropDuplicatesWithinWatermark(["key", "data"])
            .select("key", "data", "event_time", "partition", "offset")
        )


def deduplicated_with_position(directory: str) -> DeduplicatedWithPosition:
    return DeduplicatedWithPosition(directory)


class SlidingCounts(WindowedCounts):
    """An update-mode count per key over 10-second windows sliding every 5 seconds, the example's upsert
    writer: a record late for its older window is still counted in its newer one (holds)."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key", F.window("event_time", "10 seconds", "5 seconds"))
            .agg(F.count("*").alias("count"))
        )


def sliding_counts(directory: str) -> SlidingCounts:
    return SlidingCounts(directory)


class DeduplicatedPromisesTenSeconds(DeduplicatedDeliveries):
    """Bug: the deduplication promises to keep records up to 10 s late, but its watermark waits 5 s: a
    record 6 s behind the newest is dropped as late, though it is the first of its key and data."""

    lateness: str | None = "10 seconds"


def deduplicated_promises_ten_seconds(directory: str) -> DeduplicatedPromisesTenSeconds:
    return DeduplicatedPromisesTenSeconds(directory)


class WindowsWithoutWatermark(WindowedCounts):
    """Bug: the example's windowed count with its watermark forgotten: no window is ever complete, and the
    state keeps every window forever."""

    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("key", F.window("event_time", "10 seconds")).agg(F.count("*").alias("count"))


def windows_without_watermark(directory: str) -> WindowsWithoutWatermark:
    return WindowsWithoutWatermark(directory)


class CountsPerKey(WindowedCounts):
    """Bug: a running count per key under a watermark, no window: the state keeps every key forever."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds").groupBy("key").agg(F.count("*").alias("count"))
        )

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not _parquet(self.directory):
            return None
        rows = spark.read.parquet(str(self.directory))
        newest = rows.groupBy("key").agg(F.max("batch_id").alias("batch_id"))
        return rows.join(newest, ["key", "batch_id"])


def counts_per_key(directory: str) -> CountsPerKey:
    return CountsPerKey(directory)


SEEN: set[tuple[str, int]] = set()  # (directory, batch_id): kept in the driver's memory, as a module global


class AppendWindowsSkipSeen(AppendWindowsAppendWriter):
    """Idempotent only in memory: appends a batch's windows unless this process saw its id. A restart after a
    crash between the write and Spark's commit is a new driver process: the re-run batch is appended again."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        if (str(self.directory), batch_id) in SEEN:
            return
        super().write(batch, batch_id)
        SEEN.add((str(self.directory), batch_id))


def skip_seen(directory: str) -> AppendWindowsSkipSeen:
    return AppendWindowsSkipSeen(directory)


class DeduplicatedCounts(AppendWindows):
    """The first stateful job users write: deliveries deduplicated on their id (`data`) within the
    watermark, then counted per key and 10-second window in append mode, each batch's windows written to a
    directory of its own (idempotent): holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .dropDuplicatesWithinWatermark(["data"])
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )


def deduplicated_counts(directory: str) -> DeduplicatedCounts:
    return DeduplicatedCounts(directory)


class DeduplicatedCountsAppendWriter(AppendWriter, DeduplicatedCounts):
    """The same with the docs' `mode("append")` writer (`AppendWriter`)."""


def deduplicated_counts_append_writer(directory: str) -> DeduplicatedCountsAppendWriter:
    return DeduplicatedCountsAppendWriter(directory)


class RolledUpCounts(AppendWindows):
    """Counts rolled up: per key and 10-second window, then per key and 30-second window over those windows
    (`window_time`), in append mode (each operator with its own watermarks, Spark 3.4 on), each batch's
    windows written to a directory of its own (idempotent): holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        per_ten = (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )
        return per_ten.groupBy("key", F.window(F.window_time("window"), "30 seconds")).agg(
            F.sum("count").alias("count")
        )


def rolled_up_counts(directory: str) -> RolledUpCounts:
    return RolledUpCounts(directory)


class RolledUpCountsAppendWriter(AppendWriter, RolledUpCounts):
    """The same with the docs' `mode("append")` writer (`AppendWriter`)."""


def rolled_up_counts_append_writer(directory: str) -> RolledUpCountsAppendWriter:
    return RolledUpCountsAppendWriter(directory)


class SessionCounts(AppendWindows):
    """Sessions of activity per key (a 10-second gap) under a 5-second watermark, their record counts written
    once each session closes (append mode), per batch (idempotent): holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key", F.session_window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )


def session_counts(directory: str) -> SessionCounts:
    return SessionCounts(directory)


class SessionCountsAppendWriter(AppendWriter, SessionCounts):
    """The same with the docs' `mode("append")` writer (`AppendWriter`): a batch run again appends the
    sessions it closed a second time."""


def session_counts_append_writer(directory: str) -> SessionCountsAppendWriter:
    return SessionCountsAppendWriter(directory)


class RunningCounts(WindowedCounts):
    """A user's processor without timers: a running count per key in its `ValueState`, in update mode."""

    def transform(self, records: DataFrame) -> DataFrame:
        from tests.jobs.refused import RunningCount

        return records.groupBy("key").transformWithStateInPandas(
            RunningCount(), "key string, count long", "Update", "None"
        )


def running_counts(directory: str) -> RunningCounts:
    return RunningCounts(directory)


class RunningCountsWithTimeouts(WindowedCounts):
    """The same count with `applyInPandasWithState` and event-time timeouts, under a 5-second watermark."""

    def transform(self, records: DataFrame) -> DataFrame:
        from tests.jobs.refused import _running_count

        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key")
            .applyInPandasWithState(
                _running_count,
                "key string, count long",
                "count long",
                "update",
                GroupStateTimeout.EventTimeTimeout,
            )
        )


def running_counts_with_timeouts(directory: str) -> RunningCountsWithTimeouts:
    return RunningCountsWithTimeouts(directory)


class ProcessorCountsAppendWriter(AppendWriter, ProcessorCounts):
    """The processor example (`processor_counts`) written with the docs' `mode("append")`: a batch whose
    timers fired, run again after a crash between its write and its commit, fires them again and appends
    their rows a second time."""

    def read(self, spark: SparkSession) -> DataFrame | None:
        return spark.read.parquet(str(self.directory)) if _parquet(self.directory) else None


def processor_append_writer(directory: str) -> ProcessorCountsAppendWriter:
    return ProcessorCountsAppendWriter(directory)


def count_until_window_end(
    key: tuple, frames: Iterator[pd.DataFrame], state: GroupState
) -> Iterator[pd.DataFrame]:
    """`processor_counts`'s count as an `applyInPandasWithState` function: a group's records counted in its
    state, its event-time timeout at the end of the 10-second window its first record falls in (past the
    watermark), set again at every call (Spark clears a group's timeout whenever it calls the function);
    when the timeout fires, `(key, due, count)` is emitted and the state removed."""
    if state.hasTimedOut:
        yield _timed_out(key, state)
        return
    frames = list(frames)
    if state.exists:
        count, due = state.get
    else:
        first = min(int(f["event_time"].min().value // 1_000_000) for f in frames)
        count, due = 0, max(Counts.due_of(first), state.getCurrentWatermarkMs() + 1)
    state.update((count + sum(len(f) for f in frames), due))
    state.setTimeoutTimestamp(max(due, state.getCurrentWatermarkMs() + 1))


QUIET_MS = 10_000


def count_until_quiet(
    key: tuple, frames: Iterator[pd.DataFrame], state: GroupState
) -> Iterator[pd.DataFrame]:
    """`count_until_window_end` whose timeout is `QUIET_MS` after the newest record of its group: a call with
    new data moves it later, before it was due."""
    if state.hasTimedOut:
        yield _timed_out(key, state)
        return
    frames = list(frames)
    newest = max(int(f["event_time"].max().value // 1_000_000) for f in frames)
    count = state.get[0] if state.exists else 0
    due = max(newest + QUIET_MS, state.getCurrentWatermarkMs() + 1)
    state.update((count + sum(len(f) for f in frames), due))
    state.setTimeoutTimestamp(due)


def _timed_out(key: tuple, state: GroupState) -> pd.DataFrame:
    """A timed-out group's row `(key, due, count)`; its state removed."""
    count, due = state.get
    state.remove()
    return pd.DataFrame({"key": [key[0]], "due": [due], "count": [count]})


class GroupCounts(ProcessorCounts):
    """`processor_counts` written with `applyInPandasWithState` and event-time timeouts: the same rows."""

    function = staticmethod(count_until_window_end)  # the group's function

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key")
            .applyInPandasWithState(
                self.function,
                "key string, due long, count long",
                "count long, due long",
                "append",
                GroupStateTimeout.EventTimeTimeout,
            )
        )


class QuietGroupCounts(GroupCounts):
    """`GroupCounts` whose timeout moves with every record of its group (`count_until_quiet`)."""

    function = staticmethod(count_until_quiet)


def quiet_group_counts(directory: str) -> QuietGroupCounts:
    return QuietGroupCounts(directory)


def group_counts(directory: str) -> GroupCounts:
    return GroupCounts(directory)


class FilteredCounts(WindowedCounts):
    """The worked example's count of the records of keys other than `c`, filtered before the watermark (so
    a record of `c` never moves it), upserted per key and window (idempotent): holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.where(F.col("key") != "c")
            .withWatermark("event_time", "5 seconds")
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )


def filtered_counts(directory: str) -> FilteredCounts:
    return FilteredCounts(directory)


class FilteredDeliveries(DeduplicatedDeliveries):
    """Deliveries of keys other than `c` deduplicated within the watermark, the filter written after it
    (Spark runs it under the watermark: a record of `c` moves nothing), written per batch (idempotent):
    holds."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .where(F.col("key") != "c")
            .dropDuplicatesWithinWatermark(["key", "data"])
            .select("key", "data", "event_time")
        )


def filtered_deliveries(directory: str) -> FilteredDeliveries:
    return FilteredDeliveries(directory)


class EarlyCounts(WindowedCounts):
    """The worked example's count of the records before 60 s of event time, the filter on the event time
    after the watermark (Spark keeps it above the watermark: a later record moves it, then is dropped)."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .where(F.col("event_time") < F.timestamp_millis(F.lit(60_000)))
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )


def early_counts(directory: str) -> EarlyCounts:
    return EarlyCounts(directory)


class NotNullCounts(WindowedCounts):
    """The worked example behind a filter that drops none of the source's records (`IS NOT NULL` on two of
    its columns): no prefix to follow."""

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.where(F.col("key").isNotNull() & F.col("data").isNotNull())
            .withWatermark("event_time", "5 seconds")
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )


def not_null_counts(directory: str) -> NotNullCounts:
    return NotNullCounts(directory)


class WindowCounts(StatefulProcessor):
    """A key's records counted per 10-second window in a `MapState` (window start -> count), one event-time
    timer per window at its end, the window's row emitted and its entry removed when it fires. A record whose
    window the watermark Spark hands the processor has passed is skipped: correct, and a crash changes nothing
    it writes (a user's job the audit of session 25 wrote)."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.windows = handle.getMapState("windows", "start long", "n long")

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        mark = timerValues.getCurrentWatermarkInMs()
        added: dict[int, int] = {}
        for frame in rows:
            for t in frame["event_time"]:
                start = int(pd.Timestamp(t).value // 1_000_000) // 10_000 * 10_000
                if start + 10_000 > mark:
                    added[start] = added.get(start, 0) + 1
        for start, n in added.items():
            held = self.windows.getValue((start,)) if self.windows.containsKey((start,)) else None
            if held is None:
                self.handle.registerTimer(start + 10_000)
            self.windows.updateValue((start,), (n + (int(held[0]) if held else 0),))
        return iter(())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        start = expiredTimerInfo.getExpiryTimeInMs() - 10_000
        if self.windows.containsKey((start,)):
            n = int(self.windows.getValue((start,))[0])
            self.windows.removeKey((start,))
            yield pd.DataFrame({"key": [key[0]], "due": [start + 10_000], "count": [n]})

    def close(self) -> None:
        """Nothing to release."""


class WindowCountsJob(ProcessorCounts):
    processor = WindowCounts  # another processor, the same output


def window_counts(directory: str) -> WindowCountsJob:
    return WindowCountsJob(directory)
