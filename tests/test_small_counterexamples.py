"""Counterexamples as small in every lane: a Hypothesis-lane failure is delta-debugged over its actions too.

The planted bug: product times compared as Python tuples (lexicographically), so
`(0, 1) <= (1, 0)` holds and a read at `(1, 0)` sees an update at `(0, 1)`. Two
actions show it (an update, a read); Hypothesis alone used to stop at 8 (six
identical updates) under `ci`.
"""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, advance_collection, at, consolidate
from frontier_harness.model.time.domains import Product
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Speed
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.run import Run
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.search import hypothesis_lane
from tests.planted import LexicographicProduct

COLLECTIONS = get_suite("collections")
PRODUCT = "product(total,total)"


class TupleOrder(Implementation):
    """The collections pipeline with product times ordered as Python tuples."""

    name = "tuple-order"

    def observe_collections(self, domain, histories):
        if isinstance(domain, Product):
            domain = LexicographicProduct(domain.a, domain.b)
        return [_observe(domain, h) for h in histories]


class BatchedTupleOrder(TupleOrder):
    speed = Speed.BATCHED


def _observe(domain, history: History) -> dict:
    updates, observed = [], {}
    for step, action in enumerate(history.actions):
        args = action.args
        if action.name == "update":
            updates.append(Update(args["data"], args["time"], args["diff"]))
        elif action.name == "read":
            observed[(step, "read")] = frozenset(at(domain, updates, args["time"]).items())
        else:
            updates = advance_collection(domain, updates, Antichain.checked(domain, args["since"]))
    final = consolidate(domain, updates)
    observed[(len(history.actions), "final")] = frozenset((u.data, u.time, u.diff) for u in final)
    return observed


@pytest.mark.parametrize(
    "impl", [TupleOrder(), BatchedTupleOrder()], ids=["hypothesis first", "screen first"]
)
def test_the_tuple_order_bug_under_ci_is_at_most_3_steps(impl):
    result = run_suite(SuiteRequest(COLLECTIONS, impl, "tuple-order", PROFILES["ci"], 0, [PRODUCT]))
    failure = result.results[0].failure
    assert failure is not None
    assert failure.lane == ("hypothesis" if impl.speed is Speed.IN_PROCESS else "screening")
    assert len(failure.history.actions) <= 3, failure.history


def test_through_the_hypothesis_lane_alone_it_is_at_most_3_steps():
    profile = attrs.evolve(PROFILES["ci"], max_examples=100)
    run = Run(COLLECTIONS, COLLECTIONS.properties[0], TupleOrder(), "tuple-order", PRODUCT, profile, 0)
    failure = hypothesis_lane(run).failure
    assert failure is not None and len(failure.history.actions) <= 3, failure.history
