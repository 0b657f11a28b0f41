"""The resumption suite: holds on the model and on Spark; catches its planted bugs with small counterexamples."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import attrs
import pytest

import model.ingestion as ingestion
import model.remap as remap
from properties import counterexample
from properties.cli import main as cli
from properties.implementations import ModelImplementation
from properties.profiles import PROFILES
from properties.runner import run_suite
from properties.suites import get_suite, resumption

SUITE = get_suite("resumption")
QUICK = attrs.evolve(PROFILES["ci"], max_examples=40, screening_histories=600, screening_batch=300)


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


def _broken(module: Any, name: str, value: Any) -> ModelImplementation:
    class Impl(ModelImplementation):
        def observe_ingestion(self, domain, histories):
            with _patched(module, name, value):
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
    result = run_suite(SUITE, ModelImplementation(), "model", QUICK, seed=0)
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


PLANTED = [("commits_r_of_t", 8), ("join_of_uppers", 8), ("compacts_past_data_upper", 10)]


@pytest.mark.parametrize("factory,max_actions", PLANTED)
@pytest.mark.parametrize("domain", resumption.DOMAINS)
def test_planted_bug_is_caught_small(factory, max_actions, domain, tmp_path):
    impl = globals()[factory]()
    result = run_suite(SUITE, impl, "model", QUICK, seed=0, domains=[domain])
    failures = [r.failure for r in result.results if r.failure]
    assert failures, f"{factory} was not caught on {domain}"
    smallest = min(failures, key=lambda f: len(f.history.actions))
    assert len(smallest.history.actions) <= max_actions, smallest.history
    path = counterexample.write(smallest, tmp_path)
    print(factory, domain, smallest.message, [(a.name, a.args) for a in smallest.history.actions])
    assert cli(["replay", str(path), "--impl", f"tests.test_suite_resumption:{factory}"]) == 1


def test_uninterrupted_drops_faults_and_restarts():
    from properties.history import Action, History

    h = History("total", (Action("ingest", {"tick": 1, "fault": "mid_data_write"}), Action("restart", {})))
    assert resumption.uninterrupted(h).actions == (Action("ingest", {"tick": 1}),)


@pytest.mark.spark
def test_suite_holds_on_spark():
    from spark_impl.implementation import SparkImplementation

    profile = attrs.evolve(PROFILES["ci"], spark_examples=2, batch_size=6, screening_histories=120, screening_batch=120)
    result = run_suite(SUITE, SparkImplementation(), "spark", profile, seed=0)
    assert result.passed, [r.failure.message for r in result.results if r.failure]
