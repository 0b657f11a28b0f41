"""A verdict claims only what ran: "not run" after zero histories, "not applicable" named, neither held.

Each test runs a small suite through `run_suite` (the model's own speed, in process) or the CLI's exit code.
"""

from __future__ import annotations

import attrs
from rich.console import Console

from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.cli.run import suites_exit_code
from frontier_harness.properties.engine.implementation import Speed
from frontier_harness.properties.engine.pairings import PairingResult
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.suite import Outcome, Property, Suite
from frontier_harness.properties.engine.verdict import Verdict
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
