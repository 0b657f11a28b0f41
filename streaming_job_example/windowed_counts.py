"""A worked example of a stateful job under `frontier-harness check --suite stateful --job`.

    frontier-harness check --suite stateful --job frontier_harness.streaming_job_example.windowed_counts:factory

A count of records per key and 10-second window of event time, in update mode, under a 5-second
watermark. The writer is an idempotent upsert, merged on read: batch `N` overwrites its own directory
`batch_id=N/` with the rows the batch updated, so a batch Spark runs again after a crash replaces what
its first run wrote; `read`, what a downstream reader sees, keeps for each key and window the row of the
newest batch that wrote it (one row per group). There is no separate merge step to crash between.

`factory` is typed with the protocol (`frontier_harness.StatefulJob`),
which mypy checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from frontier_harness import StatefulJob, StatefulJobFactory

GROUP = ("key", "window")


class WindowedCounts:
    """Counts per key and 10-second window, upserted by (key, window): the newest batch's row wins."""

    output_mode: Literal["append", "update"] = "update"
    lateness: str | None = None  # the watermark's delay: records up to 5 s behind the newest are counted

    def __init__(self, directory: str):
        self.directory = Path(directory)

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key", F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("count"))
        )

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(str(self.directory / f"batch_id={batch_id}"))

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not any(self.directory.glob("batch_id=*/*.parquet")):
            return None
        rows = spark.read.parquet(str(self.directory))
        newest = Window.partitionBy(*GROUP).orderBy(F.col("batch_id").desc())
        return rows.withColumn("_rank", F.row_number().over(newest)).where("_rank = 1").drop("_rank")


def factory(directory: str) -> StatefulJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return WindowedCounts(directory)


_checked: StatefulJobFactory = factory  # mypy: the factory satisfies the protocol
