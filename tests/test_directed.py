"""Directed histories (`Property.directed`): a run's first histories reach each required hard case by
construction, so a run of a few histories reaches them all; a failure among them is found and shrunk."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.model.errors import InvalidTime
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.checks.streaming.strategies.streaming import aimed_at
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.source import RandomSource
from frontier_harness.properties.engine.suite import Outcome, Property, Suite
from frontier_harness.properties.engine.verdict import Verdict
from tests.helpers import QUICK

RARE = "a read at time 99"  # a hard case the collections generator draws about never


def _reads_99(history: History) -> list[str]:
    return [RARE] if any(a.args.get("time") == 99 for a in history.actions if a.name == "read") else []


def _directed_read(source, domain: str) -> History:
    update = Action("update", {"data": "a", "time": source.integer(0, 3), "diff": 1})
    return History(domain, (update, Action("read", {"time": 99})))


def _suite(check) -> Suite:
    prop = Property(
        "p", "", draw_collection_history, check, events=_reads_99, directed={RARE: _directed_read}
    )
    return Suite("directed", "", (prop,), "model", required_events=(RARE,), domains=("total",), calls=())


def _holds(impl, histories):
    return [Outcome(ok=True) for _ in histories]


def _fails_at_99(impl, histories):
    return [Outcome(ok=not _reads_99(h), message="read at 99", step=0) for h in histories]


def test_a_run_of_one_history_reaches_a_directed_hard_case():
    one = attrs.evolve(QUICK, max_examples=1, batch_size=1)
    result = run_suite(SuiteRequest(_suite(_holds), ModelImplementation(), "model", one, seed=0))
    assert result.missing_events == () and result.results[0].verdict is Verdict.HELD
    assert result.results[0].examples == 2  # the directed history, then the one Hypothesis drew


def test_a_failing_directed_history_is_reported_and_reduced():
    result = run_suite(SuiteRequest(_suite(_fails_at_99), ModelImplementation(), "model", QUICK, seed=0))
    failure = result.results[0].failure
    assert failure is not None and failure.lane == "directed"
    assert [a.name for a in failure.history.actions] == ["read"]  # the update removed by delta debugging


@pytest.mark.parametrize(
    "outcome",
    [
        Outcome.model_rejected(InvalidTime("total", 99, "a read the model refuses")),
        Outcome.implementation_raised(KeyError("time"), ()),
    ],
    ids=["rejected_by_the_model", "raised"],
)
def test_a_history_that_ran_to_no_observation_reaches_no_hard_case(outcome):
    """The directed history reaches `RARE` by construction, but the model rejected it (never run) or its
    check raised (what it reached is not known): the run counts it nowhere, never from the history."""
    result = run_suite(
        SuiteRequest(
            _suite(lambda impl, hs: [outcome for _ in hs]), ModelImplementation(), "model", QUICK, seed=0
        )
    )
    [only] = result.results
    assert only.failure is not None and only.examples >= 1 and RARE not in only.events, only


def test_bad_input_both_sides_rejected_ran_and_reaches_its_hard_case():
    """Bad input drawn on purpose that the implementation rejected as the model did (`Outcome.both_rejected`)
    ran, and held: it reaches what it aimed at."""
    both = Outcome(ok=True, rejected=True, message="both rejected it")
    result = run_suite(
        SuiteRequest(
            _suite(lambda impl, hs: [both for _ in hs]), ModelImplementation(), "model", QUICK, seed=0
        )
    )
    [only] = result.results
    assert only.verdict is Verdict.HELD and only.events[RARE] >= 1 and result.missing_events == (), only


@pytest.mark.parametrize("kill", [False, True], ids=["crash", "sigkill"])
@pytest.mark.parametrize("event", streaming.SUITE.required_events)
def test_each_streaming_directed_history_reaches_its_hard_case(event, kill):
    for seed in range(30):
        history = streaming.directed_with_kills(kill)[event](RandomSource(seed), "partitioned")
        found = set(aimed_at(history))
        assert event in found | {e.removesuffix(" (SIGKILL)") for e in found}, (seed, history)


def test_every_streaming_property_is_directed_at_every_required_hard_case():
    for prop in streaming.SUITE.properties:
        assert set(prop.directed) == set(streaming.SUITE.required_events), prop.name
