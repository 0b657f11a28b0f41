"""Fixed cost of one Spark job: each Spark suite's observer called on one tiny history.

Per suite (its first property, on its first domain): the history of median
length among `CANDIDATES` drawn by the suite's own generator from seeded
`RandomSource`s (the shortest may hold nothing to compute, e.g. no query); the suite's observer is called once untimed (the session and the
suite's plans warm up), then `CALLS` times; the figure is the median wall-clock
time of a call. Analysis, planning, the job's scheduling and the round trip to
the driver dominate a call this small, so the figure is what every Spark job of
the suite pays however few histories it checks. `spark_job_overhead_s` is the
median over suites. Streaming is left out: its trials run real queries, seconds
each (`bench --only streaming`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from frontier_harness.properties.bench import Figure
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.source import RandomSource

CALLS = 20
CANDIDATES = 10
SUITES = (
    "collections",
    "mutable_antichain",
    "expiration",
    "prove",
    "resumption",
    "temporal",
    "timelines",
    "reclock",
    "summary",
    "ttl",
    "ttl_compaction",
)
GOAL = "<= half the figure before per-session expressions and no call sites (0.63 s side by side, 2 cores)"


def figures(scale: float) -> list[Figure]:
    """Per suite and over suites; `scale` does not apply (one tiny history is already the smallest job)."""
    per_suite = suite_overheads(SUITES, CALLS)
    out = [
        Figure(f"spark_job_overhead_s.{name}", seconds, "s", f"median of {CALLS} observer calls, one history")
        for name, seconds in per_suite.items()
    ]
    median = statistics.median(per_suite.values())
    note = f"median over {len(per_suite)} suites of each one's median observer call on one tiny history"
    return [*out, Figure("spark_job_overhead_s", median, "s", note, goal=GOAL)]


def suite_overheads(names: tuple[str, ...], calls: int) -> dict[str, float]:
    """Each named suite's median observer call on its tiny history, in seconds."""
    from frontier_harness.properties.adapters.spark import SparkImplementation

    spark = SparkImplementation()
    spark.prepare()
    return {name: median_call(_observer_call(spark, name), calls) for name in names}


def tiny_history(suite_name: str) -> History:
    """The history of median length among the suite's first property's draws from seeds `0..CANDIDATES-1`."""
    from frontier_harness.properties.checks.registry import get_suite

    suite = get_suite(suite_name)
    prop, domain = suite.properties[0], suite.domains[0]
    drawn = [prop.draw(RandomSource(seed), domain) for seed in range(CANDIDATES)]
    return sorted(drawn, key=lambda h: len(h.actions))[len(drawn) // 2]


def median_call(call: Callable[[], object], calls: int) -> float:
    """The median wall-clock seconds of `calls` calls, after one untimed call."""
    call()
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def _observer_call(spark, suite_name: str) -> Callable[[], object]:
    from frontier_harness.properties.checks.registry import get_suite

    history = tiny_history(suite_name)
    observe = getattr(spark, get_suite(suite_name).calls[0])
    return lambda: observe(history.time_domain, [history])
