"""Jobs written as a user would: the docs' append writer (wrong under a re-run), idempotent ones, a transform.

Each is `--job tests.jobs.user:NAME`.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from frontier_harness.streaming_job_example import OverwriteEachBatch


def _files(directory: Path) -> bool:
    return any(directory.rglob("*.parquet"))


class AppendEachBatch:
    """The pattern of Spark's own docs: `batch.write.mode("append")`. A batch re-run after a crash
    between the write and Spark's commit is appended twice."""

    def __init__(self, directory: str):
        self.directory = Path(directory)

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(str(self.directory))

    def read(self, spark: SparkSession) -> DataFrame | None:
        return spark.read.parquet(str(self.directory)) if _files(self.directory) else None


def append(directory: str) -> AppendEachBatch:
    return AppendEachBatch(directory)


def overwrite(directory: str) -> OverwriteEachBatch:
    return OverwriteEachBatch(directory)


class SkipWrittenBatches:
    """Idempotent by lookup: appends a batch with its id, unless rows of that id are already there."""

    def __init__(self, directory: str):
        self.directory = Path(directory)

    def transform(self, records: DataFrame) -> DataFrame:
        """Row-wise: a new column, a renamed one, a filter."""
        return records.select(
            F.upper("data").alias("word"), "partition", "offset", (F.col("offset") * 10).alias("position")
        ).where(~F.col("word").endswith("3"))

    def write(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        if _files(self.directory):
            done = spark.read.parquet(str(self.directory)).where(F.col("batch_id") == batch_id)
            if not done.isEmpty():
                return
        batch.withColumn("batch_id", F.lit(batch_id)).write.mode("append").parquet(str(self.directory))

    def read(self, spark: SparkSession) -> DataFrame | None:
        return spark.read.parquet(str(self.directory)) if _files(self.directory) else None


def skip_written(directory: str) -> SkipWrittenBatches:
    return SkipWrittenBatches(directory)


class DropsPartitionOne(OverwriteEachBatch):
    """Bug: a filter meant for testing left in: rows of partition 1 are never written."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        super().write(batch.where(F.col("partition") != 1), batch_id)


def drops_partition(directory: str) -> DropsPartitionOne:
    return DropsPartitionOne(directory)


SEEN: set[tuple[str, int]] = set()  # (directory, batch_id): kept in the driver's memory, as a module global


class SkipSeenBatches(AppendEachBatch):
    """Idempotent only in memory: appends a batch unless this process saw its id. A crash after the write
    and a restart in a new driver process forget what was seen: the re-run batch is appended again."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        if (str(self.directory), batch_id) in SEEN:
            return
        super().write(batch, batch_id)
        SEEN.add((str(self.directory), batch_id))


def skip_seen(directory: str) -> SkipSeenBatches:
    return SkipSeenBatches(directory)


class SkipSeenLazily(AppendEachBatch):
    """Idempotent only in memory, through a helper imported inside `write` (`tests.jobs.seen_batches`): a
    restart that forgot only the modules the job's import brought in would keep the helper's set, and
    the re-run batch would be skipped. A new driver process forgets it: the batch is appended again."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        from tests.jobs import seen_batches

        if seen_batches.seen(str(self.directory), batch_id):
            return
        super().write(batch, batch_id)
        seen_batches.remember(str(self.directory), batch_id)


def skip_seen_lazily(directory: str) -> SkipSeenLazily:
    return SkipSeenLazily(directory)


class AppendWords(AppendEachBatch):
    """The docs' append writer under a transform that keeps no record's partition or offset (a word per
    record): a batch re-run after a crash between the write and Spark's commit is appended twice."""

    def transform(self, records: DataFrame) -> DataFrame:
        return records.select(F.upper("data").alias("word"))


def append_words(directory: str) -> AppendWords:
    return AppendWords(directory)


class BatchIdFromOne(SkipWrittenBatches):
    """Bug: the writer stamps each batch with `batch_id + 1` (counting batches from one), so no row read back
    carries the id of the batch it came from."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        super().write(batch, batch_id + 1)


def batch_id_from_one(directory: str) -> BatchIdFromOne:
    return BatchIdFromOne(directory)


class SkipUpToNewestByText(AppendEachBatch):
    """Bug: idempotent by the newest batch id written (the pattern of a writer that records the last batch it
    committed), kept as text: batch 10 is `"10" <= "9"`, skipped as written, and so is every batch after it."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        newest = self.directory / "_newest_batch"
        if newest.exists() and str(batch_id) <= newest.read_text():
            return
        super().write(batch, batch_id)
        newest.write_text(str(batch_id))


def newest_by_text(directory: str) -> SkipUpToNewestByText:
    return SkipUpToNewestByText(directory)
