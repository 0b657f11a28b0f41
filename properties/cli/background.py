"""Lanes run in a second process while this one runs the others: both cores busy, not taking turns.

A default `check` is CPU-bound in two places that one process cannot overlap: the
model's lanes are pure Python, and a Spark lane's driver mostly waits on its JVM
(a thread running the model beside it gained nothing: the GIL, docs/decisions.md).
So the lanes `in_background` picks (every model lane, and the suites whose calls run
Spark jobs one after another, in the child's own session and JVM) run in a child process, started
with `spawn`, while the others run here. The child hands each property and domain's
result and each counterexample (found, then shrunk) back as it happens; this process
prints them and writes the files (one writer), and the results keep the lanes' order.

The verdicts are deterministic per command (each lane is seeded, and shares nothing
with another); the printed lines interleave, and an in-process Hypothesis lane's count
of examples can differ from a one-process run's (it depends on the lanes that ran
before it in its process: docs/decisions.md).
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import attrs

from frontier_harness.properties.engine.errors import HarnessError, InternalError
from frontier_harness.properties.engine.exit_codes import ExitCode, exit_code_of
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.lanes import MODEL, Lane, LaneResult
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.runner import PropertyResult


@attrs.frozen
class LaneSpec:
    """A lane as the child rebuilds it: its suite, and the `--impl` spec that names its implementation."""

    suite: str
    impl: str


@attrs.frozen
class Job:
    """What the child runs, and how (the run's options, Spark's settings)."""

    lanes: tuple[LaneSpec, ...]
    profile: Profile
    seed: int
    domains: tuple[str, ...] | None
    spark: dict[str, Any]


def in_background(lane: Lane) -> bool:
    """A lane that judges, of the model (pure Python) or of a suite whose calls run Spark jobs one after
    another (`Suite.serial_jobs`: trials, pipeline rounds): with these there, the two processes' shares of
    a default `check --profile ci` measured within 6% of each other.

    >>> from frontier_harness.properties.checks.registry import get_suite
    >>> from frontier_harness.properties.engine.lanes import _stub, lanes
    >>> suites = [get_suite(name) for name in ("collections", "ttl", "durable_resumption")]
    >>> [(lane.suite.name, lane.impl_name) for s in suites for lane in lanes(s, None, _stub) if in_background(lane)]
    [('ttl', 'model'), ('ttl', 'spark'), ('durable_resumption', 'spark')]
    """
    return lane.judges and (lane.impl_name == MODEL or lane.suite.serial_jobs)


class Background:
    """The child process and the thread that hears from it.

    `finished(impl_name, result)`, `found(cx, event)` and `lane_done(result, seconds)` are called (on the
    listening thread) as the child reports; `results()` waits for the child and returns its lanes'
    results, in order, or raises what the child raised.
    """

    def __init__(
        self,
        job: Job,
        finished: Callable[[str, PropertyResult], None],
        found: Callable[[Any, str], None],
        lane_done: Callable[[LaneResult, float], None],
    ):
        context = multiprocessing.get_context("spawn")
        self.job = job
        self.messages = context.Queue()
        self.process = context.Process(target=_child, args=(job, self.messages), daemon=True)
        self.finished, self.found, self.lane_done = finished, found, lane_done
        self.lanes: dict[int, LaneResult] = {}
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
        elif kind == "lane":
            index, result, seconds = payload
            self.lanes[index] = result
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
            f"the process running lanes in the background died (exit code {self.process.exitcode})"
        )
        self.done.set()

    def results(self) -> list[LaneResult]:
        """Every lane's result, in the job's order; `InfrastructureError` naming a lane that never came back
        (a run never pairs the lanes that did come back with the planned ones by position)."""
        self.done.wait()
        self.listener.join()
        self.process.join(timeout=30)
        if self.error is not None:
            raise self.error
        lost = [
            f"{spec.suite} against {spec.impl}"
            for i, spec in enumerate(self.job.lanes)
            if i not in self.lanes
        ]
        if lost:
            raise InfrastructureError(f"lanes run in the background returned no result: {', '.join(lost)}")
        return [self.lanes[i] for i in range(len(self.job.lanes))]

    def stop(self) -> None:
        """Ends the child at once (this process is failing, or was interrupted)."""
        if self.process.is_alive():
            self.process.terminate()
        self.done.set()


def _child(job: Job, messages: Any) -> None:
    """The child: each lane in turn, every report sent as it happens, then `done` (or `error`)."""
    try:
        _run(job, messages)
        send(messages, ("done",))
    except BaseException as exc:  # handed to the parent, which raises it as a sequential run would
        send(messages, ("error", *described(exc)))


def send(messages: Any, message: tuple) -> None:
    """Puts `message` pickled here, so one that cannot be pickled reaches the parent as an error (the
    harness's own: exit 4), where `Queue.put` would drop it in its feeder thread and the lane be lost."""
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


def _run(job: Job, messages: Any) -> None:
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.engine.lanes import lanes
    from frontier_harness.properties.engine.runner import run_suite

    if job.spark:
        from frontier_harness.properties.adapters.spark import configure

        configure(**job.spark)
    for index, spec in enumerate(job.lanes):
        started = time.perf_counter()
        (lane,) = lanes(get_suite(spec.suite), spec.impl, load_implementation)  # as the parent built it
        result = run_suite(
            lane.suite,
            lane.impl,
            lane.impl_name,
            job.profile,
            job.seed,
            job.domains,
            found=lambda cx, event: send(messages, ("found", cx, event)),
            finished=_sender(messages, lane.impl_name),
        )
        done = LaneResult(lane.impl_name, result, lane.reference_only)
        send(messages, ("lane", index, done, time.perf_counter() - started))


def _sender(messages: Any, impl_name: str) -> Callable[[PropertyResult], None]:
    """The `finished` hook of one lane: each property and domain's result, sent as it ends."""
    return lambda result: send(messages, ("finished", impl_name, result))
