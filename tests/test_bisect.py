"""A batch that raises is bisected: one bad history among 10,000 costs about 2*log2(n) calls, then shrinks.

The implementation is a batched fake (`Speed.BATCHED`, in process, counting its
calls), so `ci` screens first exactly as it does against Spark, without Spark.
"""

from __future__ import annotations

import math
import random
import time

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.time import collections
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.batch import check_batch
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.source import RecordingSource
from frontier_harness.properties.engine.suite import Property, Suite, differential
from tests.raising_impl import FiveReads

COLLECTIONS = get_suite("collections")
N = 10_000


def _screened() -> list[History]:
    """The 10,000 histories `ci` screens first for collections on total with seed 0."""
    rng = random.Random(0)
    return [draw_collection_history(RecordingSource(rng), "total") for _ in range(N)]


def test_one_raising_history_in_10000_is_found_in_about_2_log2_n_calls():
    impl, histories = FiveReads(), _screened()
    outcomes = check_batch(COLLECTIONS.properties[0], impl, histories, COLLECTIONS)
    failing = [i for i, o in enumerate(outcomes) if not o.ok and not o.unresolved]
    assert len(failing) == 1, [outcomes[i].message for i in failing]
    assert all(o.ok for o in outcomes[: failing[0]]), "a history before the raising one was not checked"
    outcome = outcomes[failing[0]]
    assert outcome.message.startswith("implementation raised ValueError: five reads at one time")
    assert outcome.trace and "FIVE-READS" in outcome.trace[-1]
    assert impl.calls <= 1 + 2 * math.ceil(math.log2(N)), impl.calls


def test_ci_screens_bisects_and_shrinks_the_raising_history():
    started = time.perf_counter()
    impl = FiveReads()
    result = run_suite(
        SuiteRequest(COLLECTIONS, impl, "tests.raising_impl:five_reads", PROFILES["ci"], 0, ["total"])
    )
    failure = result.results[0].failure
    assert failure is not None and failure.lane == "screening"
    assert failure.message.startswith("implementation raised ValueError"), failure.message
    assert [a.name for a in failure.history.actions] == ["read"] * 5, failure.history
    assert any("FIVE-READS" in line for line in failure.trace)
    print(f"ci: counterexample in {time.perf_counter() - started:.1f}s, {impl.calls} calls")


def _raises_on_five_reads(history: History) -> dict:
    times = [a.args["time"] for a in history.actions if a.name == "read"]
    if any(times.count(t) >= 5 for t in times):
        raise KeyError("the model cannot read this")
    return collections.observe(history)


def test_an_exception_of_the_model_on_a_generated_history_is_a_generator_model_disagreement():
    class Model(FiveReads):
        def observe_collections(self, domain, histories):
            self.calls += 1
            return [collections.observe(h) for h in histories]

    prop = Property(
        "p", "", draw_collection_history, differential(_raises_on_five_reads, "observe_collections")
    )
    suite = Suite("collections", "", (prop,), "model", domains=("total",))
    impl = Model()
    outcomes = check_batch(prop, impl, _screened(), suite)
    failing = [o for o in outcomes if not o.ok and not o.unresolved]
    assert len(failing) == 1 and failing[0].disagreement and failing[0].rejected
    assert (
        failing[0].message
        == "generator/model disagreement: the model raised KeyError: 'the model cannot read this'"
    )
    assert impl.calls <= 1 + 2 * math.ceil(math.log2(N))


def test_a_rejected_batch_is_bisected_to_the_histories_the_implementation_rejects():
    """`observe_or_reject`: two rejected histories among 1,000 cost about 4*log2(n) calls, not 1,000."""
    from frontier_harness.model.errors import ModelError
    from frontier_harness.properties.engine.suite import observe_or_reject

    class RejectsTwo(FiveReads):
        def observe_collections(self, domain, histories):
            self.calls += 1
            if any(id(h) in rejected for h in histories):
                raise ModelError("rejected")
            return [collections.observe(h) for h in histories]

    histories = _screened()[:1000]
    # a history the batch holds twice is observed once: reject two it holds once
    unique = [i for i, h in enumerate(histories) if histories.count(h) == 1]
    bad = [unique[5], unique[-5]]
    rejected = {id(histories[i]) for i in bad}
    impl = RejectsTwo()
    observed = observe_or_reject(impl, "observe_collections", histories)
    assert [i for i, o in enumerate(observed) if isinstance(o, ModelError)] == bad
    assert observed[bad[0] - 1] == collections.observe(histories[bad[0] - 1])
    assert impl.calls <= 1 + 4 * math.ceil(math.log2(1000)), impl.calls
