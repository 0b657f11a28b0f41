"""A streaming query over Spark's `MemoryStream` (reached through py4j), fed one micro-batch at a time.

Each `feed` adds rows `(side, key, event_time_ms, data)` and waits until the query processed them: one batch
with data, then the batch without data Spark runs when an operator would evict with the moved watermark
(`processAllAvailable` returns only once no batch is due). A join reads its two inputs from the one stream
(`side` "L" or "R"), so both sides of a batch arrive in the same batch. No Python worker is involved: the
source lives in the JVM, the writer (`foreachBatch`) in the driver, and each batch's output is kept sorted,
its lists as tuples.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.event_time.stateful import Batch, Record

Row = tuple[str, str, int, str]  # side, key, event time (ms), data


def left(key: str, t: int, data: str) -> Row:
    return ("L", key, t, data)


def right(key: str, t: int, data: str) -> Row:
    return ("R", key, t, data)


def row(key: str, t: int, data: str) -> Row:
    return ("", key, t, data)


def journaled(checkpoint: Path, field: str) -> dict[int, int]:
    """`field` of the metadata each `offsets/N` of a checkpoint journaled, by batch."""
    files = (checkpoint / "offsets").iterdir()
    found = {int(f.name): json.loads(f.read_text().splitlines()[1]) for f in files if f.name.isdigit()}
    return {b: meta[field] for b, meta in sorted(found.items())}


def journaled_watermarks(checkpoint: Path) -> dict[int, int]:
    """E(N): `batchWatermarkMs` of each `offsets/N` of a checkpoint."""
    return journaled(checkpoint, "batchWatermarkMs")


def _hashable(value: Any) -> Any:
    """A row or list as tuples, all the way down (an aggregated list column becomes a tuple)."""
    return tuple(map(_hashable, value)) if isinstance(value, list | tuple) else value


class MemoryQuery:
    """`transform` over the stream's columns `side`, `key`, `event_time` (a timestamp) and `data`, written
    with `foreachBatch` in `mode`, a `processingTime` trigger, `conf` set for the query's start."""

    def __init__(
        self,
        session: Any,
        root: Path,
        transform: Callable[[DataFrame], DataFrame],
        mode: str = "append",
        conf: dict[str, str] | None = None,
    ):
        jvm = getattr(session, "_jvm", None)
        if jvm is None:  # the Spark Connect test mode (FRONTIER_HARNESS_TEST_REMOTE)
            pytest.skip("MemoryStream is reached through py4j: it needs a classic session, not Spark Connect")
        self.session, self.checkpoint = session, root / "checkpoint"
        self.fed: list[list[Row]] = []
        self.stream = jvm.org.apache.spark.sql.execution.streaming.runtime.MemoryStream.apply(
            jvm.org.apache.spark.sql.Encoders.STRING(), session._jsparkSession
        )
        fields = F.split("value", ",")
        self.rows = DataFrame(self.stream.toDF(), session).select(
            fields[0].alias("side"),
            fields[1].alias("key"),
            F.timestamp_millis(fields[2].cast("long")).alias("event_time"),
            fields[3].alias("data"),
        )
        self.transform, self.mode, self.conf = transform, mode, conf or {}
        self.written: dict[int, list[tuple]] = {}
        self.query: Any = None

    def start(self) -> MemoryQuery:
        def write(batch: DataFrame, batch_id: int) -> None:
            self.written[batch_id] = sorted(_hashable(r) for r in batch.collect())

        for key, value in self.conf.items():
            self.session.conf.set(key, value)
        try:
            out = self.transform(self.rows).writeStream.outputMode(self.mode).foreachBatch(write)
            out = out.option("checkpointLocation", str(self.checkpoint))
            self.query = out.trigger(processingTime="100 milliseconds").start()
        finally:
            for key in self.conf:
                self.session.conf.unset(key)
        return self

    def feed(self, *rows: Row) -> None:
        """Adds `rows` and waits until the query processed them (and any batch without data due after)."""
        self.offer(*rows)
        self.fed.append(list(rows))
        self.query.processAllAvailable()

    def offer(self, *rows: Row) -> None:
        """Adds `rows` to the stream, whether a query runs or not."""
        jvm = self.session._jvm
        lines = jvm.java.util.ArrayList()
        for side, key, t, data in rows:
            lines.add(f"{side},{key},{t},{data}")
        self.stream.addData(jvm.scala.jdk.javaapi.CollectionConverters.asScala(lines).toSeq())

    def stop(self) -> None:
        self.query.stop()

    def eviction(self) -> dict[int, int]:
        return journaled_watermarks(self.checkpoint)

    def batches(self, side: str = "") -> list[Batch]:
        """The query's batches as the model reads them (the rows of `side`): the i-th batch whose offsets
        moved holds the i-th feed; the batches in between had no data."""
        offsets = {
            b: (self.checkpoint / "offsets" / str(b)).read_text().splitlines()[2] for b in self.eviction()
        }
        with_data = [b for b in offsets if b == 0 or offsets[b] != offsets[b - 1]]
        assert len(with_data) == len(self.fed), f"expected one batch with data per feed: {offsets}"
        fed = dict(zip(with_data, self.fed))
        return [
            Batch(
                b, tuple(Record(k, t, d, 0, i) for i, (s, k, t, d) in enumerate(fed.get(b, ())) if s == side)
            )
            for b in offsets
        ]

    def emitted(self) -> set[tuple]:
        """Every row written, with the batch that wrote it last in its tuple."""
        return {(*r, b) for b, rows in self.written.items() for r in rows}

    def state(self, columns: str, **options: str) -> list[tuple]:
        """The rows of an operator's state after the last batch, through Spark's state data source."""
        reader = self.session.read.format("statestore")
        for key, value in options.items():
            reader = reader.option(key, value)
        return sorted(tuple(r) for r in reader.load(str(self.checkpoint)).selectExpr(columns).collect())
