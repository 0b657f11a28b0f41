"""Reads of many snapshots in one Spark job, and the audits of what their SSTs keep.

A snapshot is what one store shows at one clock reading: its SSTs (L0 and sorted
runs) and its memtable rows. Every SST row is joined to the snapshots that list
its SST; with the memtable rows beside them, the newest version per snapshot and
key is visible iff it is a value not expired at the snapshot's now.

The audits look at SST rows alone, whatever a read would show:
- `KEPT`: values in sorted runs expired at their run's creation (the
  compaction's now): the compaction filter should have made them tombstones;
- `LEFT` (snapshots taken right after a periodic compaction, with its interval):
  values expired at now in SSTs created more than the interval before now:
  periodic compaction should have taken and filtered them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.ttl import StoreLabel
from frontier_harness.spark_impl.arrow import to_frame
from frontier_harness.spark_impl.ttl.compaction import NO_BROADCAST, newest_per_key
from frontier_harness.spark_impl.ttl.manifest import SstInfo
from frontier_harness.spark_impl.ttl.row import (
    ROW_COLUMNS,
    ROW_SCHEMA,
    RowTuple,
    is_expired,
    is_tombstone,
    visible,
)
from frontier_harness.spark_impl.ttl.segments import read_segments

KEPT, LEFT = StoreLabel.KEPT, StoreLabel.LEFT


@attrs.frozen
class Snapshot:
    """One store's SSTs and memtable at the clock reading `now`; `interval` only right after a
    periodic compaction (for the `LEFT` audit)."""

    store: int
    now: int
    l0: tuple[SstInfo, ...]
    runs: tuple[SstInfo, ...]
    memtable: tuple[RowTuple, ...] = ()
    interval: int | None = None


LISTING = pa.schema(
    [
        ("tag", pa.int64()),
        ("store", pa.int64()),
        ("sst", pa.string()),
        ("now", pa.int64()),
        ("created", pa.int64()),
        ("is_run", pa.bool_()),
        ("due", pa.bool_()),
    ]
)


def _sst_rows(snapshots: Sequence[Snapshot]) -> DataFrame | None:
    """Every SST row, once per snapshot (`tag`: its index) listing its SST; None if none lists any."""
    listing: dict[str, list] = {name: [] for name in LISTING.names}
    for tag, snap in enumerate(snapshots):
        for sst in snap.l0 + snap.runs:
            due = snap.interval is not None and snap.now - sst.creation_timestamp > snap.interval
            is_run = sst in snap.runs
            for name, value in zip(
                LISTING.names, (tag, snap.store, sst.name, snap.now, sst.creation_timestamp, is_run, due)
            ):
                listing[name].append(value)
    paths = sorted({sst.path for snap in snapshots for sst in snap.l0 + snap.runs})
    if not paths:
        return None
    listed = to_frame(pa.table(listing, schema=LISTING)).hint(NO_BROADCAST)
    return read_segments(paths).join(listed, ["store", "sst"])


def _memtable_rows(snapshots: Sequence[Snapshot]) -> DataFrame:
    schema = pa.schema([("tag", pa.int64()), ("now", pa.int64())] + list(ROW_SCHEMA))
    columns: dict[str, list] = {name: [] for name in schema.names}
    for tag, snap in enumerate(snapshots):
        for row in snap.memtable:
            for name, value in zip(schema.names, (tag, snap.now) + row):
                columns[name].append(value)
    return to_frame(pa.table(columns, schema=schema))


def visible_rows(snapshots: Sequence[Snapshot]) -> DataFrame:
    """`(tag, key, value)`: every snapshot's visible keys (`tag`: the snapshot's index)."""
    versions = _memtable_rows(snapshots)
    ssts = _sst_rows(snapshots)
    if ssts is not None:
        versions = versions.unionByName(ssts.select("tag", "now", *ROW_COLUMNS))
    newest = newest_per_key(versions, ("tag",))
    return newest.where(visible(F.col("flags"), F.col("expire_ts"), F.col("now"))).select(
        "tag", "key", "value"
    )


def audit_rows(snapshots: Sequence[Snapshot]) -> DataFrame | None:
    """`(tag, label, key)`: the audits' findings, distinct; None when no snapshot lists an SST."""
    ssts = _sst_rows(snapshots)
    if ssts is None:
        return None
    value = ~is_tombstone(F.col("flags"))
    kept = ssts.where(F.col("is_run") & value & is_expired(F.col("expire_ts"), F.col("created")))
    left = ssts.where(F.col("due") & value & is_expired(F.col("expire_ts"), F.col("now")))
    return (
        kept.select("tag", F.lit(KEPT.value).alias("label"), "key")
        .unionByName(left.select("tag", F.lit(LEFT.value).alias("label"), "key"))
        .distinct()
    )
