"""The run a CI job makes: `frontier-harness check --profile ci`, every suite, in a fresh process.

`check_ci_s` is its wall time, Spark's start included; `check_ci_cpu_s` the CPU
seconds of the process and everything it started (the second process, the JVMs,
Spark's Python workers), so their ratio is how many cores the run kept busy. Below
`--scale 1` each property screens that fraction of the profile's histories
(`--screening`); the exit code must be 0 (a failure is a bug, not a figure).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time

from frontier_harness.properties.bench import Figure
from frontier_harness.properties.engine.profiles import PROFILES


def figures(scale: float) -> list[Figure]:
    command = [sys.executable, "-m", "frontier_harness.properties.cli.main", "check", "--profile", "ci"]
    if scale < 1:
        command += ["--screening", str(max(100, int(PROFILES["ci"].batched_screening_histories * scale)))]
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([*command, "--out", out], cwd=out, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise AssertionError(f"check --profile ci exited {done.returncode}:\n{done.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    what = " ".join(command[3:])
    return [
        Figure("check_ci_s", wall, "s", f"`{what}`, wall time, exit 0"),
        Figure(
            "check_ci_cpu_s",
            cpu,
            "s",
            "its CPU time, every process it started included: the ratio is the cores it kept busy",
            baseline="check_ci_s",
        ),
    ]
