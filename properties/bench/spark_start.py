"""What a Spark start costs a run: a fresh process's session and first job, with the class archive and without.

Every CLI command, `replay`, SIGKILL trial and test subprocess starts a JVM, so the
time to a first job is paid again and again. Each figure is the median of `RUNS`
fresh processes (fewer at `--scale` below one), the two kinds in turns so that
neither always follows the other: import the session module, start the session,
count three rows. With the archive (`spark_impl/class_archive.py`, built first if
missing) against `FRONTIER_HARNESS_CLASS_ARCHIVE=off`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

from frontier_harness.properties.bench import Figure

RUNS = 3
START_AND_FIRST_JOB = (
    "import time; t = time.perf_counter(); from frontier_harness.spark_impl import session; "
    "session.spark().range(3).count(); print(time.perf_counter() - t)"
)


def figures(scale: float) -> list[Figure]:
    from frontier_harness.spark_impl import class_archive, class_archive_builder

    class_archive_builder.ensure()
    runs = max(1, round(RUNS * min(scale, 1.0)))
    mapped, off = [], []
    for _ in range(runs):
        mapped.append(start_seconds({}))
        off.append(start_seconds({class_archive.SWITCH: "off"}))
    note = f"median of {runs} fresh processes: session start and a first job"
    return [
        Figure("spark_start_s.no_archive", statistics.median(off), "s", note),
        Figure(
            "spark_start_s",
            statistics.median(mapped),
            "s",
            note + ", the class archive mapped",
            baseline="spark_start_s.no_archive",
            goal="< 1x",
        ),
    ]


def start_seconds(env: dict[str, str]) -> float:
    """Seconds from a fresh interpreter's import of the session module to its first job's answer."""
    done = subprocess.run(
        [sys.executable, "-c", START_AND_FIRST_JOB],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return float(done.stdout.split()[-1])
