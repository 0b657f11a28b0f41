"""User processors whose timers fire by the batch clock (`timeMode` `ProcessingTime`), under the stateful suite.

`QuietCounts` counts a key's records in a `ValueState` with a TTL of an hour (TTL needs processing time) and,
on a key's first record, registers a processing-time timer a millisecond past the batch's timestamp T(N),
kept in a second `ValueState`: it fires in the next batch (Spark runs a batch on every start for such a
processor, data or none), which emits `(key, due, count)` and clears both. `due` is T(N) + 1 ms: a row that
equals the run without a crash only when that run ran batch N at the trial's own T(N).

Its twin `quiet_counts_in_memory` keeps the count in a module-level dict (`processor_counts_in_memory`'s): a
restart's new Python worker has lost it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.streaming.stateful_processor import StatefulProcessorHandle, TimerValues

from frontier_harness.streaming_job_example.processor_counts import OUTPUT, Counts, ProcessorCounts
from frontier_harness.streaming_job_example.processor_counts_in_memory import CountsInMemory

HOUR_MS = 3_600_000


class QuietCounts(Counts):
    """A key's records counted in Spark's state (with a TTL), emitted by a timer at T(N) + 1 ms."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.count = handle.getValueState("count", "count long", HOUR_MS)
        self.due = handle.getValueState("due", "due long")

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        seen = sum(len(f) for f in rows)
        if not self.due.exists():
            due = timerValues.getCurrentProcessingTimeInMs() + 1
            self.handle.registerTimer(due)
            self.due.update((due,))
        self.add(key[0], seen)
        return iter(())


class QuietCountsInMemory(CountsInMemory, QuietCounts):
    """`QuietCounts` with the count in the example twin's module-level dict: lost with the process that held it."""


class ProcessingTimeCounts(ProcessorCounts):
    """Counts per key emitted by a processing-time timer, each batch's rows in a directory of their own."""

    processor = QuietCounts

    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("key").transformWithStateInPandas(
            self.processor(), OUTPUT, "Append", "ProcessingTime"
        )


class ProcessingTimeCountsInMemory(ProcessingTimeCounts):
    processor = QuietCountsInMemory


def quiet_counts(directory: str) -> ProcessingTimeCounts:
    return ProcessingTimeCounts(directory)


def quiet_counts_in_memory(directory: str) -> ProcessingTimeCountsInMemory:
    return ProcessingTimeCountsInMemory(directory)
