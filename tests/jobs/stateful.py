"""Stateful, event-time jobs written as a user would, for `--suite stateful --job tests.jobs.stateful:NAME`:
good ones, and the mistakes users make with watermarks, output modes and writers."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

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


class AppendWindowsAppendWriter(AppendWindows):
    """The pattern of Spark's docs, `mode("append")`: a batch Spark runs again after a crash between the
    write and its commit appends its windows a second time."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(str(self.directory))


def append_writer(directory: str) -> AppendWindowsAppendWriter:
    return AppendWindowsAppendWriter(directory)


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
