"""The summary suite: Spark's practical-reclocking summaries and restarts equal the model's; planted Spark bugs are caught small."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.model.time.domains import parse_domain
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.reclocking.oracles import summary as fold
from frontier_harness.properties.checks.reclocking.summary import observe
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.run import Run
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.search import screening_lane
from tests import planted
from tests.helpers import QUICK, patched, write_and_replay

SUMMARY = get_suite("summary")
SPARK_QUICK = attrs.evolve(
    QUICK, batched_examples=2, batch_size=6, batched_screening_histories=300, screening_batch=300
)


def test_the_model_agrees_with_itself_and_reaches_every_hard_case():
    result = run_suite(SuiteRequest(SUMMARY, ModelImplementation(), "model", QUICK, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


def test_the_fold_and_the_model_agree_on_a_transaction_waiting_for_its_last_record():
    history = History(
        "product(total,total)",
        (
            Action("txn", {"txn": "t0", "size": 2, "time": (0, 0)}),
            Action("data", {"txn": "t0", "payload": "t0:0", "time": (0, 0)}),
            Action("data", {"txn": "t0", "payload": "t0:1", "time": (2, 0)}),
            Action("mint", {"upper": ((1, 1),), "tick": 1}),
            Action("mint", {"upper": ((3, 1),), "tick": 3}),
            Action("crash", {"tick": 1}),
        ),
    )
    expected = fold.observe(history)
    assert expected[(6, "unordered output")] == {(3, "t0:0", 3, 1), (3, "t0:1", 3, 1)}
    assert (6, "restarted unordered temp") not in expected  # nothing in it: left out, as the model does
    assert {k: v for k, v in observe(history).items() if k[1] in fold.LABELS and v} == expected


def test_planted_model_summary_bug_is_caught_by_the_fold_small_and_replays(tmp_path):
    """The model's own rule broken (on both sides of the model-vs-model comparison): only the fold sees it."""
    from frontier_harness.model.reclocking import summary

    with patched(summary, "complete_txns", planted.complete_one_record_short):
        result = run_suite(
            SuiteRequest(SUMMARY, ModelImplementation(), "model", QUICK, seed=0, domains=["total"])
        )
    failures = [r.failure for r in result.results if r.failure]
    assert [f.property for f in failures] == ["unordered_summary_is_a_fold"]
    # mint, a transaction of two records, its first record, crash: emitted one record short
    assert len(failures[0].history.actions) <= 4, failures[0].history
    assert write_and_replay(failures[0], tmp_path, "tests.planted:model_complete_one_record_short") == 1
    assert write_and_replay(failures[0], tmp_path, "model") == 0


def _spark_with(rule: str, replacement):
    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.reclocking import summary

    class Impl(SparkImplementation):
        def observe_summary(self, domain, histories):
            with patched(summary, rule, replacement):
                return super().observe_summary(domain, histories)

    return Impl()


def spark_ordered_ignores_earlier():
    """Bug on the Spark side: the ordered variant emits a complete transaction before an earlier incomplete one."""
    return _spark_with("emission", lambda meta, steps, heads, head, variant: head["complete"])


def spark_complete_one_record_short():
    """Bug on the Spark side: a transaction counts as complete when all but one of its data records arrived."""
    from pyspark.sql import functions as F

    def complete_at(pool, head):
        mine = F.filter(pool, lambda d: (d["kind"] == "data") & (d["txn"] == head["txn"]))
        arrivals = F.array_sort(F.transform(mine, lambda d: d["arrival"]))
        last = F.when(head["size"] <= 1, head["arrival"]).otherwise(F.get(arrivals, head["size"] - 2))
        return F.when(last.isNotNull(), F.greatest(head["arrival"], last))

    return _spark_with("complete_at", complete_at)


@pytest.mark.spark
def test_spark_equals_model_on_hand_written_histories(spark_session):
    from frontier_harness.spark_impl.reclocking.summary import observe_summary

    def mint(upper, tick):
        return Action("mint", {"upper": tuple(upper), "tick": tick})

    simple = History(
        "total",
        (
            mint([2], 1),
            Action("update", {"data": "a", "time": 1, "diff": 1}),
            Action("update", {"data": "b", "time": 4, "diff": 1}),
            mint([5], 3),
            Action("crash", {"tick": 1}),
        ),
    )
    # t1 is complete at tick 2 but waits (ordered) for t0, whose second data record arrives at tick 3
    txns = History(
        "product(total,total)",
        (
            Action("txn", {"txn": "t0", "size": 2, "time": (0, 0)}),
            Action("txn", {"txn": "t1", "size": 1, "time": (0, 1)}),
            Action("data", {"txn": "t0", "payload": "t0:x", "time": (0, 0)}),
            Action("data", {"txn": "t1", "payload": "t1:y", "time": (1, 0)}),
            Action("data", {"txn": "t0", "payload": "t0:z", "time": (3, 0)}),
            mint([(2, 2)], 2),
            mint([(4, 2)], 3),
            Action("crash", {"tick": 2}),
        ),
    )
    for history in (simple, txns):
        assert observe_summary(parse_domain(history.domain), [history]) == [observe(history)]


@pytest.mark.slow  # the heaviest Spark suite's full screen (nightly); hand-written histories above run always
@pytest.mark.spark
def test_spark_equals_model_on_every_domain(spark_session):
    from frontier_harness.properties.adapters.spark import SparkImplementation

    result = run_suite(SuiteRequest(SUMMARY, SparkImplementation(), "spark", SPARK_QUICK, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


@pytest.mark.spark
@pytest.mark.parametrize(
    "bug",
    # each a Spark job per round of shrinking: minutes (the model-side planted bug above runs in every run)
    [
        pytest.param("spark_ordered_ignores_earlier", marks=pytest.mark.slow),
        pytest.param("spark_complete_one_record_short", marks=pytest.mark.slow),
    ],
)
def test_planted_spark_side_bug_is_caught_small_and_replays(spark_session, tmp_path, bug):
    impl_name = f"tests.test_suite_summary:{bug}"
    # The screening lane: one Spark job finds it, delta debugging (one job per round) reduces it.
    profile = attrs.evolve(SPARK_QUICK, screening_histories=200, screening_batch=200)
    impl = globals()[bug]()
    impl.prepare()
    transactional = SUMMARY.property("transactional_summaries_match_model")
    failure = screening_lane(Run(SUMMARY, transactional, impl, impl_name, "total", profile, 0)).failure
    assert failure is not None
    assert len(failure.history.actions) <= 4, failure.history
    assert write_and_replay(failure, tmp_path, impl_name) == 1
    assert write_and_replay(failure, tmp_path, "spark") == 0
