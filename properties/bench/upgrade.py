"""The static half of `upgrade`: the time to a verdict for a pair of jobs, no data run.

`upgrade_verdict_s`: the median of `RUNS` fresh processes running `frontier-harness upgrade --from
windowed_counts --to windowed_counts_changed:summed` (the worked example of docs/upgrading.md), Spark's
start included, against the goal of 15 s a pair; `upgrade_verdict_s.warm`: the same pair's verdict in a
process whose Spark is up (both jobs planned, compared), the median of `RUNS` pairs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from frontier_harness.properties.bench import Figure

RUNS = 3
OLD = "frontier_harness.streaming_job_example.windowed_counts:factory"
NEW = "frontier_harness.streaming_job_example.windowed_counts_changed:summed"
COMMAND = [
    sys.executable,
    "-m",
    "frontier_harness.properties.cli.main",
    "upgrade",
    "--from",
    OLD,
    "--to",
    NEW,
]


def figures(scale: float) -> list[Figure]:
    runs = max(1, round(RUNS * min(scale, 1.0)))
    cold = [_fresh_process() for _ in range(runs)]
    warm = [_in_process() for _ in range(runs)]
    return [
        Figure(
            "upgrade_verdict_s",
            statistics.median(cold),
            "s",
            f"median of {runs} fresh processes: `upgrade --from windowed_counts --to ...:summed`, Spark's start included",
            goal="<= 15 s a pair",
        ),
        Figure(
            "upgrade_verdict_s.warm",
            statistics.median(warm),
            "s",
            f"median of {runs} verdicts of the same pair, Spark up: both jobs planned and compared",
        ),
    ]


def _fresh_process() -> float:
    started = time.perf_counter()
    done = subprocess.run(COMMAND, capture_output=True, text=True, timeout=600)
    if done.returncode != 1:  # count -> sum restarts and changes results: a failing verdict
        raise RuntimeError(f"upgrade exited {done.returncode}: {done.stdout[-500:]}")
    return time.perf_counter() - started


def _in_process() -> float:
    from frontier_harness.model.upgrade.compare import compare
    from frontier_harness.properties.adapters.upgrade import recorded_job

    recorded_job(OLD)  # Spark started, the source registered: what a warm process has
    started = time.perf_counter()
    compare(recorded_job(OLD), recorded_job(NEW))
    return time.perf_counter() - started
