"""A worked example of a stream-stream join under `frontier-harness check --suite stateful --job`.

    frontier-harness check --suite stateful --job frontier_harness.streaming_job_example.joined_clicks:factory

Impressions (the left input) joined with clicks (the right input) of the same `key` whose event time is at
most 10 seconds before the impression's: `click <= impression <= click + 10 s`, each side under a 5-second
watermark, so each side's state is evicted by the other side's watermark plus the range. `left_outer` is the
left-outer twin: an impression no click joins is written once, with nulls, when the watermark passes it.
`counted` counts the joined clicks per key and 10-second window of the impression's time, an aggregation
over the join: each window is written once the join's own output watermark passes its end, which lags the
query's watermark by the range (the meet of the join's state watermarks, `model/event_time/dag.py`).

The writer is the streaming example's idempotent one: batch `N` overwrites its own directory `batch_id=N/`, so
a batch Spark runs again after a crash replaces what its first run wrote; `read` is every row written (a join
emits each row once, in append mode; the `batch_id` column is dropped before comparing). `factory` and `left_outer` are typed with the protocol (`frontier_harness.StatefulJoinJob`),
which mypy checks.
"""

from __future__ import annotations

from typing import Literal

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness import StatefulJoinJob, StatefulJoinJobFactory
from frontier_harness.streaming_job_example import OverwriteEachBatch

WITHIN = "impression.key = click.key AND impression.event_time BETWEEN click.event_time AND click.event_time + interval 10 seconds"


class JoinedClicks(OverwriteEachBatch):
    """Each impression with the clicks that join it, written per batch, overwritten when a batch runs again
    (`OverwriteEachBatch`, the streaming example's writer: `read` is every batch's rows)."""

    output_mode: Literal["append", "update"] = "append"
    lateness: str | None = None
    how = "inner"

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        impressions = left.withWatermark("event_time", "5 seconds").alias("impression")
        clicks = right.withWatermark("event_time", "5 seconds").alias("click")
        return impressions.join(clicks, F.expr(WITHIN), self.how).select(
            F.col("impression.key").alias("key"),
            F.col("impression.data").alias("impression"),
            F.col("click.data").alias("click"),
            F.col("impression.event_time").alias("shown_at"),
            F.col("click.event_time").alias("clicked_at"),
        )


class LeftOuterClicks(JoinedClicks):
    """The left-outer twin: an impression no click joins, once, with nulls, when the watermark passes it."""

    how = "leftOuter"


class CountedClicks(JoinedClicks):
    """The joined clicks counted per key and 10-second window of the impression's time, in append mode: each
    window written once, when the join's output watermark passes its end."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        joined = super().transform(left, right)
        return joined.groupBy("key", F.window("shown_at", "10 seconds")).agg(F.count("*").alias("clicks"))


def factory(directory: str) -> StatefulJoinJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return JoinedClicks(directory)


def left_outer(directory: str) -> StatefulJoinJob:
    """The left-outer join of the same inputs."""
    return LeftOuterClicks(directory)


def counted(directory: str) -> StatefulJoinJob:
    """The joined clicks counted per key and window of the impression's time."""
    return CountedClicks(directory)


_checked: StatefulJoinJobFactory = factory  # mypy: the factories satisfy the protocol
_checked_outer: StatefulJoinJobFactory = left_outer
_checked_counted: StatefulJoinJobFactory = counted
