"""The restart suite: restarts are identical, transactions publish in order, and the planted order bug is caught."""

from __future__ import annotations

import frontier_harness.model.reclocking.summary as summary_module
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import QUICK, write_and_replay

RESTART = get_suite("restart")


def test_restart_laws_hold_and_reach_the_hard_cases():
    result = run_suite(SuiteRequest(RESTART, ModelImplementation(), "model", QUICK, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


def test_planted_transaction_emitted_before_an_earlier_incomplete_one(monkeypatch, tmp_path):
    monkeypatch.setattr(summary_module, "earlier_complete", lambda record, pool, complete, domain: True)
    result = run_suite(
        SuiteRequest(RESTART, ModelImplementation(), "model", QUICK, seed=1, domains=["total"])
    )
    failure = next(r.failure for r in result.results if r.property == "transactional_transactions_in_order")
    assert failure is not None
    assert len(failure.history.actions) <= 5, failure.history
    assert write_and_replay(failure, tmp_path, "model") == 1
