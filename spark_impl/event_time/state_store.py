"""A stateful query's state, read through Spark's own state data source (`state-metadata`, `statestore`).

Measured on PySpark 4.3.0 (`tests/test_spark_state_store.py` pins it on real checkpoints):

- `format("state-metadata").load(checkpoint)`: one row per operator and store, with
  `operatorId` (long), `operatorName` (`stateStoreSave` for an aggregation,
  `dedupeWithinWatermark`, `dedupe`, `transformWithStateExec`, ...), `stateStoreName`,
  `numPartitions`, `minBatchId`, `maxBatchId` and `operatorProperties` (a JSON string or null);
  no row for an operator without operator metadata (`state/<id>/_metadata/`), as Spark 3.5 and before
  write them (`tests/recorded/spark35_counts.tar.gz`): such an operator is read from its state directories
  (`state/<id>/<partition>/[<store>/]`), its kind unknown (`name` None);
- `format("statestore").option("batchId", b).option("operatorId", o).option("storeName", s)`:
  the store's rows as it was after batch `b` (its version `b + 1`), columns `key` (a
  struct of the grouping keys: a windowed aggregation's holds `window: struct<start, end>`
  as timestamps; a deduplication's the deduplicated columns), `value` (a struct: an
  aggregation's buffer, e.g. `count`; `dropDuplicatesWithinWatermark`'s
  `expiresAtMicros`), and `partition_id` (int). Without `batchId` it reads the newest
  committed batch.

Spark reads a state store's files lazily: a missing or truncated delta, snapshot or zip
shows only when rows are read, as Spark's `CANNOT_LOAD_STATE_STORE` error (a missing file
is named in it; a truncated one is not: `java.io.EOFException`). `read_or_raise` turns
that into `StateUnreadable`, naming the file when Spark does.

Each `statestore` read carries the session's Hadoop configuration in its partition reader factory (not a
broadcast), and a task deserializes every factory of its stage. Many stores' reads unioned, a task a store's
partition, deserialize it stores x partitions times: on the processor example's ten trials (4 jobs, 147
tasks), 26.2 CPU-s of deserializing against 4.2 s of reading. `together` unions them into `READ_TASKS`
partitions (there: 8 tasks, 1.2 s and 3.3 s).

>>> OperatorState(0, "stateStoreSave", ("default",), 2, 0, 7).batches
range(0, 8)
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as checkpoint:
...     for path in ("state/0/0/1.delta", "state/0/1/SSTs/a.sst", "state/0/_metadata/x",
...                  "commits/0", "commits/1", "commits/.1.crc"):
...         Path(checkpoint, path).parent.mkdir(parents=True, exist_ok=True)
...         Path(checkpoint, path).touch()
...     unlisted(checkpoint)
[OperatorState(operator_id=0, name=None, store_names=('default',), partitions=2, min_batch=0, max_batch=1)]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs
from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.spark_impl.errors import StateUnreadable

DEFAULT_STORE = "default"
NOT_STORES = ("SSTs", "_metadata")  # a partition's directories that are not stores (as the log laws read it)
EXPIRES = "expiresAtMicros"  # dropDuplicatesWithinWatermark's value: when its entry expires
WATERMARK_DELAY = "spark.watermarkDelayMs"  # the metadata key EventTimeWatermark puts on its column
CANNOT_LOAD = "CANNOT_LOAD_STATE_STORE"
_FILE = re.compile(r"(?:File |delta file |file )(file:\S+?)(?: does not exist| of |\s|$)")
READ_TASKS = 2  # the local session's cores (`session`'s `local[2]`)
Result = TypeVar("Result")


@attrs.frozen
class OperatorState:
    """One stateful operator of a checkpoint, as `state-metadata` describes it (`name` None: a checkpoint
    without operator metadata, read from its directories)."""

    operator_id: int
    name: str | None
    store_names: tuple[str, ...]
    partitions: int
    min_batch: int
    max_batch: int

    @property
    def batches(self) -> range:
        """The batches whose state the metadata says is kept."""
        return range(self.min_batch, self.max_batch + 1)


def operators(spark: Any, checkpoint: Path | str) -> list[OperatorState]:
    """Every stateful operator of the checkpoint, by operator id, as `state-metadata` lists it or else as its
    directories show it (`unlisted`); `[]` for a stateless query.

    The metadata is a few rows (one per operator and store), so it is collected.
    """
    if not (Path(checkpoint) / "state").is_dir():
        return []
    frame = spark.read.format("state-metadata").load(str(checkpoint))
    rows = read_or_raise(checkpoint, frame.collect)
    found: dict[int, OperatorState] = {}
    for row in sorted(rows, key=lambda r: (r["operatorId"], r["stateStoreName"])):
        known = found.get(row["operatorId"])
        stores = (known.store_names if known else ()) + (row["stateStoreName"],)
        found[row["operatorId"]] = OperatorState(
            row["operatorId"],
            row["operatorName"],
            stores,
            row["numPartitions"],
            row["minBatchId"],
            row["maxBatchId"],
        )
    unnamed = {op.operator_id: op for op in unlisted(checkpoint)}  # those without operator metadata
    return sorted({**unnamed, **found}.values(), key=lambda op: op.operator_id)


def unlisted(checkpoint: Path | str) -> list[OperatorState]:
    """The operators of a checkpoint without operator metadata, from its state directories: each
    `state/<id>/`, its partitions `<p>/`, their stores (a stream-stream join's four directories; none,
    `default`; `SSTs/` is RocksDB's files, not a store) and the committed batches, its kind unknown."""
    committed = [int(p.name) for p in (Path(checkpoint) / "commits").glob("*") if p.name.isdigit()]
    low, high = (min(committed), max(committed)) if committed else (0, -1)  # none: no batch's state kept
    found = []
    for directory in _numbered(Path(checkpoint) / "state"):
        partitions = _numbered(directory)
        stores = {s.name for p in partitions for s in p.iterdir() if s.is_dir() and s.name not in NOT_STORES}
        found.append(
            OperatorState(
                int(directory.name),
                None,
                tuple(sorted(stores)) or (DEFAULT_STORE,),
                len(partitions),
                low,
                high,
            )
        )
    return found


def _numbered(directory: Path) -> list[Path]:
    found = [p for p in directory.iterdir() if p.name.isdigit() and p.is_dir()] if directory.is_dir() else []
    return sorted(found, key=lambda p: int(p.name))


def state_rows(
    spark: Any,
    checkpoint: Path | str,
    batch_id: int,
    operator_id: int = 0,
    store_name: str = DEFAULT_STORE,
) -> DataFrame:
    """The rows of one operator's store after batch `batch_id`: `key`, `value`, `partition_id` (lazy:
    read them through `read_or_raise` to get `StateUnreadable` for a file Spark cannot load)."""
    return (
        spark.read.format("statestore")
        .option("batchId", batch_id)
        .option("operatorId", operator_id)
        .option("storeName", store_name)
        .load(str(checkpoint))
        .select("key", "value", "partition_id")
    )


def window_end_ms(rows: DataFrame) -> Column | None:
    """The end of the event-time window in each row's key (a window aggregation's), or else in its value (a
    session window's: its key is the group and the session's start), in epoch milliseconds; None when
    neither holds a window (a `struct<start: timestamp, end: timestamp>`, as `window()` and
    `session_window()` make).

    >>> from pyspark.sql import types as T
    >>> window = T.StructType([T.StructField(n, T.TimestampType()) for n in ("start", "end")])
    >>> _window_field(T.StructType([T.StructField("window", window), T.StructField("k", T.LongType())]))
    'window'
    """
    for column in ("key", "value"):
        struct = rows.schema[column].dataType
        name = _window_field(struct) if isinstance(struct, T.StructType) else None
        if name is not None:
            return F.unix_millis(F.col(column).getField(name).getField("end"))
    return None


def _window_field(key: T.StructType) -> str | None:
    for field in key.fields:
        inner = field.dataType
        if isinstance(inner, T.StructType) and all(
            n in inner.fieldNames() and isinstance(inner[n].dataType, T.TimestampType)
            for n in ("start", "end")
        ):
            return field.name
    return None


def read_or_raise(checkpoint: Path | str, read: Callable[[], Result]) -> Result:
    """`read()`, with Spark's failure to load a state store raised as `StateUnreadable` (naming the file
    when Spark's message does); any other failure propagates."""
    try:
        return read()
    except Exception as exc:
        text = str(exc)
        if CANNOT_LOAD not in text and "STDS_" not in text:
            raise
        named = _FILE.search(text)
        first = next((line for line in text.splitlines() if CANNOT_LOAD in line or "STDS_" in line), text)
        raise StateUnreadable(
            checkpoint, named.group(1).removeprefix("file:") if named else None, first.strip()[:300]
        ) from exc


def together(frames: Sequence[DataFrame]) -> DataFrame:
    """`frames` unioned (their columns matched by name) into at most `READ_TASKS` partitions."""
    return functools.reduce(DataFrame.unionByName, frames).coalesce(READ_TASKS)


def read_together(checkpoint: Path | str, frames: Sequence[DataFrame]) -> list[Row]:
    """The rows of `frames` (`together`), read in one Spark job, through `read_or_raise` (`checkpoint` names
    where a store Spark cannot load was read)."""
    return read_or_raise(checkpoint, together(frames).collect)


@attrs.frozen
class StateSummary:
    """One store's rows after one batch: how many, and the oldest event-time bound among them (`bound_ms`, in
    epoch ms; None when the rows hold none)."""

    batch: int
    rows: int
    oldest_bound_ms: int | None


def summaries(
    spark: Any,
    checkpoint: Path | str,
    batches: list[int],
    operator_id: int = 0,
    store_name: str = DEFAULT_STORE,
) -> list[StateSummary]:
    """Per batch of `batches`, its store's row count and oldest event-time bound: one Spark job, one row a batch.

    A batch whose store is empty has no row in the job's result: it is reported with 0 rows.
    """
    if not batches:
        return []
    frames = [
        state_rows(spark, checkpoint, b, operator_id, store_name).withColumn("batch", F.lit(b))
        for b in batches
    ]
    rows = together(frames)
    counted = rows.groupBy("batch").agg(
        F.count(F.lit(1)).alias("rows"), F.min(bound_ms(rows)).alias("oldest")
    )
    found = {r["batch"]: r for r in read_or_raise(checkpoint, counted.collect)}
    return [
        StateSummary(b, found[b]["rows"], found[b]["oldest"]) if b in found else StateSummary(b, 0, None)
        for b in batches
    ]


def bound_ms(rows: DataFrame) -> Column:
    """When each state row may be evicted, in epoch milliseconds: its window's end (`window_end_ms`: a session's too), a
    `dropDuplicatesWithinWatermark` entry's `value.expiresAtMicros`, or the key's watermarked column (a
    deduplication on the event-time column: the key field whose metadata carries Spark's
    `spark.watermarkDelayMs`, as `EventTimeWatermark` marks it); null when the row holds none of them (a key
    without event time, which nothing evicts). The one reader of state bounds: the stateful suite's
    (`state_bounds`) and `validate-checkpoint --state`'s (`summaries`)."""
    end = window_end_ms(rows)
    if end is not None:
        return end
    key, value = rows.schema["key"].dataType, rows.schema["value"].dataType
    if isinstance(value, T.StructType) and EXPIRES in value.fieldNames():
        return F.floor(F.col("value").getField(EXPIRES) / 1000).cast("long")
    watermarked = _watermarked_field(key) if isinstance(key, T.StructType) else None
    if watermarked is not None:
        return F.unix_millis(F.col("key").getField(watermarked))
    return F.lit(None).cast("long")


def _watermarked_field(key: T.StructType) -> str | None:
    """The key's field that carries a watermark's delay in its metadata (a deduplication's event time).

    >>> field = T.StructField("ts", T.TimestampType(), metadata={WATERMARK_DELAY: 5000})
    >>> _watermarked_field(T.StructType([T.StructField("k", T.StringType()), field]))
    'ts'
    """
    return next((f.name for f in key.fields if WATERMARK_DELAY in (f.metadata or {})), None)
