"""Where a trial's wall time goes: spans recorded where the work happens (a driver started, a query
drained, what is durable read, an oracle's batch job), summed by name while `recording`.

A span is wall time of the harness's own thread (a trial's steps run one after another there, its
queries run in Spark meanwhile), so spans of different names never overlap and a recording's spans
sum to at most its wall time. Outside `recording`, `span` costs one clock read.

>>> with recording() as spans:
...     for _ in range(2):
...         with span(DRIVER_START):
...             pass
>>> spans.count(DRIVER_START), spans.seconds(DRIVER_START) >= 0, spans.count(READ)
(2, True, 0)
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import attrs

TRIALS = "trials"  # a whole `run_trials` call: everything below happens inside it, but the oracle
JVM_START = "jvm start"  # a killable driver with a JVM of its own: started, run to its kill point, killed
DRIVER_START = "driver start"  # a start of a query in a driver process attached to the harness's JVM
QUERY_START = "query start"  # a start of a query in the harness's own session (the floor, Spark Connect)
STOP = "query stop"  # a start of a query stopped (its driver process gone)
WAIT = "wait"  # the harness waits while the query processes what the step offered
READ = "read"  # what is durable read after a step: checkpoint, sink, the job's rows, the state store
ORACLE = "oracle job"  # the oracle's batch job over the records of committed batches


@attrs.define
class Spans:
    """Seconds and counts of the spans recorded, by name."""

    totals: dict[str, float] = attrs.field(factory=dict)
    counts: Counter[str] = attrs.field(factory=Counter)

    def add(self, name: str, seconds: float) -> None:
        self.totals[name] = self.totals.get(name, 0.0) + seconds
        self.counts[name] += 1

    def seconds(self, name: str) -> float:
        return self.totals.get(name, 0.0)

    def count(self, name: str) -> int:
        return self.counts[name]


_recording: list[Spans] = []  # the recordings open now (nested ones each get every span)
_lock = threading.Lock()


@contextmanager
def recording() -> Iterator[Spans]:
    """Within it, every span recorded (in any thread of this process) is added to the `Spans` it yields."""
    spans = Spans()
    with _lock:
        _recording.append(spans)
    try:
        yield spans
    finally:
        with _lock:
            _recording.remove(spans)


@contextmanager
def span(name: str) -> Iterator[None]:
    """The wall time of the block, recorded as `name` in each open recording."""
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - started
        with _lock:
            for spans in _recording:
                spans.add(name, seconds)
