"""A user's own Structured Streaming job under the streaming trials: the protocol, and loading one.

`frontier-harness check --suite streaming --job MODULE:FACTORY` (also `verify --job`,
`replay --job`, and the pytest fixture's `check(..., job=...)`). Each trial gives the job one
directory it owns. `FACTORY(directory)` is called at every start and restart of the trial's
query, in the process that runs the query (a SIGKILLed driver too), with the same directory
(empty only at the first start), so a writer that keeps state in memory starts fresh after a
crash, as in production. It returns a `StreamingJob`:

- `transform(records)` (optional, `TransformingJob`): a row-wise DataFrame transformation
  (select, filter, withColumn) of the harness's records, columns `data` string, `partition`
  int, `offset` long; the records unchanged when absent;
- `write(batch, batch_id)`: the `foreachBatch` function; `batch` holds `transform`'s columns;
- `read(spark)`: the job's durable rows now, as a DataFrame with `transform`'s output columns
  (matched by name), optionally with a `batch_id` column the writer recorded (then compared
  too); before the first write, an empty DataFrame or None.

The history's `sink` choice does not apply under a job. The oracle is the same job run as a
batch without crashes (`frontier_harness.properties.checks.streaming.streaming_job`); the crash points apply to the job's
query (`after_sink` fires after `write` returns, before Spark commits the batch). A job the
trials cannot run is refused before any trial, in one line, exit 2
(`frontier_harness.properties.adapters.job.load_job`); an exception
inside `write` that is not an injected crash fails the job, with its traceback.

A stateful job (`check --suite stateful --job MODULE:FACTORY`) is a `StatefulJob`: the same
`write` and `read`, a `transform` over keyed, timed records (`key` string, `event_time` timestamp,
`data`, `partition`, `offset`) that may use `withWatermark`, a tumbling or sliding `window`
aggregation, `dropDuplicates` or `dropDuplicatesWithinWatermark` (one stateful operator), its
`output_mode` (`"append"`, the default, or `"update"`) and the `lateness` it promises to keep (a Spark
interval; by default the delay of its only `withWatermark`). `read(spark)` returns the job's current
result: in update mode one row per group (the latest written), in append mode every row written; a
`batch_id` column is dropped before comparing. The oracle is `frontier_harness.properties.checks.event_time.stateful`.

A stream-stream join job (also `--suite stateful`) is a `StatefulJoinJob`: a `transform(left, right)`
over two inputs of keyed, timed records (the harness's two sources, each record on one side), each side
under its own `withWatermark`, joined on `key` and a time-range condition on `event_time` (inner, left or
right outer), its output keeping each side's `data` column (under any name), in append mode (an inner join also in update mode: the same rows).

`streaming_job_example/` holds a worked example of each, checked against these protocols by mypy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class StreamingJob(Protocol):
    """What `FACTORY(directory)` returns: a `foreachBatch` writer and a reader of what it made durable."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        """Makes `batch` (transform's output of batch `batch_id`) durable; Spark may call it again
        with the same `batch_id` after a crash before its commit."""

    def read(self, spark: SparkSession) -> DataFrame | None:
        """The rows durable now (transform's columns, optionally `batch_id`); None before any write."""


class TransformingJob(StreamingJob, Protocol):
    """A job with a row-wise transformation between the records and its writer."""

    def transform(self, records: DataFrame) -> DataFrame:
        """Row-wise: select, filter, withColumn over `data`, `partition`, `offset`."""


JobFactory = Callable[[str], StreamingJob]


class StatefulJob(StreamingJob, Protocol):
    """A job whose transform holds one stateful operator over event time (the stateful suite's)."""

    output_mode: Literal["append", "update"]
    lateness: str | None

    def transform(self, records: DataFrame) -> DataFrame:
        """`withWatermark`, then one window aggregation or deduplication over `key`, `event_time`, `data`,
        `partition`, `offset`; row-wise steps before or after it."""


StatefulJobFactory = Callable[[str], StatefulJob]


class StatefulJoinJob(StreamingJob, Protocol):
    """A job whose transform joins two streams (the stateful suite's, `transform` taking two inputs)."""

    output_mode: Literal["append", "update"]
    lateness: str | None

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        """Each input `withWatermark`ed, then joined on `key` and a range of `event_time` (inner, left or
        right outer), keeping each side's `data`; row-wise steps before or after it."""


StatefulJoinJobFactory = Callable[[str], StatefulJoinJob]
