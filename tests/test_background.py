"""Pairings run in a second process (`frontier_harness.properties.cli.background`): the verdicts a run in this
process gives, every report handed back as it happens, and the child's failures never turned into verdicts."""

from __future__ import annotations

import io
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from typing import Any

import attrs
import pytest
from rich.console import Console

from frontier_harness.properties.adapters import load_implementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli import main as cli
from frontier_harness.properties.cli import run as runs
from frontier_harness.properties.cli.background import Background, Job, PairingSpec, Turns, send
from frontier_harness.properties.engine.errors import HarnessError, InternalError
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.pairings import pairings
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import alive, gone_within

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


def background(*specs: PairingSpec) -> tuple[Background, dict[str, list]]:
    heard: dict[str, list] = {"finished": [], "found": [], "pairings": []}
    job = Job(specs, SMALL, 0, ("total",), {})
    child = Background(
        job,
        lambda name, r: heard["finished"].append((name, r.property, r.passed)),
        lambda cx, event: heard["found"].append((cx.impl, event, len(cx.history.actions))),
        lambda pairing, seconds: heard["pairings"].append(pairing.impl),
        Turns(len(specs)),  # the child takes them all: none is taken here
    )
    return child, heard


def test_a_lane_in_the_background_gives_the_verdicts_of_one_run_here():
    child, heard = background(PairingSpec(SUITE, "model"))
    there = child.results()[0]
    (pairing,) = pairings(get_suite(SUITE), "model", load_implementation)
    here = run_suite(SuiteRequest(pairing.suite, pairing.impl, "model", SMALL, 0, ("total",)))
    summary = [(r.property, r.domain, r.examples, r.passed, dict(r.events)) for r in there.result.results]
    assert summary == [(r.property, r.domain, r.examples, r.passed, dict(r.events)) for r in here.results]
    assert heard["finished"] == [("model", r.property, True) for r in here.results]
    assert heard["pairings"] == ["model"] and heard["found"] == []


def test_a_failure_in_the_background_is_handed_back_found_shrunk_and_small():
    planted = "tests.planted:model_keeps_zero_count"
    child, heard = background(PairingSpec(SUITE, "model"), PairingSpec(SUITE, planted))
    model, broken = (child.results()[i] for i in range(2))
    assert model.passed and not broken.passed
    failure = next(r.failure for r in broken.result.results if r.failure is not None)
    assert len(failure.history.actions) <= 4, failure.history
    assert heard["found"][0][:2] == (planted, "found")
    assert heard["pairings"] == ["model", planted]


def test_an_error_in_the_background_is_raised_here_as_it_was_raised_there():
    child, _ = background(PairingSpec(SUITE, "tests.test_background:nowhere"))
    with pytest.raises(HarnessError, match="cannot load 'nowhere'"):
        child.results()


def test_a_contract_violation_in_the_background_exits_2_as_it_would_here():
    """Sent as its exit code, type and message (the object may not pickle), raised here as a usage error."""
    child, _ = background(PairingSpec("collections", "tests.raising_impl:one_short"))
    with pytest.raises(HarnessError, match="contract violation: observe_collections must return") as info:
        child.results()
    assert cli.report_error(Console(file=io.StringIO()), info.value) == 2


class Unpicklable(Exception):
    """An exception no pickle can carry (a lock in it), raised where the harness never raises one."""

    def __init__(self) -> None:
        super().__init__("a lock inside")
        self.lock = threading.Lock()


class ObservesNothing(Implementation):
    name = "observes-nothing"

    def observe_mutable_antichain(self, domain: Any, histories: Any) -> list:  # never reached
        return []


def _harness_bug(impl: Any, impl_name: str) -> None:
    raise Unpicklable()


def raises_unpicklable() -> Any:
    """The harness's own setup, in the child this factory runs in, raising `Unpicklable`: a harness bug
    (whatever the implementation's own code raises is its failure, exit 1 or 2, never this)."""
    from frontier_harness.properties.engine import runner

    runner.set_up = _harness_bug
    return ObservesNothing()


def test_an_unexpected_exception_in_the_background_exits_4_with_its_traceback():
    child, _ = background(PairingSpec(SUITE, "tests.test_background:raises_unpicklable"))
    with pytest.raises(InternalError, match="Unpicklable: a lock inside") as info:
        child.results()
    assert "in _harness_bug" in info.value.traceback  # the child's own frames
    said = Console(file=io.StringIO(), width=200)
    assert cli.report_error(said, info.value) == 4
    assert "internal error: Unpicklable: a lock inside: please report it" in said.file.getvalue()


def test_a_lane_that_never_comes_back_fails_the_run_naming_it():
    child = object.__new__(Background)
    child.job = Job((PairingSpec(SUITE, "model"), PairingSpec("ttl", "model")), SMALL, 0, None, {})
    child.pairings, child.error, child.done = {1: "the ttl pairing's result"}, None, threading.Event()
    child.took = {0, 1}
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
    child, heard = background(PairingSpec(SUITE, "tests.test_background:exits"))
    with pytest.raises(InfrastructureError, match="died \\(exit code 7\\)"):
        child.results()
    assert heard["pairings"] == []


ORPHANED = """
import time, attrs
from frontier_harness.properties.cli.background import Background, Job, PairingSpec, Turns
from tests.test_background import SMALL
endless = attrs.evolve(SMALL, max_examples=10**6, screening_histories=10**7)  # minutes of work
job = Job((PairingSpec("laws", "model"),), endless, 0, ("total",), {})
child = Background(job, print, print, print, Turns(1))
print(child.process.pid, flush=True)
time.sleep(600)
"""


def test_a_child_whose_parent_is_killed_exits_with_it():
    """A parent SIGKILLed (no exit hook runs) takes its child with it: no orphan runs on the pairings."""
    parent = subprocess.Popen([sys.executable, "-c", ORPHANED], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert gone_within(20, pid), f"the child {pid} outlived its killed parent"
    finally:
        parent.kill()
        if "pid" in locals() and alive(pid):
            os.kill(pid, signal.SIGKILL)  # the orphan of a failing run, not left behind


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
    "argv, shared",
    [
        (["check"], "every judging pairing, trials first, the model's last"),
        (["check", "--fail-fast"], "every judging pairing, trials first, the model's last"),  # one stop
        (["check", "--impl", "model"], "none"),
        (["check", "--suite", "laws"], "none"),
    ],
)
def test_which_lanes_run_in_the_background(argv, shared):
    """Which pairings the two processes share (each takes the next when it is free), in the order taken."""
    args = cli.build_parser().parse_args(argv)
    suites = [get_suite(name) for name in (args.suite or ["collections", "laws", "streaming"])]
    planned = runs.against(args, Console(file=io.StringIO()), suites)
    chosen = [(planned[i].suite.name, planned[i].impl_name) for i in runs.shared_pairings(args, planned)]
    expected = {
        "none": [],
        "every judging pairing, trials first, the model's last": [
            ("streaming", "spark"),
            ("collections", "spark"),
            ("laws", "model"),
        ],
    }[shared]
    assert chosen == expected


@pytest.mark.parametrize(
    "impl, suites",
    [
        ("tests.planted:model_keeps_zero_diffs", ["collections", "mutable_antichain", "laws"]),
        pytest.param(
            "tests.planted:spark_keeps_zero_diffs",
            ["collections", "mutable_antichain"],
            marks=pytest.mark.spark,
        ),
    ],
    ids=["model", "spark"],
)
def test_a_shared_run_gives_the_verdicts_and_files_of_a_serial_run_under_ci(
    impl, suites, tmp_path, monkeypatch
):
    """Two processes taking the pairings as each is free, against one taking them in turn: under `ci` the
    same verdicts, counts and hard cases, and byte-identical counterexample files. With a Spark
    implementation the second process computes in the JVM the first shares (`share_jvm`): with this JVM up
    and `SPARK_HOME` pointing nowhere, a second process that started a JVM of its own would exit 3."""
    from frontier_harness.properties.cli.background import turn_order
    from frontier_harness.properties.cli.main import main
    from frontier_harness.spark_impl import session

    if "spark" in impl:
        session.spark()
        monkeypatch.setenv("SPARK_HOME", str(tmp_path / "no-spark-here"))

    argv = ["check", *(f"--suite={suite}" for suite in suites), "--profile", "ci", "--max-examples", "40"]
    argv += ["--screening", "300"]
    argv += ["--impl", impl]
    seen = {}
    for how, shared in (
        ("serial", lambda args, planned: []),
        ("shared", lambda a, planned: turn_order(planned)),
    ):
        monkeypatch.setattr(runs, "shared_pairings", shared)
        out = tmp_path / how
        calls = []
        monkeypatch.setattr(runs, "run_pairing", _counting(runs.run_pairing, calls))
        assert main([*argv, "--out", str(out), "--junit", str(tmp_path / f"{how}.xml")]) == 1
        files = {p.name: p.read_bytes() for p in sorted(out.glob("*.itf.json"))}
        seen[how] = (files, _verdicts(tmp_path / f"{how}.xml"), len(calls))
    (serial_files, serial_verdicts, here), (shared_files, shared_verdicts, shared_here) = seen.values()
    assert serial_files and shared_files == serial_files
    assert shared_verdicts == serial_verdicts
    assert shared_here < here  # the child took some of the pairings


def _counting(run_pairing, calls):
    def counted(pairing, *args, **kwargs):
        calls.append(pairing.suite.name) if pairing.judges else None
        return run_pairing(pairing, *args, **kwargs)

    return counted


def _verdicts(junit) -> list[tuple]:
    """Each test case's name, counts and outcome, from the JUnit report (its times left out)."""
    import xml.etree.ElementTree as ET

    cases = ET.parse(junit).getroot().iter("testcase")
    return sorted(
        (c.get("classname"), c.get("name"), tuple((p.get("name"), p.get("value")) for p in c.iter("property")),
         tuple((child.tag, child.get("message")) for child in c if child.tag != "properties"))
        for c in cases
    )  # fmt: skip
