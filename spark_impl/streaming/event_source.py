"""The streaming source of the `stateful` suite: the upstream log's records with a key and an event time.

`EventSource` (format name `frontier_upstream_events`, option `path`: an `UpstreamLog`
directory) is `frontier_harness.spark_impl.streaming.source.UpstreamSource` with
richer records: each record in the log is `[key, event_time_ms, data]`, read as the row
`(key, event_time, data, partition, offset)`, `event_time` a timestamp with millisecond
precision. Offsets, crash points, `commit(end)` and compaction are the upstream source's.

A stream-stream join's trial reads the log twice, once per side (option `side`: `left` or `right`): its
records are `[key, event_time_ms, data, side]` and each side's reader reads its own side's (two sources
of the query, each with its offsets in `offsets/N`, tagged with their side); the left side's reader commits
upstream, the right side's journals nothing (one `commit(end)` a batch, as for one source).

>>> instant(1_500).isoformat()
'1970-01-01T00:00:01.500000+00:00'
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import cast

from frontier_harness.spark_impl.streaming.source import (
    LogRange,
    UpstreamSource,
    UpstreamStreamReader,
)

NAME = "frontier_upstream_events"
SCHEMA = "key string, event_time timestamp, data string, partition int, offset long"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def instant(ms: int) -> datetime:
    """Epoch milliseconds as an aware UTC datetime (Spark stores it as that instant, whatever the zone)."""
    return EPOCH + timedelta(milliseconds=ms)


SIDE, LEFT, RIGHT = "side", "left", "right"


class EventStreamReader(UpstreamStreamReader):
    """The upstream reader, each record unpacked into its key, event time and data; with a `side`, that
    side's records only."""

    def __init__(self, path: str, side: str | None = None):
        super().__init__(path)
        self.side = side

    def initialOffset(self) -> dict:
        return self._tagged(super().initialOffset())

    def latestOffset(self, start: dict, limit) -> dict:
        return self._tagged(super().latestOffset(start, limit))

    def _tagged(self, offset: dict) -> dict:
        return offset if self.side is None else {**offset, SIDE: self.side}

    def read(self, partition: LogRange) -> Iterator[tuple]:  # type: ignore[override]  # Spark passes back partitions()'s LogRanges
        for record, p, offset in self.log.read(partition.partition, partition.lo, partition.hi):
            key, ms, data, *side = cast(list, record)  # `[key, event_time_ms, data]`, a join's with its side
            if self.side is None or side == [self.side]:
                yield key, instant(ms), data, p, offset

    def commit(self, end: dict) -> None:
        if self.side != RIGHT:
            super().commit(end)


class EventSource(UpstreamSource):
    """`spark.readStream.format("frontier_upstream_events").option("path", DIR)`: keyed, timed records."""

    format_name, row_schema, stream_reader = NAME, SCHEMA, EventStreamReader

    def streamReader(self, schema) -> EventStreamReader:
        return self.stream_reader(self.options["path"], self.options.get(SIDE))
