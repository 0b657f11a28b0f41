"""A worked example of a stateful job under `frontier-harness check --suite stateful --job`.

    frontier-harness check --suite stateful --job frontier_harness.streaming_job_example.windowed_counts:factory

A count of records per key and 10-second window of event time, in update mode, under a 5-second
watermark. The writer is an idempotent upsert: batch `N` writes the whole table, the rows of the
newest version below `N` with the batch's rows replacing theirs, to its own version directory
`vN/`, then points `current` at it (an atomic rename). A batch Spark runs again after a crash writes
the same version from the same base, whether or not the first run moved the pointer. `read` is what a
downstream reader sees: the current version, one row per key and window.

`factory` is typed with the protocol (`frontier_harness.properties.checks.ingestion.job.StatefulJob`),
which mypy checks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from frontier_harness.properties.checks.ingestion.job import StatefulJob, StatefulJobFactory

GROUP = ["key", "window"]


class WindowedCounts:
    """Counts per key and 10-second window, upserted by (key, window) into versioned Parquet."""

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
        base = self._version_below(batch_id)
        table = batch
        if base is not None:
            kept = batch.sparkSession.read.parquet(str(base)).join(batch.select(*GROUP), GROUP, "left_anti")
            table = kept.unionByName(batch)
        table.write.mode("overwrite").parquet(str(self.directory / f"v{batch_id}"))
        pointer = self.directory / "current"
        temporary = self.directory / f".current.{batch_id}"
        temporary.write_text(str(batch_id))
        os.replace(temporary, pointer)

    def read(self, spark: SparkSession) -> DataFrame | None:
        pointer = self.directory / "current"
        if not pointer.exists():
            return None
        return spark.read.parquet(str(self.directory / f"v{pointer.read_text()}"))

    def _version_below(self, batch_id: int) -> Path | None:
        versions = [int(p.name[1:]) for p in self.directory.glob("v[0-9]*") if int(p.name[1:]) < batch_id]
        return self.directory / f"v{max(versions)}" if versions else None


def factory(directory: str) -> StatefulJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return WindowedCounts(directory)


_checked: StatefulJobFactory = factory  # mypy: the factory satisfies the protocol
