"""Pairings shared by this process and a second one: both cores busy until the last pairing ends.

A default `check` is CPU-bound in two places that one process cannot overlap: the
model's pairings are pure Python, and a Spark pairing's driver mostly waits on its JVM
(a thread running the model beside it gained nothing: the GIL, docs/decisions.md).
So a run whose pairings are of both kinds (`in_background`: the model's, and the suites whose calls
run Spark jobs one after another) shares all its pairings between this process and a child started
with `spawn` (a session of its own, in this process's JVM when the run uses Spark: `share_jvm`, so the
JVM's start, compiled code and memory serve both): each process takes the next pairing not yet taken
(`Turns`, in `turn_order`: the longest kinds first, the model's last, to fill the end) the moment it
is free, so neither waits while the other works through a fixed share. The child hands each
property and domain's result and each counterexample (found, then shrunk) back as it happens; this
process prints them and writes the files (one writer), and the results keep the pairings' order.

Under `--fail-fast` both processes share one `Stop` (`shared_stop`: a `multiprocessing` event): the
first failure in either ends every lane of both, and neither takes another pairing; those never taken
are reported not run.

The verdicts are deterministic per command (each pairing is seeded, and shares nothing
with another); the printed lines interleave, and an in-process Hypothesis lane's count
of examples can differ from a one-process run's (it depends on the pairings that ran
before it in its process: docs/decisions.md).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.properties.engine.errors import HarnessError, InternalError
from frontier_harness.properties.engine.exit_codes import ExitCode, exit_code_of
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.pairings import MODEL, Pairing, PairingResult
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.results import PropertyResult
from frontier_harness.properties.engine.stop import Stop

SPAWN = multiprocessing.get_context("spawn")  # the child never inherits this process's Spark session


@attrs.frozen
class PairingSpec:
    """A pairing as the child rebuilds it: its suite, and the `--impl` spec that names its implementation."""

    suite: str
    impl: str


@attrs.frozen
class Job:
    """What the child may run, in the order the two processes take them (`Turns`), and how (the run's
    options, Spark's settings)."""

    pairings: tuple[PairingSpec, ...]
    profile: Profile
    seed: int
    domains: tuple[str, ...] | None
    spark: dict[str, Any]


def shared_stop() -> Stop:
    """A `Stop` this process and the child both read (its event is a `multiprocessing` one)."""
    return Stop(SPAWN.Event())


class Turns:
    """The next of `count` pairings not yet taken, shared by this process and the child (a `multiprocessing`
    counter): each process takes one when it is free, none once the run's `stop` is set.

    >>> turns = Turns(2)
    >>> turns.take(None), turns.take(None), turns.take(None)
    (0, 1, None)
    """

    def __init__(self, count: int, taken: Any = None):
        self.count = count
        self.taken = SPAWN.Value("i", 0) if taken is None else taken

    def take(self, stop: Stop | None) -> int | None:
        with self.taken.get_lock():
            if self.taken.value >= self.count or (stop is not None and stop.is_set):
                return None
            self.taken.value += 1
            return self.taken.value - 1


def turn_order(pairings: Sequence[Pairing]) -> list[int]:
    """The judging pairings' indices in the order the two processes take them: the suites whose calls run
    Spark jobs one after another (trials: the longest), then the other batched ones, then the model's
    (quick: they fill the end), each kind in the planned order.

    >>> from frontier_harness.properties.checks.registry import get_suite
    >>> from frontier_harness.properties.engine.pairings import _stub, pairings
    >>> planned = [p for name in ("collections", "streaming") for p in pairings(get_suite(name), None, _stub)]
    >>> [(planned[i].suite.name, planned[i].impl_name) for i in turn_order(planned)]
    [('streaming', 'spark'), ('collections', 'spark'), ('streaming', 'model')]
    """
    judging = [i for i, pairing in enumerate(pairings) if pairing.judges]
    return sorted(judging, key=lambda i: _kind(pairings[i]))


def _kind(pairing: Pairing) -> int:
    return 2 if pairing.impl_name == MODEL else 0 if pairing.suite.serial_jobs else 1


def in_background(pairing: Pairing) -> bool:
    """A pairing that judges, of the model (pure Python) or of a suite whose calls run Spark jobs one after
    another (`Suite.serial_jobs`: trials, pipeline rounds): a run with pairings of this kind and of the
    other shares them between two processes (`frontier_harness.properties.cli.run.shared_pairings`).

    >>> from frontier_harness.properties.checks.registry import get_suite
    >>> from frontier_harness.properties.engine.pairings import _stub, pairings
    >>> suites = [get_suite(name) for name in ("collections", "ttl", "durable_resumption")]
    >>> [(pairing.suite.name, pairing.impl_name) for s in suites for pairing in pairings(s, None, _stub) if in_background(pairing)]
    [('ttl', 'model'), ('ttl', 'spark'), ('durable_resumption', 'spark')]
    """
    return pairing.judges and (pairing.impl_name == MODEL or pairing.suite.serial_jobs)


class Background:
    """The child process and the thread that hears from it.

    `finished(impl_name, result)`, `found(cx, event)` and `lane_done(result, seconds)` are called (on the
    listening thread) as the child reports; `results()` waits for the child and returns its pairings'
    results by their place in the job, or raises what the child raised. The child takes its pairings
    from `turns` (shared with this process); under `stop` (`shared_stop`, `--fail-fast`) its lanes end at
    the first failure of either process.
    """

    def __init__(
        self,
        job: Job,
        finished: Callable[[str, PropertyResult], None],
        found: Callable[[Any, str], None],
        lane_done: Callable[[PairingResult, float], None],
        turns: Turns,
        stop: Stop | None = None,
    ):
        self.job, self.turns = job, turns  # held: the child opens the counter after this returns
        self.messages = SPAWN.Queue()
        event = None if stop is None else stop.event
        self.process = SPAWN.Process(
            target=_child, args=(job, self.messages, turns.taken, event), daemon=True
        )
        self.finished, self.found, self.lane_done = finished, found, lane_done
        self.pairings: dict[int, PairingResult] = {}
        self.took: set[int] = set()  # the pairings the child took, by their place in the job
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.process.start()
        self.listener = threading.Thread(target=self._listen, daemon=True)
        self.listener.start()

    def _listen(self) -> None:
        while not self.done.is_set():
            # Whether the child lives is read before the queue: a child that has exited sent every message
            # first, so an empty queue after it means it died. Read after, a child that sent its last messages
            # and exited while the queue was being read was taken for dead, its `done` unread.
            alive = self.process.is_alive()
            try:
                kind, *payload = pickle.loads(self.messages.get(timeout=0.5))
            except queue.Empty:
                if not alive:
                    self._died()
                continue
            self._handle(kind, payload)

    def _handle(self, kind: str, payload: list) -> None:
        if kind == "finished":
            self.finished(*payload)
        elif kind == "found":
            self.found(*payload)
        elif kind == "took":
            self.took.add(payload[0])
        elif kind == "pairing":
            index, result, seconds = payload
            self.pairings[index] = result
            self.lane_done(result, seconds)
        elif kind == "error":
            self.error = raised_there(*payload)
            self.done.set()
        elif kind == "done":
            self.done.set()

    def _died(self) -> None:
        if self.done.is_set():
            return
        self.error = InfrastructureError(
            f"the process running suites in the background died (exit code {self.process.exitcode})"
        )
        self.done.set()

    def results(self) -> dict[int, PairingResult]:
        """The result of each pairing the child took, by its place in the job; `InfrastructureError` naming a
        pairing it took and never reported (a run never claims a verdict for a pairing that did not return)."""
        self.done.wait()
        self.listener.join()
        self.process.join(timeout=30)
        if self.error is not None:
            raise self.error
        lost = [
            f"{self.job.pairings[i].suite} against {self.job.pairings[i].impl}"
            for i in sorted(self.took - set(self.pairings))
        ]
        if lost:
            raise InfrastructureError(f"suites run in the background returned no result: {', '.join(lost)}")
        return dict(self.pairings)

    def stop(self) -> None:
        """Ends the child at once (this process is failing, or was interrupted)."""
        if self.process.is_alive():
            self.process.terminate()
        self.done.set()


def _child(job: Job, messages: Any, taken: Any, event: Any = None) -> None:
    """The child: the next pairing not taken (`Turns` over `taken`) until none is left, every report sent
    as it happens, then `done` (or `error`); `event` is the parent's stop (`shared_stop`) under
    `--fail-fast`."""
    _exit_with_parent()
    try:
        _run(job, messages, Turns(len(job.pairings), taken), None if event is None else Stop(event))
        send(messages, ("done",))
    except BaseException as exc:  # handed to the parent, which raises it as a sequential run would
        send(messages, ("error", *described(exc)))


def _exit_with_parent() -> None:
    """Ends this child the moment its parent ends. A parent killed (a CI job's timeout, `kill`) runs no exit
    hook that would end it: the child went on taking pairings, its JVM holding a core, for a run nobody reads
    (measured: a `check` killed at 2 minutes left one running its pairings for 9 more)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(int(ExitCode.INFRASTRUCTURE))

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def send(messages: Any, message: tuple) -> None:
    """Puts `message` pickled here, so one that cannot be pickled reaches the parent as an error (the
    harness's own: exit 4), where `Queue.put` would drop it in its feeder thread and the pairing be lost."""
    try:
        data = pickle.dumps(message)
    except Exception as exc:
        data = pickle.dumps(("error", *described(exc, f"a {message[0]!r} message could not be sent: ")))
    messages.put(data)


def described(exc: BaseException, context: str = "") -> tuple[int, str, str, str]:
    """What the parent needs of an exception, whatever it holds: whose fault it is (its exit code), its
    type's name, its message and its traceback, as plain values (the object may not survive pickling).

    >>> described(KeyError("step"))[:3]
    (4, 'KeyError', "'step'")
    """
    text = "".join(traceback.format_exception(exc))
    return int(exit_code_of(exc)), type(exc).__name__, context + str(exc), text


def raised_there(code: int, kind: str, message: str, trace: str) -> Exception:
    """The exception to raise here for one the child described (`described`), of the kind that gives the
    same exit code: a `HarnessError` (2), an `InfrastructureError` (3), or an `InternalError` (4) that
    carries the child's traceback.

    >>> raised_there(2, "ContractViolation", "contract violation: observe_x must return a list", "")
    HarnessError('contract violation: observe_x must return a list')
    """
    if code == ExitCode.USAGE:
        return HarnessError(message)
    if code == ExitCode.INFRASTRUCTURE:
        return InfrastructureError(message)
    return InternalError(kind, message, trace)


def _run(job: Job, messages: Any, turns: Turns, stop: Stop | None) -> None:
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.engine.pairings import pairings
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

    if job.spark:
        from frontier_harness.properties.adapters.spark import configure

        configure(**job.spark)
    while (index := turns.take(stop)) is not None:
        spec = job.pairings[index]
        send(messages, ("took", index))
        started = time.perf_counter()
        (pairing,) = pairings(get_suite(spec.suite), spec.impl, load_implementation)  # as the parent built it
        result = run_suite(
            SuiteRequest(
                pairing.suite,
                pairing.impl,
                pairing.impl_name,
                job.profile,
                job.seed,
                job.domains,
                found=lambda cx, event: send(messages, ("found", cx, event)),
                fail_fast=stop is not None,
                finished=_sender(messages, pairing.impl_name),
                stop=stop,
            )
        )
        if stop is not None and not result.passed:
            stop.set(f"{spec.suite} against {spec.impl}")  # a failure not found as a trial: a hard case
        done = PairingResult(pairing.impl_name, result, pairing.reference_only)
        send(messages, ("pairing", index, done, time.perf_counter() - started))


def _sender(messages: Any, impl_name: str) -> Callable[[PropertyResult], None]:
    """The `finished` hook of one pairing: each property and domain's result, sent as it ends."""
    return lambda result: send(messages, ("finished", impl_name, result))
