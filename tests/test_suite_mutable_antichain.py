"""The mutable_antichain suite: the model and Spark hold; planted bugs are caught small and replay."""

from __future__ import annotations

import attrs
import pyarrow as pa
import pytest

from frontier_harness.model.time.domains import Partitioned, PartitionedTime, Product, Total
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.time.mutable_antichain import observe, reference
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.run import Run
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.search import run_property, screening_lane
from tests import planted
from tests.helpers import QUICK, write_and_replay

SUITE = get_suite("mutable_antichain")
REFERENCE = SUITE.property("frontier_is_minimal_positive_counts")
P = PartitionedTime


def _history(*steps: tuple | None) -> History:
    """`(time, diff)` is an update, None an apply."""
    return History(
        "total",
        tuple(
            Action("apply") if s is None else Action("update", {"time": s[0], "diff": s[1]}) for s in steps
        ),
    )


def test_reference_and_model_agree_on_a_retraction_exposing_a_later_time():
    history = _history((1, 1), (3, 1), None, (1, -1), (2, -1))
    expected = {
        (2, "frontier"): frozenset({1}),
        (2, "changes"): frozenset({(1, 1)}),
        (5, "frontier"): frozenset({3}),
        (5, "changes"): frozenset({(1, -1), (3, 1)}),
    }
    assert reference(history) == expected
    assert observe(history) == expected


def test_model_holds_and_reaches_every_hard_case():
    profile = attrs.evolve(QUICK, screening_histories=1000, screening_batch=1000)
    result = run_suite(SuiteRequest(SUITE, ModelImplementation(), "model", profile, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()
    assert sum(r.rejected for r in result.results) == 0


@pytest.mark.parametrize(
    "name, most_actions",
    [("model_keeps_zero_count", 3), ("model_nonnegative_counts", 2), ("model_non_minimal_frontier", 2)],
)
def test_planted_model_bug_is_caught_small_and_replays(name, most_actions, tmp_path):
    impl_name = f"tests.planted:{name}"
    profile = attrs.evolve(QUICK, max_examples=100)
    result = run_suite(
        SuiteRequest(SUITE, getattr(planted, name)(), impl_name, profile, seed=0, domains=["total"])
    )
    failure = result.results[0].failure
    assert failure is not None and failure.property == REFERENCE.name
    assert len(failure.history.actions) <= most_actions, failure.history
    assert write_and_replay(failure, tmp_path, impl_name) == 1
    assert write_and_replay(failure, tmp_path, "model") == 0


def test_screening_lane_finds_and_reduces_a_time_kept_at_zero():
    profile = attrs.evolve(QUICK, screening_histories=2000, screening_batch=1000)
    run = Run(SUITE, REFERENCE, planted.model_keeps_zero_count(), "planted", "partitioned", profile, 0)
    failure = screening_lane(run).failure
    assert failure is not None, "the screening lane never found the planted bug"
    assert failure.lane == "screening"
    assert len(failure.history.actions) <= 3, failure.history


@pytest.mark.spark
@pytest.mark.parametrize(
    "domain, updates, expected",
    [
        (Total(), [(3, 1), (5, 2), (3, -1), (4, 0)], {5}),
        (Total(), [(2, 1), (2, -1)], set()),
        (Total(), [(1, -1), (2, 1)], {2}),  # a negative count hides nothing
        (Product(Total(), Total()), [((0, 2), 1), ((1, 0), 1), ((1, 3), 1), ((0, 2), 1)], {(0, 2), (1, 0)}),
        (
            Partitioned(),
            [(P(0, 9, 0), 1), (P(1, 1, 4), 1), (P(0, 9, 0), -1), (P(2, 2, 1), 1)],
            {P(1, 1, 4), P(2, 2, 1)},
        ),
    ],
)
def test_spark_of_positive_counts(spark_session, domain, updates, expected):
    from frontier_harness.spark_impl.arrow import arrow_type, to_frame
    from frontier_harness.spark_impl.time import frontiers
    from frontier_harness.spark_impl.time.time_columns import time_columns

    tc = time_columns(domain)
    table = pa.table(
        {
            "key": pa.array([7] * len(updates), pa.int64()),
            "time": pa.array([tc.to_row(t) for t, _ in updates], arrow_type(tc.spark_type)),
            "diff": pa.array([d for _, d in updates], pa.int64()),
        }
    )
    rows = frontiers.of_positive_counts(tc, to_frame(table), ["key"]).toArrow().to_pylist()
    assert {tc.from_row(t) for row in rows for t in row["frontier"]} == expected


@pytest.mark.spark
def test_spark_holds_on_every_domain_and_reaches_every_hard_case(spark_session):
    profile = attrs.evolve(QUICK, batched_screening_histories=1000, screening_batch=1000)
    result = run_suite(SuiteRequest(SUITE, SparkImplementation(), "spark", profile, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


@pytest.mark.spark
@pytest.mark.parametrize(
    "name, domain, most_actions",
    [("spark_keeps_zero_count", "total", 2), ("spark_non_minimal_frontier", "product(total,total)", 2)],
)
def test_planted_spark_bug_is_caught_small_and_replays(spark_session, name, domain, most_actions, tmp_path):
    impl_name = f"tests.planted:{name}"
    impl = getattr(planted, name)()
    failure = run_property(
        Run(SUITE, REFERENCE, impl, impl_name, domain, attrs.evolve(QUICK, max_examples=8), 0)
    ).failure
    assert failure is not None
    assert len(failure.history.actions) <= most_actions, failure.history
    assert write_and_replay(failure, tmp_path, impl_name) == 1
    assert write_and_replay(failure, tmp_path, "spark") == 0
