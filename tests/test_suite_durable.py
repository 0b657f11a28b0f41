"""The durable_resumption suite: a planted bug in the durable ingestion pipeline is caught small and replays."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import patched, write_and_replay

DURABLE = get_suite("durable_resumption")
# One screening call of 30 histories, as `ci` runs it (40 there).
SMALL = attrs.evolve(PROFILES["ci"], batched_screening_histories=30 * 250, shrink_seconds=20.0)


def compacts_past_data_upper():
    """Bug in the durable pipeline: the remap compacted up to its own upper, past the data shard's."""
    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.ingestion import ingestion

    class Impl(SparkImplementation):
        def observe_durable_resumption(self, domain, histories):
            with patched(ingestion, "compaction_target", lambda data_upper, remap_upper: remap_upper):
                return super().observe_durable_resumption(domain, histories)

    return Impl()


@pytest.mark.spark
def test_a_planted_durable_bug_is_caught_small_and_replays(spark_session, tmp_path):
    """That the pipeline holds is `test_suite_resumption`'s durable test (the suite's one property is the
    same comparison with the model); here, that the suite catches a bug in it small."""
    broken = run_suite(
        SuiteRequest(DURABLE, compacts_past_data_upper(), "spark", SMALL, seed=0, domains=["total"])
    )
    failures = [r.failure for r in broken.results if r.failure]
    assert failures, "compacting past the data shard's upper was not caught"
    smallest = min(failures, key=lambda f: len(f.history.actions))
    assert len(smallest.history.actions) <= 8, smallest.history
    assert write_and_replay(smallest, tmp_path, "tests.test_suite_durable:compacts_past_data_upper") == 1
    assert write_and_replay(smallest, tmp_path, "spark") == 0
