"""What a driver process the harness starts needs, whatever capability it runs: the harness's code and the
working directory on its path (`environment`), by name what it imports (`name_of`, `load`), and, for a
driver armed to be killed, what its death shows (`killed`).

A killable driver runs in a session of its own (its own process group) with `KILLABLE` set; at its crash
point it writes a marker naming the point and SIGKILLs its group (`spark_impl.streaming.faults`). The
harness counts the kill only when it sees both, the marker and the death by SIGKILL; a driver that exits
without reaching its point is infrastructure (`CrashPointNotReached`, exit 3), naming the point. A streaming
trial's killable driver (`spark_impl.streaming.killable`) has for stdin a pipe from the harness: at the pipe's
end, which is the harness's exit however it ended, it SIGKILLs its group (`die_with_harness`), so a harness
stopped by a signal leaves no such query running (the ttl suite's drivers, whose stdin says when to run,
are not guarded).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl.errors import CrashPointNotReached, SparkInfrastructureError

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 600
STDIN = 0  # a driver's stdin: the pipe from the harness (`die_with_harness`)


def environment(extra: dict[str, str]) -> dict[str, str]:
    """The environment of a driver process: the harness's, with the harness's code and the working
    directory (where a user's job or planted processor imports from) on its path."""
    env = {**os.environ, **extra}
    paths = (str(ROOT), os.getcwd(), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def die_with_harness() -> None:
    """In a driver process that leads its own process group, its stdin a pipe the harness holds: SIGKILLs the
    group (the driver and its JVM; the JVM's Python workers, in groups of their own, end with the JVM) once
    the pipe ends, that is, once the harness has exited. Anywhere else (another group's member, a stdin that
    is no pipe: a driver run by hand) it does nothing. Measured before: a `check` stopped by SIGTERM left
    its killable drivers' queries running, each JVM at about 40 % of a core, until their queries ended."""
    if os.getpgrp() != os.getpid() or not _is_pipe(STDIN):  # the harness's group is not ours to kill
        return

    def watch() -> None:  # the raw descriptor: a thread blocked in `sys.stdin` aborts the interpreter's exit
        while os.read(STDIN, 4096):
            pass
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="die-with-harness", daemon=True).start()


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:  # closed
        return False


def name_of(obj: Any) -> str:
    """`module:qualname` of a class or function, as a driver process imports it.

    >>> name_of(CrashPointNotReached)
    'frontier_harness.spark_impl.errors:CrashPointNotReached'
    """
    return f"{obj.__module__}:{obj.__qualname__}"


def load(name: str) -> Any:
    """What `name_of` named."""
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def ended(process: subprocess.Popen, what: str, log: Path | None = None) -> int:
    """The exit code of a driver process the harness waits for, once it has ended; one that has not within
    `TIMEOUT_S` is SIGKILLed with its group (a killable driver leads one; else the process alone), reaped,
    and infrastructure (`SparkInfrastructureError`, exit 3) naming `what` and its log's end: the harness's
    wait did not return, which says nothing of the job (before, a driver stopped by a profiler's trace was
    left running after the wait, and reported as a counterexample that "fails only together").

    >>> ended(subprocess.Popen(["true"]), "a driver")
    0
    """
    try:
        return process.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(process.pid) == process.pid:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        process.wait()
        tail = log.read_text()[-2000:] if log is not None and log.exists() else ""
        raise SparkInfrastructureError(f"{what} had not ended after {TIMEOUT_S} s; killed: {tail}") from None


def killed(process: subprocess.Popen, marked: Callable[[], str | None], point: str, log: Path) -> str:
    """The point a killable driver was killed at, once it is seen dead of SIGKILL and then with that point's
    marker (`marked()`, read after its death: `faults.killed_at`); `CrashPointNotReached` if it exited 0
    without reaching it, `SparkInfrastructureError` otherwise (another exit, another signal, no marker,
    another point)."""
    code = ended(process, f"the killable driver armed at {point}", log)
    marker = marked()
    if code == -signal.SIGKILL and marker == point:
        return point
    if code == 0 and marker is None:
        raise CrashPointNotReached(point, "exited 0")
    tail = log.read_text()[-2000:] if log.exists() else ""
    how = "killed by SIGKILL" if code == -signal.SIGKILL else f"exited with {code}"
    seen = f"a marker at {marker}" if marker else "no marker"
    raise SparkInfrastructureError(f"the killable driver armed at {point} was {how} with {seen}: {tail}")
