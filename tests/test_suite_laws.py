"""The laws suite holds on the model and catches each planted bug with a small counterexample."""

from __future__ import annotations

import pytest

from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests import planted
from tests.helpers import QUICK, write_and_replay

LAWS = get_suite("laws")


def test_laws_hold_on_the_model_and_reach_every_hard_case():
    result = run_suite(SuiteRequest(LAWS, ModelImplementation(), "model", PROFILES["ci"], seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


@pytest.mark.parametrize(
    "factory, domain, caught_by",
    [
        ("lex_product", "product(total,total)", "join_is_least_upper_bound"),
        ("empty_is_bottom", "total", "antichain_is_minimal"),
        ("advance_by_joins_all", "product(total,total)", "advance_by_is_sound"),
    ],
)
def test_planted_bug_is_caught_small_and_replays(factory, domain, caught_by, tmp_path):
    impl_name = f"tests.planted:{factory}"
    result = run_suite(
        SuiteRequest(LAWS, getattr(planted, factory)(), impl_name, QUICK, seed=1, domains=[domain])
    )
    failed = {r.property: r.failure for r in result.results if r.failure}
    assert caught_by in failed, f"{factory} not caught by {caught_by}; caught by {sorted(failed)}"
    cx = failed[caught_by]
    # Shrunk: small values (every time drawn from a domain's small range shrinks to 0..2 here).
    assert all(_magnitude(a.args) <= 3 for a in cx.history.actions), cx.history
    assert write_and_replay(cx, tmp_path, impl_name) == 1
    assert write_and_replay(cx, tmp_path, "model") == 0


def _magnitude(args: dict) -> int:
    flat = str(args)
    return max((int(tok) for tok in __import__("re").findall(r"\d+", flat) if len(tok) < 6), default=0)
