"""The streaming source of the `stateful` suite: the upstream log's records with a key and an event time.

`EventSource` (format name `frontier_upstream_events`, option `path`: an `UpstreamLog`
directory) is `frontier_harness.spark_impl.streaming.source.UpstreamSource` with
richer records: each record in the log is `[key, event_time_ms, data]`, read as the row
`(key, event_time, data, partition, offset)`, `event_time` a timestamp with millisecond
precision. Offsets, crash points, `commit(end)` and compaction are the upstream source's.

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


class EventStreamReader(UpstreamStreamReader):
    """The upstream reader, each record unpacked into its key, event time and data."""

    def read(self, partition: LogRange) -> Iterator[tuple]:  # type: ignore[override]  # Spark passes back partitions()'s LogRanges
        for record, p, offset in self.log.read(partition.partition, partition.lo, partition.hi):
            key, ms, data = cast(list, record)  # the log holds `[key, event_time_ms, data]`
            yield key, instant(ms), data, p, offset


class EventSource(UpstreamSource):
    """`spark.readStream.format("frontier_upstream_events").option("path", DIR)`: keyed, timed records."""

    format_name, row_schema, stream_reader = NAME, SCHEMA, EventStreamReader
