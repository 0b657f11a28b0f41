"""One observation per history a suite run: properties that draw the same histories share each observation.
No Spark: a batched fake that counts its calls."""

from __future__ import annotations

from frontier_harness.properties.checks.time import collections
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.suite import Property, Suite, differential
from tests.raising_impl import FiveReads


class Counting(FiveReads):
    """Batched, counting the histories it observes; never raises."""

    def __init__(self) -> None:
        super().__init__()
        self.observed = 0

    def observe_collections(self, domain, histories):
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
    result = run_suite(SuiteRequest(suite, impl, "counting", PROFILES["ci"], 0))
    assert result.passed
    histories = result.results[0].examples
    assert result.results[1].examples == histories
    assert impl.observed <= histories, (impl.observed, histories)  # each once (a repeated one once in all)
