"""The temporal suite: Spark's plans equal the model's; a retraction at `upper` is caught on both sides."""

from __future__ import annotations

import attrs
import pytest

import frontier_harness.model.catalog.temporal as temporal
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.checks.catalog import temporal as suite
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.spark_impl.catalog import plan as spark_plan
from tests.helpers import QUICK, write_and_replay

TEMPORAL = get_suite("temporal")
MODEL_SIDE = attrs.evolve(QUICK, screening_histories=500)  # Hypothesis first, then 500 screened


def model_retracts_at_upper() -> ModelImplementation:
    """Bug: the model's plans with the retraction at `upper` instead of `upper_exclusive`."""

    class Impl(ModelImplementation):
        def observe_temporal(self, domain, histories):
            original = temporal.upper_exclusive
            temporal.upper_exclusive = lambda op, bound: bound
            try:
                return [suite.observe(h) for h in histories]
            finally:
                temporal.upper_exclusive = original

    return Impl()


def spark_retracts_at_upper() -> SparkImplementation:
    """Bug on the Spark side: `upper_exclusive` is the bound itself for `<=` too."""

    class Impl(SparkImplementation):
        def observe_temporal(self, domain, histories):
            original = spark_plan.upper_exclusive
            spark_plan.upper_exclusive = lambda op, bound: bound
            try:
                return spark_plan.observe_temporal(domain, histories)
            finally:
                spark_plan.upper_exclusive = original

    return Impl()


def test_the_model_reaches_every_hard_case():
    """The reach only: the suite compares with the model, so the model's verdict on itself says nothing."""
    result = run_suite(
        SuiteRequest(
            TEMPORAL, ModelImplementation(), "model", attrs.evolve(QUICK, screening_histories=500), seed=0
        )
    )
    assert result.missing_events == ()


def test_planted_model_side_retraction_at_upper_is_caught_small(tmp_path):
    name = "tests.test_suite_temporal:model_retracts_at_upper"
    failure = (
        run_suite(SuiteRequest(TEMPORAL, model_retracts_at_upper(), name, MODEL_SIDE, seed=0, fail_fast=True))
        .results[0]
        .failure
    )
    assert failure is not None
    assert len(failure.history.actions) <= 4, failure.history
    assert write_and_replay(failure, tmp_path, name) == 1


@pytest.mark.spark
def test_spark_equals_model(spark_session):
    profile = attrs.evolve(QUICK, batched_examples=6, batched_screening_histories=400, screening_batch=400)
    result = run_suite(SuiteRequest(TEMPORAL, SparkImplementation(), "spark", profile, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


@pytest.mark.spark
def test_planted_spark_side_retraction_at_upper_is_caught_small(spark_session, tmp_path):
    """The model-side search finds 3-action counterexamples (above); shrinking through Spark takes minutes
    on 2 cores, so the Spark-side bug is checked on such a counterexample and replayed on the CLI."""
    from frontier_harness.properties.engine.counterexample import Counterexample
    from frontier_harness.properties.engine.history import Action, History

    get = {"node": "get", "name": "a"}
    history = History(
        "total",
        (
            Action("create_table", {"name": "a"}),
            Action("insert", {"table": "a", "row": [1, 1], "time": 0, "diff": 1}),
            Action(
                "query",
                {"plan": {"node": "temporal", "input": get, "predicates": [["<=", 0, 0]]}, "until": ()},
            ),
        ),
    )
    name = "tests.test_suite_temporal:spark_retracts_at_upper"
    (outcome,) = TEMPORAL.properties[0].check(spark_retracts_at_upper(), [history])
    assert not outcome.ok and outcome.step == 2, outcome
    failure = Counterexample("temporal", "plans_match_model", history, name, outcome.message, outcome.step)
    assert write_and_replay(failure, tmp_path, name) == 1
    assert write_and_replay(failure, tmp_path, "spark") == 0
