"""User processors whose timers fire by the batch clock (`timeMode` `ProcessingTime`), under the stateful suite.

`QuietCounts` counts a key's records in a `ValueState` with a TTL of an hour (TTL needs processing time) and,
on a key's first record, registers a processing-time timer a millisecond past the batch's timestamp T(N),
kept in a second `ValueState`: it fires in the next batch (Spark runs a batch on every start for such a
processor, data or none), which emits `(key, due, count)` and clears both. `due` is T(N) + 1 ms: a row that
equals the run without a crash only when that run ran batch N at the trial's own T(N).

Its twin `quiet_counts_in_memory` keeps the count in a module-level dict (`processor_counts_in_memory`'s): a
restart's new Python worker has lost it.

`idle_group_counts` is the same count as an `applyInPandasWithState` function with a processing-time timeout
(`count_until_idle`): each call with data sets the group's timeout a millisecond past T(N) and keeps that `due`
in its state beside the count; the group times out in the first later batch whose T is past it (a batch of
another key's records, under `once`), which emits `(key, due, count)`. Its twin `idle_group_counts_in_memory`
counts in the same module-level dict.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.streaming.stateful_processor import StatefulProcessorHandle, TimerValues

from frontier_harness.streaming_job_example.processor_counts import OUTPUT, Counts, ProcessorCounts
from frontier_harness.streaming_job_example.processor_counts_in_memory import COUNTS, CountsInMemory
from tests.jobs.stateful import GroupCounts, _timed_out

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


def count_until_idle(
    key: tuple,
    frames: Iterator[pd.DataFrame],
    state: GroupState,
    memory: MutableMapping[str, int] | None = None,
) -> Iterator[pd.DataFrame]:
    """A group's records counted in its state `(count, due)` (in `memory` instead, when given); each call with
    data sets its processing-time timeout a millisecond past the batch's T(N), `due`; when it times out,
    `(key, due, count)` is emitted and the state removed."""
    if state.hasTimedOut:
        row = _timed_out(key, state)
        if memory is not None:
            row["count"] = memory.pop(key[0], 0)
        yield row
        return
    seen = sum(len(f) for f in frames)
    if memory is not None:
        memory[key[0]] = memory.get(key[0], 0) + seen
    count = state.get[0] if state.exists else 0
    state.update((count + seen if memory is None else 0, state.getCurrentProcessingTimeMs() + 1))
    state.setTimeoutDuration(1)


class IdleGroupCounts(GroupCounts):
    """`quiet_counts` as an `applyInPandasWithState` function with a processing-time timeout."""

    function = staticmethod(count_until_idle)

    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("key").applyInPandasWithState(
            self.function,
            "key string, due long, count long",
            "count long, due long",
            "append",
            GroupStateTimeout.ProcessingTimeTimeout,
        )


def count_until_idle_in_memory(
    key: tuple, frames: Iterator[pd.DataFrame], state: GroupState
) -> Iterator[pd.DataFrame]:
    """`count_until_idle` counting in the example twin's module-level dict (this worker's, named by reference:
    a dict handed as an argument would be pickled with the function, a copy for every task)."""
    return count_until_idle(key, frames, state, COUNTS)


class IdleGroupCountsInMemory(IdleGroupCounts):
    function = staticmethod(count_until_idle_in_memory)


def idle_group_counts(directory: str) -> IdleGroupCounts:
    return IdleGroupCounts(directory)


def idle_group_counts_in_memory(directory: str) -> IdleGroupCountsInMemory:
    return IdleGroupCountsInMemory(directory)
