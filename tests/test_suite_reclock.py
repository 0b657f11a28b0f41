"""The reclock suite: Spark equals the model in every FromTime domain; planted bugs are caught small."""

from __future__ import annotations

import attrs
import pytest

import frontier_harness.model.reclocking.reclock as reclock_module
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.reclocking.reclock import observe
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.run import Run
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.search import screening_lane
from tests.helpers import QUICK, patched, write_and_replay

RECLOCK = get_suite("reclock")
SPARK_QUICK = attrs.evolve(
    QUICK, batched_examples=2, batch_size=6, batched_screening_histories=400, screening_batch=400
)


def model_off_by_one() -> ModelImplementation:
    """Bug: the model's reclocking with "s not beyond R(t)" read as "no element < s" (off by one)."""

    class Impl(ModelImplementation):
        def observe_reclock(self, domain, histories):
            with patched(
                reclock_module, "reclockable_at", lambda frontier, time: not frontier.less_than(time)
            ):
                return [observe(h) for h in histories]

    return Impl()


def spark_mint_without_retraction():
    """Bug on the Spark side: minting inserts the new upper but never retracts the old one."""
    from pyspark.sql import functions as F

    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.reclocking import remap

    class Impl(SparkImplementation):
        def observe_reclock(self, domain, histories):
            with patched(remap, "retractions", lambda old, new: F.array_except(old, old)):
                return super().observe_reclock(domain, histories)

    return Impl()


def test_planted_model_side_assignment_bug_is_caught_small_and_replays(tmp_path):
    impl_name = "tests.test_suite_reclock:model_off_by_one"
    result = run_suite(SuiteRequest(RECLOCK, model_off_by_one(), impl_name, QUICK, seed=0, domains=["total"]))
    failure = result.results[0].failure
    assert failure is not None
    assert len(failure.history.actions) <= 3, failure.history
    assert write_and_replay(failure, tmp_path, impl_name) == 1


@pytest.mark.spark
def test_spark_equals_model_on_every_domain(spark_session):
    from frontier_harness.properties.adapters.spark import SparkImplementation

    # 500 screened histories a domain (batched_cost 5): enough to reach every boundary case in each
    profile = attrs.evolve(SPARK_QUICK, batched_screening_histories=2500, screening_batch=2500)
    result = run_suite(SuiteRequest(RECLOCK, SparkImplementation(), "spark", profile, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


@pytest.mark.spark
def test_planted_spark_side_bug_is_caught_small_and_replays(spark_session, tmp_path):
    impl_name = "tests.test_suite_reclock:spark_mint_without_retraction"
    # The screening lane: one Spark job finds it, delta debugging (one job per round) reduces it.
    profile = attrs.evolve(SPARK_QUICK, screening_histories=64, screening_batch=64)
    impl = spark_mint_without_retraction()
    impl.prepare()
    failure = screening_lane(
        Run(RECLOCK, RECLOCK.properties[0], impl, impl_name, "total", profile, 0)
    ).failure
    assert failure is not None
    assert len(failure.history.actions) <= 3, failure.history
    assert write_and_replay(failure, tmp_path, impl_name) == 1
    assert write_and_replay(failure, tmp_path, "spark") == 0
