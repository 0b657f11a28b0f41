"""One observation per history a suite run: properties that draw the same histories share each observation,
and a batched implementation observes while the model does. No Spark: a batched fake that counts its calls."""

from __future__ import annotations

import threading

from frontier_harness.properties.checks.time import collections
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import run_suite
from frontier_harness.properties.engine.suite import Property, Suite, differential
from tests.raising_impl import FiveReads


class Counting(FiveReads):
    """Batched, counting the histories it observes; never raises."""

    def __init__(self) -> None:
        super().__init__()
        self.observed = 0
        self.started = threading.Event()

    def observe_collections(self, domain, histories):
        self.started.set()
        self.calls += 1
        self.observed += len(histories)
        return [collections.observe(h) for h in histories]


def _suite(*checks) -> Suite:
    props = tuple(Property(f"p{i}", "", draw_collection_history, c) for i, c in enumerate(checks))
    return Suite("collections", "", props, "model", domains=("total",))


def test_two_properties_that_draw_the_same_histories_observe_each_once():
    impl = Counting()
    suite = _suite(
        differential(collections.observe, "observe_collections"),
        differential(collections.observe, "observe_collections"),
    )
    result = run_suite(suite, impl, "counting", PROFILES["ci"], 0)
    assert result.passed
    histories = result.results[0].examples
    assert result.results[1].examples == histories
    assert impl.observed <= histories, (impl.observed, histories)  # each once (a repeated one once in all)


def test_a_batched_implementation_observes_while_the_model_does():
    """The model's observation waits for the implementation's call to start: only concurrently can both end."""
    impl = Counting()

    def model_waiting_for_the_implementation(history):
        assert impl.started.wait(timeout=30), "the implementation was not called while the model computed"
        return collections.observe(history)

    suite = _suite(differential(model_waiting_for_the_implementation, "observe_collections"))
    assert run_suite(suite, impl, "counting", PROFILES["ci"], 0).passed
