"""How fast this machine is right now: the line that goes beside every wall time the project reports.

A fixed pure-Python workload (one core, median of 5), a JVM's start without a class
archive (`java -Xshare:off -version`, median of 3), the 1-minute load average taken
before them, and the core count: what `../shared/tools/calibrate` prints, in the same
words. Two figures measured apart compare only when their calibration lines are
close; otherwise scale by the python loop. `frontier-harness bench` measures it
first, prints it, records it in `--json` and heads each `--markdown` section with it.

>>> Calibration(0.412, 0.518, 1.5, 2).line()
'calibration: python-loop 0.412 s, jvm-start 0.518 s, load 1.50 on 2 cores'
>>> Calibration(0.412, None, 0.0, 2).line()
'calibration: python-loop 0.412 s, no java, load 0.00 on 2 cores'
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time

import attrs

LOOP_RUNS = 5
JVM_RUNS = 3


@attrs.frozen
class Calibration:
    """The machine's speed when a figure was measured (seconds, lower is faster; `jvm_start_s` None: no Java)."""

    python_loop_s: float
    jvm_start_s: float | None
    load: float
    cores: int

    def line(self) -> str:
        jvm = "no java" if self.jvm_start_s is None else f"jvm-start {self.jvm_start_s:.3f} s"
        return f"calibration: python-loop {self.python_loop_s:.3f} s, {jvm}, load {self.load:.2f} on {self.cores} cores"


def measure() -> Calibration:
    """This machine now: about five seconds."""
    load = os.getloadavg()[0]
    return Calibration(python_loop(), jvm_start(), load, os.cpu_count() or 1)


def python_loop() -> float:
    """Median seconds of `LOOP_RUNS` runs of a fixed workload: integer arithmetic, then a dict of strings."""
    return statistics.median(_seconds(_workload) for _ in range(LOOP_RUNS))


def jvm_start() -> float | None:
    """Median seconds of `JVM_RUNS` starts of `java -Xshare:off -version`; None without Java."""
    command = ["java", "-Xshare:off", "-version"]
    try:
        return statistics.median(
            _seconds(lambda: subprocess.run(command, capture_output=True, check=True, timeout=60))
            for _ in range(JVM_RUNS)
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _workload() -> int:
    acc = 0
    for i in range(2_000_000):
        acc = (acc * 31 + i) % 1_000_003
    table = {str(i): i for i in range(200_000)}
    return acc + len(table)


def _seconds(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started
