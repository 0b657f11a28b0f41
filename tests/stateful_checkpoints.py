"""Real checkpoints of stateful queries, written once per test process and copied by the tests that edit them.

A windowed count (2 s windows, a 2 s watermark) over Spark's own `rate-micro-batch` source
(4 rows a batch, event time advancing 1 s a batch from 0), into a Parquet sink, run as
`RUNS` `availableNow` runs: each run a restart from the checkpoint. Measured on PySpark 4.3:
the first three runs plan one batch each, the later ones a data batch and then a no-data
batch that advances the watermark, so `RUNS = 4` leaves batches 0-4, all committed, and
two state partitions (`spark.sql.shuffle.partitions` 2). The same with the RocksDB provider,
a `dropDuplicatesWithinWatermark` query, and a `dropDuplicates` keyed on the watermarked event-time
column (`dedup_on_event_time`), each on its own session (`spark.newSession()`).
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from frontier_harness.spark_impl import scratch

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
RUNS = 4
PARTITIONS = 2


def _stream(session: Any) -> Any:
    return (
        session.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 4)
        .option("advanceMillisPerBatch", 1000)
        .option("startTimestamp", 0)
        .load()
        .withWatermark("timestamp", "2 seconds")
    )


def run_query(
    spark: Any, checkpoint: Path, provider: str | None = None, kind: str = "hdfs", runs: int = RUNS
) -> None:
    """`runs` availableNow runs of the windowed count (or the deduplication `kind` names) into `checkpoint`."""
    session = spark.newSession()
    session.conf.set("spark.sql.shuffle.partitions", str(PARTITIONS))
    if provider:
        session.conf.set(PROVIDER, provider)
    stream = _stream(session)
    stateful = (
        stream.dropDuplicatesWithinWatermark(["value"])
        if kind == "dedup"
        else stream.dropDuplicates(["value", "timestamp"])
        if kind == "dedup_on_event_time"
        else stream.groupBy(F.window("timestamp", "2 seconds")).count()
    )
    for _ in range(runs):
        query = (
            stateful.writeStream.outputMode("append")
            .format("parquet")
            .option("path", str(checkpoint / "sink"))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()


@functools.cache
def written(spark: Any, kind: str) -> Path:
    """The checkpoint of `kind` (`hdfs`, `rocksdb`, `dedup`, `dedup_on_event_time`), written once in this
    process."""
    root = scratch.directory(f"stateful-{kind}-") / "ck"  # removed when this process exits
    run_query(spark, root, ROCKSDB if kind == "rocksdb" else None, kind)
    return root


def copy(spark: Any, kind: str, to: Path) -> Path:
    """A copy of the checkpoint of `kind` at `to`, to edit."""
    shutil.copytree(written(spark, kind), to)
    return to
