"""A worked example of a CDC job under `frontier-harness check --suite cdc --job`.

    frontier-harness check --suite cdc --job frontier_harness.streaming_job_example.cdc_upsert:factory

The job materializes the source table `t (k, v)` from the CDC source's change rows (`lsn`, `xid`, `seq`,
`op`, `relation`, `before`, `after`: `frontier_harness.spark_impl.cdc.source`). The writer is an idempotent
upsert, merged on read: batch `N` overwrites its own directory `batch_id=N/` with its changes, keyed, so a
batch Spark runs again after a crash replaces what its first run wrote; `read`, what a downstream reader
sees, keeps for each key its newest change (by commit end LSN, then its place in the transaction) unless
that is a delete: one row per key, as the table in PostgreSQL.

`factory` is typed with the protocol (`frontier_harness.StreamingJob`), which mypy checks.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from frontier_harness import JobFactory, StreamingJob


class UpsertByKey:
    """Each batch's changes in a directory of its own; the table read back as each key's newest change."""

    def __init__(self, directory: str):
        self.directory = Path(directory)

    def write(self, batch: DataFrame, batch_id: int) -> None:
        key = F.coalesce(F.col("after")["k"], F.col("before")["k"]).cast("int")
        changes = batch.select("lsn", "seq", "op", key.alias("k"), F.col("after")["v"].alias("v"))
        changes.write.mode("overwrite").parquet(str(self.directory / f"batch_id={batch_id}"))

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not any(self.directory.glob("batch_id=*/*.parquet")):
            return None
        newest = Window.partitionBy("k").orderBy(F.col("lsn").desc(), F.col("seq").desc())
        changes = spark.read.parquet(str(self.directory)).withColumn("newest", F.row_number().over(newest))
        return changes.where((F.col("newest") == 1) & (F.col("op") != "delete")).select("k", "v")


def factory(directory: str) -> StreamingJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return UpsertByKey(directory)


_checked: JobFactory = factory  # mypy: the factory satisfies the protocol
