"""Segment files: Parquet files that hold SSTs, every row tagged with its store and SST name.

A flush writes its SST into a new segment file from the driver (its rows are the
memtable, already there); many stores' flushes may share one file. A compaction
job writes its outputs (many stores' at once) into a new segment written by
Spark. Reads and compactions select an SST's rows by `(store, sst)`, so a batch
of histories keeps a few dozen files, not one per SST, and Spark opens each once.
Obsolete SSTs stay in their segments (a snapshot taken before may still read them).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from frontier_harness.spark_impl.session import spark
from frontier_harness.spark_impl.ttl.manifest import SstInfo
from frontier_harness.spark_impl.ttl.row import NEVER, ROW_COLUMNS, ROW_SCHEMA, RowTuple

SEGMENT_SCHEMA = pa.schema([("store", pa.int64()), ("sst", pa.string())] + list(ROW_SCHEMA))


@attrs.frozen
class SstRows:
    """One SST to write: its store, name, creation time and rows (distinct keys)."""

    store: int
    name: str
    created: int
    rows: tuple[RowTuple, ...]

    def info(self, path: Path) -> SstInfo:
        """Its metadata once written to `path`."""
        stamps = [r[4] for r in self.rows]
        has_ttl = any(r[5] != NEVER for r in self.rows)
        return SstInfo(self.name, str(path), self.created, min(stamps), max(stamps), has_ttl, len(self.rows))


class Segments:
    """A directory of segment files (`segment-<n>`: a Parquet file, or a directory Spark wrote)."""

    def __init__(self, directory: Path, sync: bool = True) -> None:
        self.directory, self.sync = directory, sync
        directory.mkdir(parents=True, exist_ok=True)

    def new_path(self) -> Path:
        """A segment path not used yet."""
        taken = [int(p.name.split("-")[1]) for p in self.directory.glob("segment-*")]
        return self.directory / f"segment-{max(taken, default=-1) + 1:06d}"

    def write(self, ssts: Sequence[SstRows]) -> list[SstInfo]:
        """Writes `ssts` into one new segment file (and fsyncs it); their metadata, in order."""
        path = self.new_path()
        columns: dict[str, list] = {name: [] for name in SEGMENT_SCHEMA.names}
        for sst in ssts:
            for row in sorted(sst.rows, key=lambda r: r[0]):
                for name, value in zip(SEGMENT_SCHEMA.names, (sst.store, sst.name) + row):
                    columns[name].append(value)
        pq.write_table(pa.table(columns, schema=SEGMENT_SCHEMA), path)
        if self.sync:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return [sst.info(path) for sst in ssts]


def read_segments(paths: Sequence[str]) -> DataFrame:
    """Every row of the segments `paths`: `store`, `sst` and the row columns."""
    return (
        spark()
        .read.schema(from_arrow_schema(SEGMENT_SCHEMA))
        .parquet(*paths)
        .select("store", "sst", *ROW_COLUMNS)
    )
