"""A history the model rejects is never a silent pass.

A generated history is valid by construction, so the model rejecting one means
the generator and the model disagree: the run fails with a counterexample. A
property that draws bad input on purpose holds only when the implementation
rejects it with an error of the same kind.
"""

from __future__ import annotations

import attrs

from frontier_harness.model.errors import InvalidTime
from frontier_harness.model.ingestion.ingestion import Reader, offset_resumption
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Total
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.ingestion import resumption
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.junit import write_junit
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.source import Source
from frontier_harness.properties.engine.suite import Property, Suite, differential
from tests.helpers import QUICK, patched

RESUMPTION = get_suite("resumption")


def restart_from_the_minimum(pipeline):
    """Bug in the model: a restart commits its resumption frontier but reads from the minimum offsets."""
    upstream = pipeline.upstream.commit(offset_resumption(pipeline.durable))
    minimum = Antichain.of(upstream.domain, [upstream.domain.minimum])
    return attrs.evolve(
        pipeline, upstream=upstream, reader=Reader(upstream.upper(), tuple(upstream.read(minimum)))
    )


def test_a_model_that_raises_on_valid_resumption_histories_fails_the_run(tmp_path):
    """Today's harness counted these histories as invalid and passed; now each is a failure.

    (Re-reading from the minimum re-appends records at times the data shard already covers.)
    """
    with patched(resumption, "restart", restart_from_the_minimum):
        result = run_suite(
            SuiteRequest(RESUMPTION, ModelImplementation(), "model", QUICK, seed=0, domains=["total"])
        )
    failures = [r.failure for r in result.results if r.failure is not None]
    assert failures, "a model raising CompactedRead on valid histories passed"
    cx = failures[0]
    assert cx.message.startswith("generator/model disagreement"), cx.message
    assert cx.model_said == {(0, "rejected"): frozenset({("UpdateOutsideAppend",)})}, cx.model_said
    assert len(cx.history.actions) <= 8, cx.history
    assert sum(r.rejected for r in result.results) >= 1


def test_rejected_counts_are_in_the_junit_file(tmp_path):
    result = run_suite(
        SuiteRequest(
            get_suite("collections"), ModelImplementation(), "model", QUICK, seed=0, domains=["total"]
        )
    )
    path = tmp_path / "junit.xml"
    write_junit(path, [result], {})
    text = path.read_text()
    assert '<property name="rejected" value="0"' in text and '<property name="histories"' in text


# A property that draws bad input on purpose: a read at a negative time.


def _draw_bad_read(source: Source, domain_name: str) -> History:
    return History(domain_name, (Action("read", {"time": -source.integer(1, 3)}),))


def _observe(history: History) -> dict:
    time = history.actions[0].args["time"]
    Total().validate(time)
    return {(0, "read"): frozenset()}


class _Reads(Implementation):
    name = "reads"

    def __init__(self, refuses: bool):
        self.refuses = refuses

    def observe_reads(self, domain, histories):
        if self.refuses:
            for h in histories:
                Total().validate(h.actions[0].args["time"])
        return [{(0, "read"): frozenset()} for _ in histories]


def _suite(draws_invalid: bool) -> Suite:
    prop = Property(
        "reads", "reads at a time", _draw_bad_read, differential(_observe, "observe_reads", draws_invalid)
    )
    return Suite("reads", "toy", (prop,), "model", domains=("total",))


def test_bad_input_drawn_on_purpose_holds_only_when_the_implementation_rejects_it_the_same_way():
    held = run_suite(SuiteRequest(_suite(True), _Reads(refuses=True), "toy", QUICK, seed=0))
    assert held.passed and held.results[0].rejected == held.results[0].examples
    accepted = run_suite(SuiteRequest(_suite(True), _Reads(refuses=False), "toy", QUICK, seed=0))
    failure = accepted.results[0].failure
    assert failure is not None and "the implementation accepted it" in failure.message
    assert len(failure.history.actions) == 1


def test_bad_input_not_declared_is_a_generator_model_disagreement():
    result = run_suite(SuiteRequest(_suite(False), _Reads(refuses=True), "toy", QUICK, seed=0))
    failure = result.results[0].failure
    assert failure is not None and failure.message.startswith("generator/model disagreement")


def test_an_implementation_rejecting_a_valid_history_fails():
    def observe_refusing(histories: list[History]) -> list:
        raise InvalidTime(0, "total")

    class Refuses(Implementation):
        name = "refuses"

        def observe_collections(self, domain, histories):
            return observe_refusing(histories)

    result = run_suite(
        SuiteRequest(get_suite("collections"), Refuses(), "toy", QUICK, seed=0, domains=["total"])
    )
    failure = result.results[0].failure
    assert failure is not None and "InvalidTime" in failure.message
