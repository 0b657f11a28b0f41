"""The timelines suite: multi-timeline dataflows are rejected naming their inputs; others run (model and Spark)."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.model.errors import TimelineError
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.checks.catalog import timelines as suite
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import QUICK, write_and_replay

TIMELINES = get_suite("timelines")


def accepts_everything() -> ModelImplementation:
    """Bug: the catalog never checks timelines (every dataflow runs)."""
    import frontier_harness.model.catalog.catalog as catalog

    class Impl(ModelImplementation):
        def observe_timelines(self, domain, histories):
            original = catalog.single_timeline
            catalog.single_timeline = lambda owner, timelines: None
            try:
                return [suite.observe(h) for h in histories]
            finally:
                catalog.single_timeline = original

    return Impl()


def confuses_external_and_user() -> ModelImplementation:
    """Bug: timelines compared by name only, so a CDC source's `External(x)` runs with a `User(x)` source."""
    import frontier_harness.model.catalog.catalog as catalog

    original = catalog.single_timeline

    def by_name(owner, timelines):
        present = {n: t for n, t in timelines.items() if t is not None}
        if len({getattr(t, "name", repr(t)) for t in present.values()}) > 1:
            raise TimelineError(owner, present)
        return next(iter(present.values()), None)

    class Impl(ModelImplementation):
        def observe_timelines(self, domain, histories):
            catalog.single_timeline = by_name
            try:
                return [suite.observe(h) for h in histories]
            finally:
                catalog.single_timeline = original

    return Impl()


def test_suite_holds_on_the_model_and_reaches_every_hard_case():
    result = run_suite(
        SuiteRequest(
            TIMELINES, ModelImplementation(), "model", attrs.evolve(QUICK, screening_histories=1000), seed=0
        )
    )
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


def test_rejection_message_names_every_object():
    from frontier_harness.model.catalog.catalog import Catalog, Source, Table, View
    from frontier_harness.model.catalog.plan import Get, Join

    c = Catalog().add(Table("t")).add(Source.create("c", "cdc")).add(View("v", Get("t")))
    with pytest.raises(TimelineError) as error:
        c.add(View("w", Join(Get("v"), Get("c"), ())))
    assert suite.named_in_message(error.value) == {("t", "EpochMilliseconds()"), ("c", "External(name='c')")}


def test_planted_missing_timeline_check_is_caught_small(tmp_path):
    name = "tests.test_suite_timelines:accepts_everything"
    only = attrs.evolve(TIMELINES, properties=(TIMELINES.property("multi_timeline_rejected_single_runs"),))
    profile = attrs.evolve(QUICK, max_examples=30, batch_size=2, screening_histories=1000)
    failure = (
        run_suite(SuiteRequest(only, accepts_everything(), name, profile, seed=0, fail_fast=True))
        .results[0]
        .failure
    )
    assert failure is not None
    assert len(failure.history.actions) <= 5, failure.history
    assert write_and_replay(failure, tmp_path, name) == 1


@pytest.mark.spark
def test_spark_equals_model(spark_session):
    profile = attrs.evolve(QUICK, batched_examples=6, batched_screening_histories=400, screening_batch=400)
    result = run_suite(SuiteRequest(TIMELINES, SparkImplementation(), "spark", profile, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


def test_planted_external_and_user_of_one_name_confused_is_caught_small(tmp_path):
    """`External(s0)` and `User(s0)` are two timelines: a dataflow reading both must be rejected."""
    name = "tests.test_suite_timelines:confuses_external_and_user"
    only = attrs.evolve(TIMELINES, properties=(TIMELINES.property("multi_timeline_rejected_single_runs"),))
    profile = attrs.evolve(QUICK, max_examples=30, batch_size=2, screening_histories=2000)
    failure = (
        run_suite(SuiteRequest(only, confuses_external_and_user(), name, profile, seed=0, fail_fast=True))
        .results[0]
        .failure
    )
    assert failure is not None
    assert len(failure.history.actions) <= 5, failure.history
    assert write_and_replay(failure, tmp_path, name) == 1
