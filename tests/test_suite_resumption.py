"""The resumption suite: holds on the model and on Spark; catches planted bugs with small counterexamples."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import frontier_harness.model.ingestion.ingestion as ingestion
import frontier_harness.model.reclocking.remap as remap
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.ingestion import resumption
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main as cli
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import patched

SUITE = get_suite("resumption")
QUICK = attrs.evolve(
    PROFILES["ci"],
    max_examples=40,
    screening_histories=600,
    batched_screening_histories=600,
    screening_batch=300,
    screen_first=False,
)


def _broken(module: Any, name: str, value: Any) -> ModelImplementation:
    class Impl(ModelImplementation):
        def observe_resumption(self, domain, histories):
            with patched(module, name, value):
                return [resumption.observe(h) for h in histories]

    return Impl()


def commits_r_of_t() -> ModelImplementation:
    """Bug: inversion counts bindings AT the resumption time (`R(t)`), not only those strictly before it."""
    return _broken(remap, "binding_before", lambda into_time, frontier: not frontier.less_than(into_time))


def join_of_uppers() -> ModelImplementation:
    """Bug: the timestamp resumption frontier is the join of the shards' uppers instead of their meet."""
    return _broken(ingestion, "combine_uppers", lambda data, remap_upper: data.join(remap_upper))


def compacts_past_data_upper() -> ModelImplementation:
    """Bug: the remap is compacted up to its own upper, past the data shard's upper."""
    return _broken(ingestion, "compaction_target", lambda durable: durable.remap.upper)


def test_suite_holds_on_the_model():
    result = run_suite(SuiteRequest(SUITE, ModelImplementation(), "model", QUICK, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


PLANTED = [("commits_r_of_t", 8), ("join_of_uppers", 8), ("compacts_past_data_upper", 10)]


@pytest.mark.parametrize("factory,max_actions", PLANTED)
@pytest.mark.parametrize("domain", resumption.DOMAINS)
def test_planted_bug_is_caught_small(factory, max_actions, domain, tmp_path):
    impl = globals()[factory]()
    result = run_suite(SuiteRequest(SUITE, impl, "model", QUICK, seed=0, domains=[domain]))
    failures = [r.failure for r in result.results if r.failure]
    assert failures, f"{factory} was not caught on {domain}"
    smallest = min(failures, key=lambda f: len(f.history.actions))
    assert len(smallest.history.actions) <= max_actions, smallest.history
    path = counterexample.write(smallest, tmp_path)
    print(factory, domain, smallest.message, [(a.name, a.args) for a in smallest.history.actions])
    assert cli(["replay", str(path), "--impl", f"tests.test_suite_resumption:{factory}"]) == 1


def test_uninterrupted_drops_faults_and_restarts():
    from frontier_harness.properties.engine.history import Action, History

    h = History("total", (Action("ingest", {"tick": 1, "fault": "mid_data_write"}), Action("restart", {})))
    assert resumption.uninterrupted(h).actions == (Action("ingest", {"tick": 1}),)


def spark_join_of_uppers() -> Any:
    """Bug on the Spark side: the timestamp resumption frontier is the join (the later) of the uppers."""
    from pyspark.sql import functions as F

    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.ingestion import ingestion as spark_ingestion

    class Impl(SparkImplementation):
        def observe_resumption(self, domain, histories):
            with patched(spark_ingestion, "combine_uppers", F.greatest):
                return spark_ingestion.observe_resumption(domain, histories)

    return Impl()


def _crash_between_appends(domain: str):
    from frontier_harness.properties.engine.history import Action, History

    return History(
        domain,
        (
            Action("produce", {"partition": 0, "data": "r0"}),
            Action("ingest", {"tick": 1, "fault": "after_remap_append"}),
            Action("restart", {}),
        ),
    )


def _batch(domain: str, n: int, max_steps: int = 24) -> list:
    """Generated histories and a crash between the two appends."""
    from frontier_harness.properties.checks.ingestion.strategies.ingestion import draw_ingestion_history
    from frontier_harness.properties.engine.source import RandomSource

    drawn = [draw_ingestion_history(RandomSource(seed), domain, max_steps) for seed in range(n)]
    return drawn + [_crash_between_appends(domain)]


def _equal_to_the_model_and_lawful(histories: list, observed: list) -> None:
    from frontier_harness.properties.engine.suite import compare

    calm = len(histories)
    for i, h in enumerate(histories):
        outcome = compare(resumption.observe(h), observed[i])
        assert outcome.ok, (outcome.message, h)
        assert resumption.laws(h, observed[i], observed[i + calm]).ok


@pytest.mark.spark
@pytest.mark.parametrize("domain", resumption.DOMAINS)
def test_spark_equals_the_model_and_obeys_the_laws(domain):
    """One Spark job per domain: a batch of generated histories and their uninterrupted runs."""
    from frontier_harness.properties.adapters.spark import SparkImplementation

    histories = _batch(domain, 300)
    calm = [resumption.uninterrupted(h) for h in histories]
    observed = SparkImplementation().observe_resumption(histories[0].time_domain, histories + calm)
    _equal_to_the_model_and_lawful(histories, observed)
    assert set(SUITE.required_in([domain])) <= {e for h in histories for e in resumption.events(h)}


@pytest.mark.spark
@pytest.mark.parametrize(
    # the partitioned domain in every run (it holds the total order's cases), the total one nightly
    "domain",
    [pytest.param(d, marks=pytest.mark.slow) if d == "total" else d for d in resumption.DOMAINS],
)
def test_durable_pipeline_equals_the_model_and_obeys_the_laws(domain, tmp_path):
    """The round-by-round pipeline over Parquet shards, on short histories with both checkpoint orders."""
    from frontier_harness.spark_impl.ingestion.durable_ingestion import observe_durable

    histories = [h for h in _batch(domain, 40, max_steps=10) if _has_compaction(h)][:6]
    histories.append(_crash_after_compaction_before_commit(domain))
    calm = [resumption.uninterrupted(h) for h in histories]
    observed = observe_durable(histories[0].time_domain, histories + calm, tmp_path)
    _equal_to_the_model_and_lawful(histories, observed)


def _has_compaction(history) -> bool:
    return any("remap compact" in e or "before the remap" in e for e in resumption.events(history))


def _crash_after_compaction_before_commit(domain: str):
    from frontier_harness.properties.engine.history import Action, History

    produce = Action("produce", {"partition": 0, "data": "r0"})
    return History(
        domain,
        (
            produce,
            Action("ingest", {"tick": 2}),
            Action("checkpoint", {"compact_first": True, "fault": "after_compaction"}),
            Action("produce", {"partition": 0, "data": "r1"}),
            Action("upstream_compact", {}),
            Action("restart", {}),
            Action("ingest", {"tick": 3}),
        ),
    )


@pytest.mark.spark
def test_spark_planted_join_of_uppers_is_caught_and_replays(tmp_path):
    from frontier_harness.properties.engine.counterexample import Counterexample

    history = _crash_between_appends("total")
    outcome = SUITE.property("resumption_laws").check(spark_join_of_uppers(), [history])[0]
    # Spark's reader re-reads from the data shard, so nothing is lost, but the commit passed the data shard.
    assert not outcome.ok and "covers records not in the data shard: ['r0']" in outcome.message
    cx = Counterexample(
        suite="resumption",
        property="observations_match_model",
        history=history,
        impl="tests.test_suite_resumption:spark_join_of_uppers",
        message=outcome.message,
        step=outcome.step,
        seed=0,
        lane="fixed",
        model_said=None,
        impl_said=None,
    )
    path = counterexample.write(cx, tmp_path)
    assert cli(["replay", str(path), "--impl", "tests.test_suite_resumption:spark_join_of_uppers"]) == 1
