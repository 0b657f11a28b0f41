"""The twin of `processor_counts` that counts in a Python dict (a module global) instead of Spark's state.

Its timers are Spark's, so it emits when the watermark passes a key's window, as its twin does; but the
count lives in the Python worker's memory. A restart is a new driver, and its Python workers are new: the
counts made before it are gone, and a key whose records straddle the restart is emitted with too small a
count. `crash_invisible` catches it: its output with a restart differs from its output without one.

    frontier-harness check --suite stateful --job frontier_harness.streaming_job_example.processor_counts_in_memory:factory
"""

from __future__ import annotations

from frontier_harness import StatefulJob
from frontier_harness.streaming_job_example.processor_counts import Counts, ProcessorCounts

COUNTS: dict[str, int] = {}  # key -> records counted: in this Python process only


class CountsInMemory(Counts):
    """`Counts` with the count in `COUNTS`: lost with the process that held it."""

    def add(self, key: str, seen: int) -> None:
        COUNTS[key] = COUNTS.get(key, 0) + seen

    def counted(self, key: str) -> int:
        return COUNTS.get(key, 0)

    def forget(self, key: str) -> None:
        COUNTS.pop(key, None)
        self.due.clear()


class ProcessorCountsInMemory(ProcessorCounts):
    processor = CountsInMemory


def factory(directory: str) -> StatefulJob:
    return ProcessorCountsInMemory(directory)
