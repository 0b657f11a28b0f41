"""The run a CI job makes: `frontier-harness check --profile ci`, every suite, in a fresh process.

`check_ci_s` is its wall time, Spark's start included. `check_ci_cpu_s` is the CPU
seconds the machine's cores were busy while it ran (`busy_cpu_s`, Linux's
`/proc/stat`): every process counts, the JVMs and the Postgres server included, which
outlive their parents or are never waited for. A machine otherwise quiet (the
calibration line's load) makes it the run's own. `check_ci_cpu_s.waited` is the
processes the run waited for (`getrusage`): it misses those, and says by how much.
Their ratio to the wall time is how many cores the run kept busy, and `check_ci_floor_s`,
the CPU seconds spread over every core, is the least wall time the same work allows:
its ratio to the wall time is how close the run came to it. Below `--scale 1` each property screens that
fraction of the profile's histories (`--screening`); the exit code must be 0 (a failure
is a bug, not a figure).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from frontier_harness.properties.bench import Figure
from frontier_harness.properties.engine.profiles import PROFILES

PROC_STAT = Path("/proc/stat")
# Of the `cpu` line's counters (user nice system idle iowait irq softirq steal), those of a core not busy.
IDLE_FIELDS = (3, 4)


def busy_cpu_s(stat: Path = PROC_STAT) -> float | None:
    """The CPU seconds every core of this machine has been busy since it booted (all of the `cpu` line's
    counters but idle and iowait, in clock ticks); None where there is no `/proc/stat`.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "stat").write_text(f"cpu  {os.sysconf('SC_CLK_TCK')} 0 0 500 100 0 0 0 0 0\\ncpu0 ...\\n")
    ...     busy_cpu_s(Path(d) / "stat")
    1.0
    """
    try:
        ticks = [int(field) for field in stat.read_text().splitlines()[0].split()[1:9]]
    except OSError:
        return None
    busy = sum(t for i, t in enumerate(ticks) if i not in IDLE_FIELDS)
    return busy / os.sysconf("SC_CLK_TCK")


def figures(scale: float) -> list[Figure]:
    command = [sys.executable, "-m", "frontier_harness.properties.cli.main", "check", "--profile", "ci"]
    if scale < 1:
        command += ["--screening", str(max(100, int(PROFILES["ci"].batched_screening_histories * scale)))]
    with tempfile.TemporaryDirectory() as out:
        before, busy_before = resource.getrusage(resource.RUSAGE_CHILDREN), busy_cpu_s()
        started = time.perf_counter()
        done = subprocess.run([*command, "--out", out], cwd=out, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after, busy_after = resource.getrusage(resource.RUSAGE_CHILDREN), busy_cpu_s()
    if done.returncode != 0:
        raise AssertionError(f"check --profile ci exited {done.returncode}:\n{done.stdout[-3000:]}")
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu = waited if busy_before is None or busy_after is None else busy_after - busy_before
    cores = os.cpu_count() or 1
    what = " ".join(command[3:])
    return [
        Figure("check_ci_s", wall, "s", f"`{what}`, wall time, exit 0"),
        Figure(
            "check_ci_cpu_s",
            cpu,
            "s",
            "the CPU time the machine's cores were busy while it ran, every process included: the ratio is "
            "the cores it kept busy",
            baseline="check_ci_s",
        ),
        Figure(
            "check_ci_cpu_s.waited",
            waited,
            "s",
            "the CPU time of the processes it waited for: the JVMs and servers it did not wait for are missing",
            baseline="check_ci_cpu_s",
        ),
        Figure(
            "check_ci_floor_s",
            cpu / cores,
            "s",
            f"its CPU time over {cores} cores: the least wall time its work allows",
            baseline="check_ci_s",
            goal=">= 0.80 (wall <= 1.25x the floor), and wall <= 5 min at the issue's calibration",
        ),
    ]
