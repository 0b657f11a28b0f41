"""The first file at once: a counterexample is written the moment it is found and rewritten in place as it
shrinks; a failing property does not stop the run unless `--fail-fast` (the pytest fixture's default)."""

from __future__ import annotations

import io
import json

import attrs
import pytest
from rich.console import Console

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.report import CounterexampleFiles
from frontier_harness.properties.engine.run import FOUND, SHRUNK, Run
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.search import hypothesis_lane, screening_lane
from frontier_harness.properties.engine.verdict import Verdict
from tests import planted
from tests.helpers import QUICK

COLLECTIONS = get_suite("collections")
PLANTED = "tests.planted:model_keeps_zero_diffs"


@pytest.mark.parametrize("screen", [False, True], ids=["hypothesis lane", "screening lane"])
def test_the_file_is_written_when_found_and_rewritten_in_place_as_it_shrinks(tmp_path, screen):
    import attrs

    # a batch of one: a batch's smallest failure is where shrinking starts, and of a thousand it is minimal
    profile = attrs.evolve(QUICK, max_examples=200, screening_histories=2000, screening_batch=1)
    seen: list[tuple[str, int, bool]] = []
    console = Console(file=io.StringIO(), width=300)
    files = CounterexampleFiles(tmp_path, console)

    def found(cx, event):
        files.announce(cx, event)
        path = files.paths[(cx.suite, cx.property, cx.domain, cx.impl)]
        seen.append((event, len(counterexample.read(path).history.actions), path.exists()))

    impl = planted.model_keeps_zero_diffs()
    run = Run(COLLECTIONS, COLLECTIONS.properties[0], impl, PLANTED, "total", profile, 3, found=found)
    final = (screening_lane if screen else hypothesis_lane)(run).failure
    assert final is not None and seen[0][0] == FOUND and seen[0][2]
    assert any(event == SHRUNK for event, _, _ in seen), seen
    shrunk = seen[0][1] > len(final.history.actions)
    assert shrunk or not screen, "the screened failure was found minimal: nothing shows the rewrite"
    path = files.final(final)
    assert list(tmp_path.glob("*.itf.json")) == [path]
    assert json.loads(path.read_text()) == json.loads(json.dumps(counterexample.to_itf(final)))
    said = console.file.getvalue()
    assert f"counterexample found {seen[0][1]} actions, written to {path}; shrinking it" in said
    assert not shrunk or f"shrunk to {len(final.history.actions)} actions, rewritten {path}" in said


def test_a_failure_in_the_first_short_screening_call_is_announced_before_a_whole_batch_runs():
    """`first_screening_batch` (ci: a tenth of a batch): the lane's first call checks up to that many histories, and a
    failure among them is announced, and shrinks, without the rest of the batch ever being checked."""
    profile = attrs.evolve(QUICK, screening_histories=2000, screening_batch=1000, first_screening_batch=100)
    calls: list[int] = []

    class Counted(type(planted.model_keeps_zero_diffs())):
        def observe_collections(self, time_domain, histories):
            calls.append(len(histories))
            return super().observe_collections(time_domain, histories)

    announced: list[int] = []
    heard = lambda cx, event: announced.append(len(calls)) if event == FOUND else None  # noqa: E731
    run = Run(COLLECTIONS, COLLECTIONS.properties[0], Counted(), PLANTED, "total", profile, 3, found=heard)
    assert screening_lane(run).failure is not None
    # Fewer than drawn reach the observer: a history drawn twice is observed once.
    assert 50 < calls[0] <= 100 and announced == [1], (calls, announced)
    whole = attrs.evolve(profile, first_screening_batch=None)
    calls.clear()
    assert screening_lane(
        Run(COLLECTIONS, COLLECTIONS.properties[0], Counted(), PLANTED, "total", whole, 3)
    ).failure
    assert calls[0] > 500


def test_a_failing_property_does_not_stop_the_others_unless_fail_fast():
    impl, domains = planted.model_keeps_zero_diffs(), ["total", "partitioned"]
    profile = attrs.evolve(QUICK, screening_histories=500)
    everything = run_suite(SuiteRequest(COLLECTIONS, impl, PLANTED, profile, 0, domains))
    assert [r.domain for r in everything.results if not r.passed] == domains
    first = run_suite(SuiteRequest(COLLECTIONS, impl, PLANTED, profile, 0, domains, fail_fast=True))
    assert [(r.domain, r.verdict) for r in first.results] == [
        ("total", Verdict.FAILED),
        ("partitioned", Verdict.NOT_RUN),  # named, never held: the stop cut it short
    ]


def test_check_runs_every_suite_after_a_failure_and_fail_fast_stops_at_it(tmp_path, capsys):
    argv = ["check", "--suite", "collections", "--suite", "mutable_antichain", "--domain", "total"]
    argv += ["--profile", "dev", "--screening", "1", "--impl", PLANTED, "--out", str(tmp_path)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "collections against" in out and "mutable_antichain against" in out
    assert "counterexample found" in out
    assert main([*argv, "--fail-fast"]) == 1
    out = capsys.readouterr().out
    assert "collections against" in out and "mutable_antichain against" not in out


def test_the_pytest_fixture_stops_at_the_first_failure_by_default(tmp_path, monkeypatch):
    from frontier_harness.properties.cli.pytest_plugin import Harness
    from frontier_harness.properties.engine import runner
    from frontier_harness.properties.engine.results import SuiteResult

    calls = []
    monkeypatch.setattr(
        runner, "run_suite", lambda request: calls.append(request) or SuiteResult("s", (), ())
    )
    Harness("dev", 0, tmp_path).check("collections", impl=PLANTED)
    Harness("dev", 0, tmp_path).check("collections", impl=PLANTED, fail_fast=False)
    assert [request.fail_fast for request in calls] == [True, False]


def test_verify_fail_fast_runs_no_proof_and_no_corpus_after_a_failing_suite(monkeypatch, capsys):
    from collections import Counter

    from frontier_harness.properties.cli import run as runs
    from frontier_harness.properties.engine.pairings import PairingResult
    from frontier_harness.properties.engine.results import PropertyResult, SuiteResult
    from frontier_harness.properties.solver import check as obligations

    failed = PairingResult(
        "model", SuiteResult("s", (PropertyResult("s", "p", "total", 1, 0.1, Counter()),), ("never reached",))
    )
    monkeypatch.setattr(runs, "run_suites", lambda *args: ([failed], {}))
    monkeypatch.setattr(obligations, "prove", lambda *args: pytest.fail("a proof ran after --fail-fast"))
    assert main(["verify", "--fail-fast"]) == 1
    assert "--fail-fast stopped at the first failure" in capsys.readouterr().out


def test_a_failing_trial_is_announced_before_the_rest_of_its_batch_is_checked():
    """A suite that hands its histories over one by one (`Trials`, the streaming suite's real queries):
    the first failing trial's file is written at once, not when the batch's last trial ends."""
    from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
    from frontier_harness.properties.engine.suite import Outcome, Property, Suite
    from frontier_harness.properties.engine.trials import Trials

    log: list[str] = []

    def trials(impl, histories):
        def one_by_one():
            for i, _ in enumerate(histories):
                log.append(f"trial {i}")
                yield Outcome(ok=i != 1, message="" if i != 1 else "trial 1 failed")

        return Trials(one_by_one())

    prop = Property("p", "", draw_collection_history, trials)
    suite = Suite("trials", "", (prop,), "model", domains=("total",))
    profile = attrs.evolve(QUICK, screening_histories=5, screening_batch=5, shrink_seconds=0)
    found = lambda cx, event: log.append(f"{event} {cx.message}")  # noqa: E731
    run = Run(suite, prop, planted.model_keeps_zero_diffs(), "model", "total", profile, 0, found=found)
    assert screening_lane(run).failure is not None
    assert log[:4] == ["trial 0", "trial 1", f"{FOUND} trial 1 failed", "trial 2"], log


def test_verbose_shows_each_shrink_pass_with_the_candidates_it_kept_of_those_it_tried(tmp_path):
    """Shrink passes are named and counted as Hypothesis's shrinker counts its own (`shrink.Tally`); the
    counts reach the CLI's output under `--verbose` only, and never the file."""
    from frontier_harness.properties.cli.run import report_failures
    from frontier_harness.properties.engine.pairings import PairingResult

    impl, profile = planted.model_keeps_zero_diffs(), attrs.evolve(QUICK, screening_histories=500)
    result = run_suite(SuiteRequest(COLLECTIONS, impl, PLANTED, profile, 3, ["total"]))
    failure = result.results[0].failure
    assert failure is not None and failure.shrink_passes, failure
    counts = [line.rsplit(": ", 1)[1].split() for line in failure.shrink_passes]  # ['1', 'of', '12', 'kept']
    assert all(int(kept) <= int(tried) for kept, _, tried, _ in counts)
    assert sum(int(kept) for kept, *_ in counts) >= 1  # the shrink made the failure smaller at least once
    shown = {}
    for verbose in (False, True):
        out = Console(file=io.StringIO(), width=400)
        files = CounterexampleFiles(tmp_path / str(verbose), None)
        report_failures(out, files, PairingResult(PLANTED, result), {}, verbose)
        shown[verbose] = out.file.getvalue()  # type: ignore[attr-defined]
    assert "shrink passes: " in shown[True] and "shrink passes" not in shown[False]
    assert "shrink passes" not in next((tmp_path / "True").glob("*.itf.json")).read_text()
