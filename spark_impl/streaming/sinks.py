"""The trials' durable sinks and how their contents are read back.

- `shard`: `foreachBatch` into the project's Parquet shard (`frontier_harness.spark_impl.ingestion.durable_shard`),
  idempotent per batch id: the shard's upper is the next batch id it expects, so a
  batch Spark re-runs after a crash between the sink and its commit is skipped.
- `files`: Spark's own file sink (`format("parquet")`), whose `_spark_metadata/` log
  lists each batch's files; readers trust only the files it lists.

Reading back is the trial observing durable output: small Parquet files read with
pyarrow, each row attributed to its batch id.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl.ingestion.durable_shard import DurableShard
from frontier_harness.spark_impl.streaming import faults

SOURCE, KIND = "streaming-trial", "sink"
SCHEMA = T.StructType(
    [
        T.StructField("data", T.StringType()),
        T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()),
        T.StructField("batch_id", T.LongType()),
    ]
)
BatchWriter = Callable[[DataFrame, int], None]


def shard_writer(path: str, fault_dir: str) -> BatchWriter:
    """The `foreachBatch` function: appends batch `b` once (upper `b` -> `b + 1`), then `after_sink`."""

    def write(batch: DataFrame, batch_id: int) -> None:
        shard = DurableShard.open_or_create(path, SOURCE, KIND, SCHEMA)
        upper = shard.upper(0)[0]
        if batch_id >= upper:
            shard.append(batch.withColumn("batch_id", F.lit(batch_id)), {0: [upper]}, {0: [batch_id + 1]})
        faults.fire(fault_dir, CrashPoint.AFTER_SINK)

    return write


def shard_contents(path: Path) -> dict[int, list[list[str]]]:
    """Per batch id, the data of each shard part holding rows of that batch (one part per write)."""
    if not path.exists():
        return {}
    found: dict[int, list[list[str]]] = {}
    for name in DurableShard.open(path, SOURCE, KIND).manifest.files:
        table = pq.read_table(path / "parts" / name, columns=["data", "batch_id"]).to_pydict()
        by_batch: dict[int, list[str]] = {}
        for data, batch in zip(table["data"], table["batch_id"]):
            by_batch.setdefault(batch, []).append(data)
        for batch, rows in by_batch.items():
            found.setdefault(batch, []).append(rows)
    return found


def file_sink_log(path: Path) -> dict[int, list[list[str]]]:
    """The file sink's `_spark_metadata/`: per batch id, the files each of its log files adds.

    A compaction `N.compact` lists every file so far; it adds only those no earlier log file listed.
    """
    log = path / "_spark_metadata"
    if not log.exists():
        return {}
    batches: dict[int, list[list[str]]] = {}
    listed: set = set()
    entries = sorted((int(f.name.split(".")[0]), f.name, f) for f in log.iterdir() if f.name[0].isdigit())
    for batch, name, f in entries:
        files = [json.loads(line)["path"] for line in f.read_text().splitlines()[1:] if line.strip()]
        added = [p for p in files if p not in listed] if name.endswith(".compact") else files
        batches.setdefault(batch, []).append(added)
        listed.update(files)
    return batches


def file_sink_contents(path: Path) -> dict[int, list[list[str]]]:
    """Per batch id, the data each of its log files adds (one log file per write)."""
    return {
        batch: [[d for p in files for d in _column(p, "data")] for files in writes]
        for batch, writes in file_sink_log(path).items()
    }


def _column(uri: str, column: str) -> list:
    return pq.read_table(uri.removeprefix("file://"), columns=[column]).column(column).to_pylist()
