"""CDC jobs written as a user would, for `check --suite cdc --job tests.jobs.cdc:NAME`.

`append_diffs` keeps the table as a collection of updates: each change appended as `(k, v, diff)` rows
(an insert `+1`, a delete `-1` of the old row, an update both) with Spark's docs' `mode("append")`, read
back as the rows whose diffs sum above zero. Right without crashes; a batch Spark runs again after a crash
after its write is appended twice, and its rows come back doubled. `append_unless_seen_lazily` skips a
batch id a helper it imports inside `write` remembers (`tests.jobs.seen_batches`): idempotent only in
memory, so a restart in a new driver process appends the re-run batch again.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F


class AppendDiffs:
    def __init__(self, directory: str):
        self.path = str(Path(directory) / "diffs")

    def write(self, batch: DataFrame, batch_id: int) -> None:
        old = batch.where(F.col("before").isNotNull()).select(
            F.col("before")["k"].cast("int").alias("k"),
            F.col("before")["v"].alias("v"),
            F.lit(-1).alias("diff"),
        )
        new = batch.where(F.col("after").isNotNull()).select(
            F.col("after")["k"].cast("int").alias("k"), F.col("after")["v"].alias("v"), F.lit(1).alias("diff")
        )
        old.unionByName(new).write.mode("append").parquet(self.path)

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not Path(self.path).exists():
            return None
        held = spark.read.parquet(self.path).groupBy("k", "v").agg(F.sum("diff").alias("n")).where("n > 0")
        return held.select("k", "v", F.explode(F.sequence(F.lit(1), F.col("n")))).select("k", "v")


def append_diffs(directory: str) -> AppendDiffs:
    return AppendDiffs(directory)


class AppendUnlessSeenLazily(AppendDiffs):
    def write(self, batch: DataFrame, batch_id: int) -> None:
        from tests.jobs import seen_batches

        if seen_batches.seen(self.path, batch_id):
            return
        super().write(batch, batch_id)
        seen_batches.remember(self.path, batch_id)


def append_unless_seen_lazily(directory: str) -> AppendUnlessSeenLazily:
    return AppendUnlessSeenLazily(directory)
