"""Lanes run in a second process (`frontier_harness.properties.cli.background`): the verdicts a run in this
process gives, every report handed back as it happens, and the child's failures never turned into verdicts."""

from __future__ import annotations

import io
import os
import pickle
import queue
import threading
from typing import Any

import attrs
import pytest
from rich.console import Console

from frontier_harness.properties.adapters import load_implementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli import main as cli
from frontier_harness.properties.cli.background import Background, Job, LaneSpec, send
from frontier_harness.properties.engine.errors import HarnessError, InternalError
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.lanes import lanes
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import run_suite

# Shrinking by a count of implementation calls (as `ci` does): the size asserted is the same on any machine.
SMALL = attrs.evolve(
    PROFILES["dev"],
    max_examples=20,
    screening_histories=200,
    derandomize=True,
    shrink_by_calls=True,
    shrink_seconds=900.0,
)
SUITE = "mutable_antichain"


def exits() -> Any:
    """An implementation factory that ends its process, as a crashed interpreter would."""
    os._exit(7)


def background(*specs: LaneSpec) -> tuple[Background, dict[str, list]]:
    heard: dict[str, list] = {"finished": [], "found": [], "lanes": []}
    job = Job(specs, SMALL, 0, ("total",), {})
    child = Background(
        job,
        lambda name, r: heard["finished"].append((name, r.property, r.passed)),
        lambda cx, event: heard["found"].append((cx.impl, event, len(cx.history.actions))),
        lambda lane, seconds: heard["lanes"].append(lane.impl),
    )
    return child, heard


def test_a_lane_in_the_background_gives_the_verdicts_of_one_run_here():
    child, heard = background(LaneSpec(SUITE, "model"))
    (there,) = child.results()
    (lane,) = lanes(get_suite(SUITE), "model", load_implementation)
    here = run_suite(lane.suite, lane.impl, "model", SMALL, 0, ("total",))
    summary = [(r.property, r.domain, r.examples, r.passed, dict(r.events)) for r in there.result.results]
    assert summary == [(r.property, r.domain, r.examples, r.passed, dict(r.events)) for r in here.results]
    assert heard["finished"] == [("model", r.property, True) for r in here.results]
    assert heard["lanes"] == ["model"] and heard["found"] == []


def test_a_failure_in_the_background_is_handed_back_found_shrunk_and_small():
    planted = "tests.planted:model_keeps_zero_count"
    child, heard = background(LaneSpec(SUITE, "model"), LaneSpec(SUITE, planted))
    model, broken = child.results()
    assert model.passed and not broken.passed
    failure = next(r.failure for r in broken.result.results if r.failure is not None)
    assert len(failure.history.actions) <= 4, failure.history
    assert heard["found"][0][:2] == (planted, "found")
    assert heard["lanes"] == ["model", planted]


def test_an_error_in_the_background_is_raised_here_as_it_was_raised_there():
    child, _ = background(LaneSpec(SUITE, "tests.test_background:nowhere"))
    with pytest.raises(HarnessError, match="cannot load 'nowhere'"):
        child.results()


def test_a_contract_violation_in_the_background_exits_2_as_it_would_here():
    """Sent as its exit code, type and message (the object may not pickle), raised here as a usage error."""
    child, _ = background(LaneSpec("collections", "tests.raising_impl:one_short"))
    with pytest.raises(HarnessError, match="contract violation: observe_collections must return") as info:
        child.results()
    assert cli.report_error(Console(file=io.StringIO()), info.value) == 2


class Unpicklable(Exception):
    """An exception no pickle can carry (a lock in it), raised where the harness never raises one."""

    def __init__(self) -> None:
        super().__init__("a lock inside")
        self.lock = threading.Lock()


def raises_unpicklable() -> Any:
    raise Unpicklable()


def test_an_unexpected_exception_in_the_background_exits_4_with_its_traceback():
    child, _ = background(LaneSpec(SUITE, "tests.test_background:raises_unpicklable"))
    with pytest.raises(InternalError, match="Unpicklable: a lock inside") as info:
        child.results()
    assert "raises_unpicklable" in info.value.traceback  # the child's own frames
    said = Console(file=io.StringIO(), width=200)
    assert cli.report_error(said, info.value) == 4
    assert "internal error: Unpicklable: a lock inside: please report it" in said.file.getvalue()


def test_a_lane_that_never_comes_back_fails_the_run_naming_it():
    child = object.__new__(Background)
    child.job = Job((LaneSpec(SUITE, "model"), LaneSpec("ttl", "model")), SMALL, 0, None, {})
    child.lanes, child.error, child.done = {1: "the ttl lane's result"}, None, threading.Event()
    child.done.set()
    child.listener = child.process = threading.Thread(target=lambda: None)
    child.listener.start()
    with pytest.raises(InfrastructureError, match="returned no result: mutable_antichain against model"):
        child.results()


def test_a_message_that_cannot_be_pickled_is_an_error_never_dropped():
    sent: list[bytes] = []
    fake = type("Queue", (), {"put": lambda self, data: sent.append(data)})()
    send(fake, ("found", threading.Lock(), "found"))
    kind, code, name, message, _ = pickle.loads(sent[0])
    assert (kind, code, name) == ("error", 4, "TypeError")
    assert message.startswith("a 'found' message could not be sent: ")


def test_a_background_process_that_dies_is_infrastructure_never_a_verdict():
    child, heard = background(LaneSpec(SUITE, "tests.test_background:exits"))
    with pytest.raises(InfrastructureError, match="died \\(exit code 7\\)"):
        child.results()
    assert heard["lanes"] == []


class LastWords:
    """A child's queue and process as the listener meets them when the child sends `done` and exits while
    the listener waits: the wait times out empty-handed, then the process is gone, then `done` is read."""

    def __init__(self) -> None:
        self.reads = 0

    def get(self, timeout: float) -> bytes:
        self.reads += 1
        if self.reads == 1:
            raise queue.Empty
        return pickle.dumps(("done",))

    def is_alive(self) -> bool:  # exits during the listener's first wait
        return self.reads == 0


def test_a_child_that_exits_right_after_its_last_message_is_heard_to_the_end():
    child = object.__new__(Background)
    child.messages = child.process = LastWords()
    child.done, child.error = threading.Event(), None
    child._listen()
    assert child.error is None


@pytest.mark.parametrize(
    "argv, there",
    [
        (["check"], "the model's lanes and streaming's"),
        (["check", "--fail-fast"], "none"),
        (["check", "--impl", "model"], "none"),
        (["check", "--suite", "laws"], "none"),
    ],
)
def test_which_lanes_run_in_the_background(argv, there):
    args = cli.build_parser().parse_args(argv)
    suites = [get_suite(name) for name in (args.suite or ["collections", "laws", "streaming"])]
    planned = cli._against(args, Console(file=io.StringIO()), suites)
    chosen = [(planned[i].suite.name, planned[i].impl_name) for i in cli._background_lanes(args, planned)]
    expected = {
        "none": [],
        "the model's lanes and streaming's": [("laws", "model"), ("streaming", "spark")],
    }[there]
    assert chosen == expected
