"""A verdict claims only what ran: "not run" after zero histories, "not applicable" named, neither held.

Each test runs a small suite through `run_suite` (the model's own speed, in process) or the CLI's exit code;
`verify` and the pytest fixture judge a property that did not run as `check` does.
"""

from __future__ import annotations

from collections import Counter

import attrs
import pytest
from rich.console import Console

from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.cli import run as runs
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.cli.pytest_plugin import Harness
from frontier_harness.properties.cli.run import suites_exit_code
from frontier_harness.properties.engine import runner
from frontier_harness.properties.engine.implementation import Speed
from frontier_harness.properties.engine.pairings import PairingResult
from frontier_harness.properties.engine.results import PropertyResult, SuiteResult
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.suite import Outcome, Property, Suite
from frontier_harness.properties.engine.verdict import Verdict
from frontier_harness.properties.solver import check as obligations
from tests.helpers import QUICK

SMALL = attrs.evolve(QUICK, max_examples=5)


def _holds(impl, histories):
    return [Outcome(ok=True) for _ in histories]


def _fails(impl, histories):
    return [Outcome(ok=False, message="planted: every history fails", step=0) for _ in histories]


def _suite(*props: Property, required: tuple[str, ...] = ()) -> Suite:
    return Suite("verdicts", "", props, "model", required_events=required, domains=("total",), calls=())


def _prop(name: str, check=_holds, **kw) -> Property:
    return Property(name, "", draw_collection_history, check, events=lambda h: ["drawn"], **kw)


def _exit(result) -> int:
    return suites_exit_code(Console(file=open("/dev/null", "w")), [PairingResult("model", result)])


def test_a_property_that_checked_zero_histories_is_not_run_never_held():
    class Batched(ModelImplementation):
        speed = Speed.BATCHED

    # Screening first against a batched implementation, with no screening: no lane runs at all.
    nothing = attrs.evolve(SMALL, screen_first=True, batched_screening_histories=0)
    result = run_suite(SuiteRequest(_suite(_prop("p")), Batched(), "batched", nothing, seed=0))
    [r] = result.results
    assert (r.examples, r.verdict) == (0, Verdict.NOT_RUN)
    assert not r.passed and not result.passed
    assert _exit(result) == 2


def test_a_property_that_does_not_apply_is_named_and_neither_fails_nor_holds():
    windows = _prop("complete_windows", applies=lambda impl: "update mode: no window is ever final")
    result = run_suite(
        SuiteRequest(_suite(_prop("p"), windows), ModelImplementation(), "model", SMALL, seed=0)
    )
    ran, skipped = result.results
    assert ran.verdict is Verdict.HELD and ran.examples > 0
    assert skipped.verdict is Verdict.NOT_APPLICABLE and skipped.examples == 0
    assert skipped.reason == "update mode: no window is ever final"
    assert result.passed and _exit(result) == 0


def test_fail_fast_leaves_later_properties_not_run_and_their_hard_cases_unjudged():
    suite = _suite(_prop("first", _fails), _prop("second"), required=("never drawn",))
    result = run_suite(SuiteRequest(suite, ModelImplementation(), "model", SMALL, seed=0, fail_fast=True))
    first, second = result.results
    assert first.verdict is Verdict.FAILED
    assert second.verdict is Verdict.NOT_RUN and "--fail-fast" in second.reason
    assert result.missing_events == () and result.not_run_events == ("never drawn [total]",)
    assert _exit(result) == 1


def test_an_unreached_case_fails_an_audited_profile_and_is_only_named_in_a_small_one():
    suite = _suite(_prop("p"), required=("never drawn",))
    audited = run_suite(SuiteRequest(suite, ModelImplementation(), "model", SMALL, seed=0))
    assert audited.missing_events == ("never drawn [total]",) and _exit(audited) == 1
    small = attrs.evolve(SMALL, judges_reach=False)
    quick = run_suite(SuiteRequest(suite, ModelImplementation(), "model", small, seed=0))
    assert quick.missing_events == () and quick.not_shown_events == ("never drawn [total]",)
    assert _exit(quick) == 0


def _not_run() -> SuiteResult:
    return SuiteResult(
        "s", (PropertyResult("s", "p", "total", 0, 0.0, Counter(), not_run="it checked 0"),), ()
    )


def test_verify_names_a_property_that_did_not_run_and_exits_2_as_check_does(monkeypatch, capsys, tmp_path):
    """A gate that judged nothing is an error (exit 2), never a failure of the implementation (exit 1)."""
    monkeypatch.setattr(runs, "run_suites", lambda *args: ([PairingResult("model", _not_run())], {}))
    monkeypatch.setattr(obligations, "prove", lambda *args: [])
    assert main(["verify", "--corpus", str(tmp_path)]) == 2
    assert "not run: s.p[total] against model: it checked 0" in capsys.readouterr().out


def test_the_pytest_fixture_fails_a_property_that_judged_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "run_suite", lambda request: _not_run())
    with pytest.raises(pytest.fail.Exception, match=r"judged nothing in p\[total\]: it checked 0"):
        Harness("dev", 0, tmp_path).check("collections")
