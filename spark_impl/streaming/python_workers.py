"""The Python workers one start of a trial's query ran, ended with it: a restart's workers are new.

A trial's driver process attaches to the harness's JVM (`driver`), and Spark's JVM keeps its Python workers:
one `pyspark.daemon` per Python executable and environment, forking workers that it reuses from task to task
(`spark.python.worker.reuse`). Measured on PySpark 4.3.0 (`tests/test_processor_suite.py`): a processor
that counts in a module-level dict kept its counts across a restart through a reused worker, where a real
restart (a new JVM) starts its workers afresh. So each start of a user's job's query names its workers (a
trial of the harness's own sink runs no user code in them, and keeps the JVM's shared daemon): the driver
process puts `MARK=<start id>` into the environment PySpark gives every Python function the job makes (its
`SparkContext.environment`), so the JVM starts a daemon of that start's own, which forks that start's
workers (the daemon leads a process group of its own). The trial's source, the harness's code, is
registered before the mark and keeps the JVM's shared daemons: a daemon of each kind per start (the
source's creation, planning and reads) cost the stateful suite a third of its CPU. When the start ends, `end(start)` SIGKILLs the
groups those daemons lead, and any other process with the mark, and returns only once none is seen
alive: what the job's Python held in a worker dies with its start, observed.

>>> end("no-such-start")
0
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from frontier_harness.spark_impl.errors import SparkInfrastructureError

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
    """SIGKILLs the processes of `start`'s workers (each daemon's process group, then any other marked
    process) and waits until none is alive; the number of marked processes seen. `SparkInfrastructureError`
    if one outlives `WAIT_S`."""
    pids = marked(start)
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:  # a daemon: its group is its workers
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + WAIT_S
    while (alive := [p for p in marked(start) if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive:
        raise SparkInfrastructureError(f"the Python workers {alive} of a query's start survived SIGKILL")
    return len(pids)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by the JVM, does not)."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
