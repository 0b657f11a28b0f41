"""A partitioned streaming source for Spark, written with PySpark's Python data source API.

`UpstreamSource` (format name `frontier_upstream`, option `path`: an `UpstreamLog`
directory) reads the project's upstream log. Its offsets are the Partitioned
domain's frontier as JSON, `{"frontier": [[lo, hi, offset], ...]}` (see
`frontier_harness.spark_impl.streaming.upstream_log`):

- `initialOffset`: every partition at offset 0;
- `latestOffset`: the log's upper (one point per known partition, the unseen rest at 0);
- `partitions(start, end)`: one input partition per log partition with records in
  `[start, end)`; a partition first seen in `end` starts at offset 0;
- `read`: the records of one range, `CompactedRead` if the upstream deleted one;
- `commit(end)`: Spark has made everything before `end` durable; the source commits
  `end` upstream, which may then compact up to it.

Spark runs the reader's methods in a Python process of its own and `read` in its
Python workers, so the reader keeps no state between calls: everything lives in the
log directory. Crash points (`frontier_harness.spark_impl.streaming.faults`) fire in `latestOffset`
and `partitions` when the batch has new data.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from frontier_harness.model.vocabulary.streaming import CrashPoint, SourceOffsets
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.streaming.upstream_log import MINIMUM, UpstreamLog, offset_of

NAME = "frontier_upstream"
SCHEMA = "data string, partition int, offset long"


class LogRange(InputPartition):
    """Offsets `lo..hi-1` of one log partition."""

    def __init__(self, partition: int, lo: int, hi: int):
        self.partition, self.lo, self.hi = partition, lo, hi


def ranges(start: Sequence, end: Sequence) -> list[LogRange]:
    """The non-empty per-partition ranges between two offset frontiers (points of `end` only).

    >>> [(r.partition, r.lo, r.hi) for r in ranges([[0, 0, 2], [1, 9, 0]], [[0, 0, 3], [1, 1, 4], [2, 9, 0]])]
    [(0, 2, 3), (1, 0, 4)]
    """
    found = []
    for lo, hi, offset in end:
        if lo == hi and offset > offset_of(start, lo):
            found.append(LogRange(lo, offset_of(start, lo), offset))
    return found


class UpstreamStreamReader(DataSourceStreamReader):
    """The stream reader over one log directory (stateless: see the module docstring)."""

    def __init__(self, path: str):
        self.path = path

    @property
    def log(self) -> UpstreamLog:
        return UpstreamLog(self.path)

    def initialOffset(self) -> dict:
        return {SourceOffsets.FRONTIER: MINIMUM}

    def latestOffset(self, start: dict, limit) -> dict:
        upper = self.log.upper()
        if upper != start[SourceOffsets.FRONTIER]:
            faults.fire(self.path, CrashPoint.BEFORE_OFFSETS)
        return {SourceOffsets.FRONTIER: upper}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        found = ranges(start[SourceOffsets.FRONTIER], end[SourceOffsets.FRONTIER])
        if found:
            faults.fire(self.path, CrashPoint.AFTER_OFFSETS)
        return found

    def read(self, partition: LogRange) -> Iterator[tuple]:  # type: ignore[override]  # Spark passes back partitions()'s LogRanges
        yield from self.log.read(partition.partition, partition.lo, partition.hi)

    def commit(self, end: dict) -> None:
        self.log.commit(end[SourceOffsets.FRONTIER])


class UpstreamSource(DataSource):
    """`spark.readStream.format("frontier_upstream").option("path", DIR)`: the log at DIR as a stream
    (a subclass names another format, row schema and reader)."""

    format_name, row_schema, stream_reader = NAME, SCHEMA, UpstreamStreamReader

    @classmethod
    def name(cls) -> str:
        return cls.format_name

    def schema(self) -> str:
        return self.row_schema

    def streamReader(self, schema) -> DataSourceStreamReader:
        return self.stream_reader(self.options["path"])
