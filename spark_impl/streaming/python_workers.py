"""The Python workers one start of a trial's query ran, ended with it: a restart's workers are new.

A trial's driver process attaches to the harness's JVM (`driver`), and Spark's JVM keeps its Python workers:
one `pyspark.daemon` per Python executable and environment, forking workers that it reuses from task to task
(`spark.python.worker.reuse`). Measured on PySpark 4.3.0 (`tests/test_processor_suite.py`): a processor
that counts in a module-level dict kept its counts across a restart through a reused worker, where a real
restart (a new JVM) starts its workers afresh. So each start of a user's job's query names its workers (a
trial of the harness's own sink runs no user code in them, and keeps the JVM's shared daemon): the driver
process puts `MARK=<start id>` into the environment PySpark gives every Python function the job makes (its
`SparkContext.environment`), so the JVM starts a daemon of that start's own, which forks that start's
workers (the daemon leads a process group of its own). The JVM starts it (and a processor's `init` worker)
through a launcher that has a warm process fork it (`warm_runner.USER_PYTHON`, set by the driver process):
the launcher's environment carries the mark, the forked run's in `/proc` does not (it is the warm
process's), so a forked run is found through its launcher (`warm_runner.stood_in_for`) and a daemon's
workers through its group. The trial's source, the harness's code, is
registered before the mark and keeps the JVM's shared daemons: a daemon of each kind per start (the
source's creation, planning and reads) cost the stateful suite a third of its CPU. When the start ends, `end(start)` SIGKILLs the
groups those daemons lead, and any other process with the mark, and returns only once none of them is
seen alive: what the job's Python held in a worker dies with its start, observed.

>>> end("no-such-start")
0
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from frontier_harness.spark_impl.errors import SparkInfrastructureError
from frontier_harness.spark_impl.streaming import warm_runner

MARK = "FRONTIER_HARNESS_WORKERS_OF"  # in a worker's environment: the start of the query it belongs to
START = "FRONTIER_HARNESS_START"  # in a driver process's environment: its start's id
PROC = Path("/proc")
WAIT_S = 30.0


def marked(start: str) -> list[int]:
    """The pids of the processes whose environment carries `MARK=start` (Linux: `/proc`; elsewhere none)."""
    needle = f"{MARK}={start}".encode()
    found = []
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def end(start: str) -> int:
    """SIGKILLs the processes of `start`'s workers (each daemon with its process group, then any other
    marked process) and waits until none is alive; the number of processes seen (marked, or forked warm
    for a marked launcher). `SparkInfrastructureError` if one outlives `WAIT_S`."""
    pids = marked(start)
    forked = warm_runner.stood_in_for(pids)  # the daemon or `init` worker a marked launcher stands in for
    for pid in [*forked, *pids]:
        warm_runner.kill_with_group(pid)  # a daemon: its group is its workers
    deadline = time.monotonic() + WAIT_S
    while (alive := left(start, forked)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive:
        raise SparkInfrastructureError(f"the Python workers {alive} of a query's start survived SIGKILL")
    return len({*pids, *forked})


def left(start: str, forked: list[int]) -> list[int]:
    """The processes alive that carry `start`'s mark, or are one of `forked` or in a group one leads."""
    return [p for p in marked(start) if _alive(p)] + led_by(forked)


def led_by(runs: list[int]) -> list[int]:
    """The processes alive among `runs` or in a group one of them leads (a daemon's: its workers).

    >>> led_by([])
    []
    """
    leaders = set(runs)
    if not leaders:
        return []
    return [p for p in _pids() if (g := _group(p)) is not None and (p in leaders or g in leaders)]


def _pids() -> list[int]:
    return [int(e.name) for e in PROC.iterdir() if e.name.isdigit()] if PROC.is_dir() else []


def _group(pid: int) -> int | None:
    """The process group of `pid` if it runs (a zombie does not), else None."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[2]) if fields[0] != "Z" else None


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    return _group(pid) is not None
