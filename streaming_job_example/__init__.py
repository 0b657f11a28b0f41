"""A worked example of a user's streaming job under `frontier-harness check --suite streaming --job`.

    frontier-harness check --suite streaming --job frontier_harness.streaming_job_example:factory

The writer is idempotent: batch `N` overwrites its own directory `batch_id=N/`, so a batch
Spark runs again after a crash between the write and its commit replaces what the first
run wrote instead of adding to it. `read` is what a downstream reader sees: every batch
directory, with the batch id Spark's partition discovery gives back as a `batch_id` column
(so the harness checks each row's batch too). There is no `transform`: the batch holds the
records as the harness's source makes them (`data`, `partition`, `offset`).

`factory` is typed with the protocol (`frontier_harness.StreamingJob`), which mypy checks.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from frontier_harness import JobFactory, StreamingJob


class OverwriteEachBatch:
    """`foreachBatch` into one directory per batch, overwritten when the batch runs again."""

    def __init__(self, directory: str):
        self.directory = Path(directory)

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(str(self.directory / f"batch_id={batch_id}"))

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not any(self.directory.glob("batch_id=*/*.parquet")):
            return None
        return spark.read.parquet(str(self.directory))


def factory(directory: str) -> StreamingJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return OverwriteEachBatch(directory)


_checked: JobFactory = factory  # mypy: the factory satisfies the protocol
