"""Jobs the trials refuse (one line, exit 2), and two whose writer or read fails (a failure of the job, exit 1)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.streaming_job_example import OverwriteEachBatch


class WriteOnly:
    def __init__(self, directory: str):
        self.directory = directory

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(self.directory)


def no_read(directory: str) -> WriteOnly:
    return WriteOnly(directory)


class ReadsAList(OverwriteEachBatch):
    def read(self, spark):  # type: ignore[override]  # planted: returns a list, not the protocol's DataFrame
        return [("r0", 0, 0)]


def read_returns_list(directory: str) -> ReadsAList:
    return ReadsAList(directory)


class Counting(OverwriteEachBatch):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("partition").count()


def aggregating(directory: str) -> Counting:
    return Counting(directory)


class Deduplicating(OverwriteEachBatch):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.dropDuplicates(["data"])


def deduplicating(directory: str) -> Deduplicating:
    return Deduplicating(directory)


class Joining(OverwriteEachBatch):
    def transform(self, records: DataFrame) -> DataFrame:
        names = records.sparkSession.createDataFrame([(0, "zero"), (1, "one")], "partition int, name string")
        return records.join(names, "partition")


def joining(directory: str) -> Joining:
    return Joining(directory)


class FailingWriter(OverwriteEachBatch):
    def write(self, batch: DataFrame, batch_id: int) -> None:
        if batch_id >= 1:
            raise OSError(f"disk full while writing batch {batch_id}")
        super().write(batch.withColumn("data", F.col("data")), batch_id)


def failing_writer(directory: str) -> FailingWriter:
    return FailingWriter(directory)


class ReadsAColumnItNeverWrote(OverwriteEachBatch):
    def read(self, spark):  # type: ignore[override]
        written = super().read(spark)
        return None if written is None else written.select("total")  # planted: no such column


def read_raises_once_written(directory: str) -> ReadsAColumnItNeverWrote:
    return ReadsAColumnItNeverWrote(directory)
