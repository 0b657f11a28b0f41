"""An oracle restates its rule instead of calling the code it judges: resumption's record times are the
seed's offsets, computed apart from the model's upstream log, and agree with it on generated histories."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.ingestion.upstream import Upstream
from frontier_harness.properties.checks.ingestion import resumption
from frontier_harness.properties.checks.ingestion.strategies.ingestion import draw_ingestion_history
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import HypothesisSource


def test_the_record_times_oracle_never_builds_the_models_upstream_log(monkeypatch):
    def called(*args):
        raise AssertionError("the oracle called the model it judges")

    monkeypatch.setattr(Upstream, "empty", called)
    monkeypatch.setattr(Upstream, "produce", called)
    produce = [Action("produce", {"partition": p, "data": d}) for p, d in ((0, "a"), (1, "b"), (0, "c"))]
    times = resumption._record_times(History("partitioned", tuple(produce)))
    assert [(t.lo, t.hi, t.offset) for t in times.values()] == [(0, 0, 0), (1, 1, 0), (0, 0, 1)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["total", "partitioned"]), st.data())
def test_the_restated_record_times_agree_with_the_models_upstream_log(domain, data):
    history = draw_ingestion_history(HypothesisSource(data.draw), domain)
    log = Upstream.empty(history.time_domain)
    for action in history.actions:
        if action.name == "produce":
            log = log.produce(action.args["partition"], action.args["data"])
    assert resumption._record_times(history) == {u.data: u.time for u in log.records()}
