"""A time limit for one check of one mutant, that also stops the Spark job it is waiting on.

A mutant can loop forever or make a job explode (a join key dropped). At the
limit a watchdog thread raises `TimedOut` in the main thread (as a signal
handler would) and calls `cancel` (e.g. cancel the Spark jobs running) until the
check returns: the main thread, blocked in Py4J waiting for a job, gets the
job's cancellation back and then the `TimedOut`. The session survives. `TimedOut` is a `BaseException`,
so no `except Exception` in the runner or Hypothesis mistakes it for a failure.

>>> try:
...     with time_limit(0.2, cancel=lambda: None):
...         while True:
...             time.sleep(0.01)
... except TimedOut:
...     print("timed out")
timed out
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

POLL = 0.25


class TimedOut(BaseException):
    """The check ran past its limit."""


@contextmanager
def time_limit(
    seconds: float | Callable[[], float], cancel: Callable[[], None] = lambda: None
) -> Iterator[None]:
    """Raises `TimedOut` in the block after `seconds` (main thread only; elsewhere no limit).

    `seconds` may be a function, asked again every `POLL` seconds: the limit may move (a check
    that has found a failure gets a shrinking budget from then on).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    started = time.perf_counter()
    limit = seconds if callable(seconds) else lambda: seconds
    done, fired = threading.Event(), threading.Event()
    previous = signal.signal(signal.SIGALRM, _raise_timed_out)
    args = (lambda: started + limit(), done, fired, cancel)
    watchdog = threading.Thread(target=_watch, args=args, daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()
        if fired.is_set():
            _drain()
        signal.signal(signal.SIGALRM, previous)


def _raise_timed_out(signum: int, frame: Any) -> None:
    raise TimedOut()


def _drain() -> None:
    """Lets a `TimedOut` still pending (the block ended as the limit passed) go off here, harmlessly."""
    try:
        for _ in range(3):
            time.sleep(0)
    except TimedOut:
        pass


def _watch(
    deadline: Callable[[], float], done: threading.Event, fired: threading.Event, cancel: Callable[[], None]
) -> None:
    while time.perf_counter() < deadline():
        if done.wait(POLL):
            return
    fired.set()
    _thread.interrupt_main(signal.SIGALRM)
    while not done.is_set():
        with contextlib.suppress(Exception):  # a session already gone has nothing to cancel
            cancel()
        done.wait(1.0)
