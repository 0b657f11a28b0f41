"""A worked example of a user's processor chained with another stateful operator, under
`frontier-harness check --suite stateful --job`.

    frontier-harness check --suite stateful --job frontier_harness.streaming_job_example.processor_then_window:factory

The processor of `processor_counts` counts a key's records and emits `(key, due, count)` when the
watermark passes the end (`due`) of its first record's 10-second window; here it stamps each row with
`due` as a timestamp and names that column its output's event time (`eventTimeColumnName="due"`), so Spark
carries the watermark past it. A window aggregation downstream sums the counts of every key per 30-second
window of `due`, in append mode: Spark emits a window once the watermark passes its end.

Spark fails the query when the processor emits a row older than the watermark its input was filtered by
(`EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED`): `due` is never older, since a timer fires only once the
watermark reached it. Its twin `window_start_stamped` stamps the row with the window's start instead, which
the watermark has passed whenever it had already entered the window when the timer fired.

>>> Stamped.stamp(20_000)
20000
>>> WindowStartStamped.stamp(20_000)
10000
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from frontier_harness import StatefulJob, StatefulJobFactory
from frontier_harness.streaming_job_example.processor_counts import WINDOW_MS, Counts, ProcessorCounts

OUTPUT = "key string, due timestamp, count long"


class Stamped(Counts):
    """`Counts`, its rows stamped with an event time (`stamp` of the timer's expiry) for the operator after it."""

    @staticmethod
    def stamp(due_ms: int) -> int:
        """The event time of the row a timer due at `due_ms` emits: `due_ms` itself."""
        return due_ms

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        count = self.counted(key[0])
        self.forget(key[0])
        stamped = pd.Timestamp(self.stamp(expiredTimerInfo.getExpiryTimeInMs()), unit="ms")
        yield pd.DataFrame({"key": [key[0]], "due": [stamped], "count": [count]})


class WindowStartStamped(Stamped):
    """The mistake: a row stamped with the start of the window it counts, behind the watermark that fired it."""

    @staticmethod
    def stamp(due_ms: int) -> int:
        """The start of the 10-second window that ends at `due_ms`."""
        return due_ms - WINDOW_MS


class ProcessorThenWindow(ProcessorCounts):
    """`ProcessorCounts` with its rows stamped, summed per 30-second window of `due`."""

    processor = Stamped

    def transform(self, records: DataFrame) -> DataFrame:
        counts = (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key")
            .transformWithStateInPandas(
                self.processor(), OUTPUT, "Append", "EventTime", eventTimeColumnName="due"
            )
        )
        return counts.groupBy(F.window("due", "30 seconds")).agg(F.sum("count").alias("records"))


class WindowStartStampedJob(ProcessorThenWindow):
    processor = WindowStartStamped


def factory(directory: str) -> StatefulJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return ProcessorThenWindow(directory)


def window_start_stamped(directory: str) -> StatefulJob:
    """The twin whose processor stamps its rows behind the watermark (the module's docstring)."""
    return WindowStartStampedJob(directory)


_checked: StatefulJobFactory = factory  # mypy: the factory satisfies the protocol
