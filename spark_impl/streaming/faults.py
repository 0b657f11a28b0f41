"""Crash points of a streaming trial, armed by the harness and fired by the source or the sink.

Spark writes a micro-batch's offsets, then runs the sink, then writes its commit:

- `before_offsets`: the source's `latestOffset` fails, so the batch's offsets are never written;
- `after_offsets`: the source's `partitions` fails (planning, after the offset log entry): no output;
- `after_sink`: the sink fails after its output is durable, before Spark's commit log entry.

The harness arms one point in the log directory (`fault.json`); the first call that
reaches the point with new data consumes it (an atomic rename, so exactly one process
fires) and raises `InjectedCrash`, or, armed `kill`, writes the marker `KILLED` (the point it
reached) and SIGKILLs its whole process group (the driver, its JVM and Python workers: a real
crash). Only a process started as killable (`KILLABLE` set in its environment, which the JVM and
its Python workers inherit) is ever killed; anywhere else a `kill` point raises. The harness counts
a kill only when it sees both: the marker, and the driver dead of SIGKILL (`killed_at`).
"""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl.errors import InjectedCrash

POINTS = tuple(CrashPoint)
FAULT = "fault.json"
KILLED = "killed.json"  # written by the process that reached a `kill` point, just before the SIGKILL
KILLABLE = "FRONTIER_HARNESS_KILLABLE"


def arm(directory: os.PathLike | str, point: str, kill: bool = False) -> None:
    """Arms `point` in `directory`; a second arm replaces the first."""
    if point not in POINTS:
        raise ValueError(f"unknown crash point {point!r}: expected one of {POINTS}")
    tmp = Path(directory) / f".{FAULT}.{uuid.uuid4().hex}"
    tmp.write_text(json.dumps({"point": point, "kill": kill}))
    os.replace(tmp, Path(directory) / FAULT)


def disarm(directory: os.PathLike | str) -> None:
    """Removes an armed point that nothing reached."""
    (Path(directory) / FAULT).unlink(missing_ok=True)


def fire(directory: os.PathLike | str, point: str) -> None:
    """Crashes here if `point` is armed in `directory` (consuming it); returns otherwise."""
    path = Path(directory) / FAULT
    try:
        armed = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return
    if armed.get("point") != point:
        return
    try:
        os.rename(path, path.with_name(f".{FAULT}.fired.{uuid.uuid4().hex}"))
    except FileNotFoundError:  # another process fired it first
        return
    if armed.get("kill") and os.environ.get(KILLABLE) == "1":
        _mark(Path(directory), point)
        os.killpg(os.getpgrp(), signal.SIGKILL)
    raise InjectedCrash(point)


def _mark(directory: Path, point: str) -> None:
    tmp = directory / f".{KILLED}.{uuid.uuid4().hex}"
    tmp.write_text(json.dumps({"point": point, "pid": os.getpid()}))
    os.replace(tmp, directory / KILLED)


def killed_at(directory: os.PathLike | str) -> str | None:
    """The point whose marker a killed process left in `directory` (consuming it), or None.

    >>> d = Path(__import__("tempfile").mkdtemp()); _mark(d, "after_sink"); killed_at(d), killed_at(d)
    ('after_sink', None)
    """
    path = Path(directory) / KILLED
    try:
        point = json.loads(path.read_text())["point"]
    except FileNotFoundError:
        return None
    path.unlink()
    return point
