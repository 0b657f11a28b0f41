"""Compaction on Spark: the rules as DataFrame operations, and many stores' compactions in one job.

Newest version per key (a window by `seq`), the TTL filter (values expired at
the compaction's `now` become tombstones that keep `seq` and `create_ts`, expiry
cleared; never dropped, or an older version in a lower run would show again),
tombstones dropped only where the output is the last run. `compact_frame`
works on any grouping (a store's output, a history's step), so one job compacts
a whole batch; its statistics come back with the write (an `Observation`), not
from a second job.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pyarrow as pa
from pyspark.sql import Column, DataFrame, Observation, Window
from pyspark.sql import functions as F

from frontier_harness.spark_impl.arrow import to_frame
from frontier_harness.spark_impl.ttl.manifest import SstInfo
from frontier_harness.spark_impl.ttl.row import NEVER, ROW_COLUMNS, TOMBSTONE, is_expired, is_tombstone
from frontier_harness.spark_impl.ttl.segments import Segments, read_segments

# Joins with the driver's small tables are hinted so: a broadcast would cost a Spark job of its own.
NO_BROADCAST = "shuffle_hash"


def expired_for_compaction(flags: Column, expire_ts: Column, now: Column) -> Column:
    """The compaction filter acts on values expired at the compaction's now."""
    return ~is_tombstone(flags) & is_expired(expire_ts, now)


def newest_per_key(rows: DataFrame, keys: Sequence[str]) -> DataFrame:
    """The largest-`seq` version of every key within each `keys` group."""
    order = Window.partitionBy(*keys, "key").orderBy(F.col("seq").desc())
    return rows.withColumn("_rank", F.row_number().over(order)).where(F.col("_rank") == 1).drop("_rank")


def ttl_filter(rows: DataFrame) -> DataFrame:
    """Values expired at the row's `now` become tombstones (seq and create_ts kept, expiry cleared)."""
    expired = expired_for_compaction(F.col("flags"), F.col("expire_ts"), F.col("now"))
    return (
        rows.withColumn("_expired", expired)
        .withColumn(
            "flags",
            F.when(F.col("_expired"), F.col("flags").bitwiseOR(F.lit(TOMBSTONE))).otherwise(F.col("flags")),
        )
        .withColumn("value", F.when(F.col("_expired"), F.lit(None).cast("binary")).otherwise(F.col("value")))
        .withColumn("expire_ts", F.when(F.col("_expired"), F.lit(NEVER)).otherwise(F.col("expire_ts")))
        .drop("_expired")
    )


def drop_tombstones(rows: DataFrame) -> DataFrame:
    """Tombstones are dropped only where the output is the last run (`last`)."""
    return rows.where(~(F.col("last") & is_tombstone(F.col("flags"))))


def compact_frame(rows: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Compaction of every `keys` group of `rows` (columns: the row's, `now`, `last`)."""
    return drop_tombstones(ttl_filter(newest_per_key(rows, keys)))


@attrs.frozen
class Compaction:
    """Compact the store's SSTs `inputs` at `now` into the SST `output`; `last`: it is the last run."""

    store: int
    inputs: tuple[SstInfo, ...]
    now: int
    last: bool
    output: str


def run_compactions(segments: Segments, compactions: Sequence[Compaction]) -> list[SstInfo | None]:
    """Every compaction in one Spark job writing one new segment; each output's metadata, None
    where nothing was left (no SST is made then)."""
    path = segments.new_path()
    stats = Observation("ttl compaction outputs")
    out = compact_frame(_inputs(compactions), ("store", "out")).withColumnRenamed("out", "sst")
    by_sst = Window.partitionBy("store", "sst")
    summary = F.struct(
        "store",
        "sst",
        F.count(F.lit(1)).over(by_sst).alias("rows"),
        F.min("create_ts").over(by_sst).alias("min_ts"),
        F.max("create_ts").over(by_sst).alias("max_ts"),
        F.max(F.col("expire_ts") != F.lit(NEVER)).over(by_sst).alias("has_ttl"),
    )
    out = out.withColumn("_summary", summary).observe(stats, F.collect_set("_summary").alias("outputs"))
    out = out.select("store", "sst", *ROW_COLUMNS).coalesce(1).sortWithinPartitions("store", "sst", "key")
    out.write.parquet(str(path))
    made = {(s["store"], s["sst"]): s for s in stats.get["outputs"]}
    return [_info(made.get((c.store, c.output)), c, path) for c in compactions]


def _inputs(compactions: Sequence[Compaction]) -> DataFrame:
    """The input rows of every compaction, with its output name, `now` and `last`."""
    picked: dict[str, list] = {"store": [], "sst": [], "out": [], "now": [], "last": []}
    for c in compactions:
        for sst in c.inputs:
            for name, value in zip(picked, (c.store, sst.name, c.output, c.now, c.last)):
                picked[name].append(value)
    schema = pa.schema(
        [
            ("store", pa.int64()),
            ("sst", pa.string()),
            ("out", pa.string()),
            ("now", pa.int64()),
            ("last", pa.bool_()),
        ]
    )
    paths = sorted({sst.path for c in compactions for sst in c.inputs})
    picks = to_frame(pa.table(picked, schema=schema)).hint(NO_BROADCAST)
    return read_segments(paths).join(picks, ["store", "sst"]).drop("sst")


def _info(summary: dict | None, compaction: Compaction, path: object) -> SstInfo | None:
    if summary is None:
        return None
    return SstInfo(
        compaction.output,
        str(path),
        compaction.now,
        summary["min_ts"],
        summary["max_ts"],
        bool(summary["has_ttl"]),
        summary["rows"],
    )
