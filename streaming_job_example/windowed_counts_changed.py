"""Two changes to the running `windowed_counts` job, for `frontier-harness upgrade` and `check --suite upgrade`:

    frontier-harness upgrade --from frontier_harness.streaming_job_example.windowed_counts:factory \\
        --to frontier_harness.streaming_job_example.windowed_counts_changed:refactored
    frontier-harness check --suite upgrade --job frontier_harness.streaming_job_example.windowed_counts:factory \\
        --upgrade-to frontier_harness.streaming_job_example.windowed_counts_changed:summed

- `refactored`: the same logic written otherwise (the window as a SQL expression, the columns in another
  order): safe, the new job continues the old one's results exactly;
- `summed`: each window's `count` becomes the sum of its records' offsets, a long like the count: Spark
  restarts without an error, and each window in state at the switch adds the new sums to the old count.

Both keep the writer and the reader of `windowed_counts` (an upsert by key and window), so the rows already
written stay readable.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness import StatefulJob, StatefulJobFactory
from frontier_harness.streaming_job_example.windowed_counts import WindowedCounts


class Refactored(WindowedCounts):
    """`windowed_counts` written otherwise: the window as SQL, `count(1)` spelled out, the columns reordered."""

    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5000 milliseconds")
        counted = watermarked.groupBy("key", F.expr("window(event_time, '10 seconds')"))
        return counted.agg(F.count(F.lit(1)).alias("count")).select("count", "window", "key")


class Summed(WindowedCounts):
    """`windowed_counts` summing each window's offsets in place of counting its records."""

    def transform(self, records: DataFrame) -> DataFrame:
        counted = records.withWatermark("event_time", "5 seconds").groupBy(
            "key", F.window("event_time", "10 seconds")
        )
        return counted.agg(F.sum("offset").alias("count"))


def refactored(directory: str) -> StatefulJob:
    """The same job, written otherwise."""
    return Refactored(directory)


def summed(directory: str) -> StatefulJob:
    """The job with another aggregate over a buffer of the same type."""
    return Summed(directory)


_checked: tuple[StatefulJobFactory, ...] = (refactored, summed)  # mypy: the factories satisfy the protocol
