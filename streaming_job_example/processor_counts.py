"""A worked example of a user's own processor under `frontier-harness check --suite stateful --job`.

    frontier-harness check --suite stateful --job frontier_harness.streaming_job_example.processor_counts:factory

`transformWithStateInPandas` in event-time mode, grouped by `key`: the processor counts a key's records in
a `ValueState` (`count`) and registers one event-time timer for the key at the end of the 10-second
window its first record falls in (kept in a second `ValueState`, `due`). When the watermark (a 5-second
delay) passes it, the timer fires: the processor emits `(key, due, count)` and clears both, so the key's
next record counts afresh. The writer overwrites its own directory `batch_id=N/` with the rows batch `N`
emitted (a batch Spark runs again after a crash replaces them); `read` is every row written, once: what a
crash must not change (`crash_invisible`).

Spark keeps both values in its RocksDB state store, in the checkpoint, so a restart (a new driver, a new
Python worker) reads them back. Its twin `processor_counts_in_memory` keeps the count in a Python dict.

>>> Counts.due_of(12_345)
20000
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from frontier_harness import StatefulJob, StatefulJobFactory
from frontier_harness.streaming_job_example import OverwriteEachBatch

WINDOW_MS = 10_000
OUTPUT = "key string, due long, count long"


class Counts(StatefulProcessor):
    """A key's records counted in Spark's state, emitted when the watermark passes their window's end."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.count = handle.getValueState("count", "count long")
        self.due = handle.getValueState("due", "due long")

    @staticmethod
    def due_of(event_time_ms: int) -> int:
        """The end of the 10-second window an event time falls in: when its key's timer fires."""
        return (event_time_ms // WINDOW_MS + 1) * WINDOW_MS

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        frames = list(rows)  # transformWithStateInPandas hands pandas frames
        seen = sum(len(f) for f in frames)
        if not self.due.exists():
            first = min(int(f["event_time"].min().value // 1_000_000) for f in frames)
            due = max(self.due_of(first), timerValues.getCurrentWatermarkInMs() + 1)
            self.handle.registerTimer(due)
            self.due.update((due,))
        self.add(key[0], seen)
        return iter(())

    def add(self, key: str, seen: int) -> None:
        """Adds `seen` records to the key's count."""
        self.count.update((self.counted(key) + seen,))

    def counted(self, key: str) -> int:
        """The key's count so far."""
        found = self.count.get()
        return 0 if found is None else int(found[0])

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        count = self.counted(key[0])
        self.forget(key[0])
        yield pd.DataFrame({"key": [key[0]], "due": [expiredTimerInfo.getExpiryTimeInMs()], "count": [count]})

    def forget(self, key: str) -> None:
        """Clears the key's count and its timer's due time: its next record counts afresh."""
        self.count.clear()
        self.due.clear()

    def close(self) -> None:
        """Nothing to release."""


class ProcessorCounts(OverwriteEachBatch):
    """Counts per key, emitted by an event-time timer; each batch's rows in a directory of their own (the
    streaming example's writer and reader: `OverwriteEachBatch`)."""

    output_mode: Literal["append", "update"] = "append"
    lateness: str | None = None
    processor: type[StatefulProcessor] = Counts

    def transform(self, records: DataFrame) -> DataFrame:
        return (
            records.withWatermark("event_time", "5 seconds")
            .groupBy("key")
            .transformWithStateInPandas(self.processor(), OUTPUT, "Append", "EventTime")
        )


def factory(directory: str) -> StatefulJob:
    """Called by the harness at every start of the trial's query, with the directory the job owns."""
    return ProcessorCounts(directory)


_checked: StatefulJobFactory = factory  # mypy: the factory satisfies the protocol
