"""The CDC trials' own sink: each batch's changes kept by batch, the table they materialize read from them.

`change_writer(path, fault_dir)` is the `foreachBatch` function: batch `N`'s change rows, with the
source table's key `k` and value `v` taken out of `after` (or `before`, for a delete), overwrite the
directory `batch_id=N/`, so a batch Spark runs again replaces its first run's rows; then the
`after_sink` crash point fires. `changes(session, path)` reads back every change row with its batch and
how many times the sink holds it; `table(session, path)` is the table a downstream reader sees: per key
its newest change (by commit end LSN, then place in the transaction), a deleted key absent, computed
with Spark.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.cdc import Op
from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl.streaming import faults

KEY, VALUE, BATCH = "k", "v", "batch_id"
BatchWriter = Callable[[DataFrame, int], None]


def keyed(changes: DataFrame) -> DataFrame:
    """The change rows with the source table's key and value as columns `k` (int) and `v`."""
    key = F.coalesce(F.col("after").getItem(KEY), F.col("before").getItem(KEY)).cast("int")
    return changes.select(
        "lsn", "xid", "seq", "op", key.alias(KEY), F.col("after").getItem(VALUE).alias(VALUE)
    )


def change_writer(path: str, fault_dir: str) -> BatchWriter:
    """Overwrites `path/batch_id=N/` with batch `N`'s keyed changes, then `after_sink` may fire."""

    def write(batch: DataFrame, batch_id: int) -> None:
        keyed(batch).write.mode("overwrite").parquet(str(Path(path) / f"{BATCH}={batch_id}"))
        faults.fire(fault_dir, CrashPoint.AFTER_SINK)

    return write


def _written(session: Any, path: Path) -> DataFrame | None:
    if not any(path.glob(f"{BATCH}=*/*.parquet")):
        return None
    return session.read.parquet(str(path))


def changes(session: Any, path: Path) -> Counter:
    """`(batch, xid, seq, op, k, v)` -> how many times the sink holds that change."""
    written = _written(session, path)
    if written is None:
        return Counter()
    rows = written.groupBy(BATCH, "xid", "seq", "op", KEY, VALUE).count().collect()
    return Counter({(r[BATCH], r["xid"], r["seq"], r["op"], r[KEY], r[VALUE]): r["count"] for r in rows})


def table(session: Any, path: Path) -> Counter:
    """`(k, v)` -> count: per key its newest change, unless that is a delete."""
    written = _written(session, path)
    if written is None:
        return Counter()
    newest = Window.partitionBy(KEY).orderBy(F.col("lsn").desc(), F.col("seq").desc())
    latest = written.withColumn("_n", F.row_number().over(newest)).where(F.col("_n") == 1)
    rows = latest.where(F.col("op") != Op.DELETE).groupBy(KEY, VALUE).count().collect()
    return Counter({(r[KEY], r[VALUE]): r["count"] for r in rows})
