"""The ttl_spark_state suite on Spark: it holds on the TTL store over `transformWithState`, and a planted
processor that serves a value after its expiry is caught through the suite's own search and shrinking.

The planted processor keeps a copy of each value in a second value state without a TTL and answers a
get from it once the TTL'd one has expired: `--impl tests.test_suite_ttl_spark_state:copy_kept`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import attrs
import pytest
from pyspark import cloudpickle

from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import run_suite
from frontier_harness.spark_impl.ttl.state.processor import TtlProcessor
from frontier_harness.spark_impl.ttl.state.store import observe_ttl_spark_state
from tests.helpers import write_and_replay

pytestmark = pytest.mark.spark
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Spark's Python workers cannot import tests/


class CopyKeepingProcessor(TtlProcessor):
    """Bug: a copy of every value in a state without TTL, served once the TTL'd value has expired."""

    def init(self, handle: Any) -> None:
        super().init(handle)
        self.copy = handle.getValueState("copy", "value string")

    def put(self, value: str) -> None:
        super().put(value)
        self.copy.update((value,))

    def delete(self) -> None:
        super().delete()
        self.copy.clear()

    def get(self) -> str | None:
        found = super().get()
        kept = self.copy.get()
        return found if found is not None or kept is None else kept[0]


class CopyKept(SparkImplementation):
    def observe_ttl_spark_state(self, domain: Any, histories: Sequence[Any]) -> list[dict]:
        return observe_ttl_spark_state(domain, histories, processor=CopyKeepingProcessor)


def copy_kept() -> CopyKept:
    return CopyKept()


@pytest.mark.slow  # real micro-batches spaced in real time: a query per shrinking call
def test_a_processor_serving_expired_copies_is_caught_small_and_replays(tmp_path):
    profile = attrs.evolve(PROFILES["ci"], shrink_seconds=600)
    result = run_suite(
        get_suite("ttl_spark_state"),
        copy_kept(),
        "tests.test_suite_ttl_spark_state:copy_kept",
        profile,
        seed=0,
    )
    [failure] = [r.failure for r in result.results if r.failure]
    assert "get at step" in failure.message, failure.message
    assert len(failure.history.actions) <= 7, failure.history.actions
    assert write_and_replay(failure, tmp_path, "tests.test_suite_ttl_spark_state:copy_kept") == 1
