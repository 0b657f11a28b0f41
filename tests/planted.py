"""Deliberately broken implementations: every suite must catch its planted bugs.

Each factory is importable as `--impl tests.planted:NAME`, so a counterexample
file written against one replays on the CLI.
"""

from __future__ import annotations

from typing import Any

from model.antichain import Antichain
from model.domains import Product
from properties.adapters.model import ModelImplementation
from tests.helpers import patched


class LexicographicProduct(Product):
    """Bug: pairs compared lexicographically instead of coordinate-wise."""

    def le(self, x: tuple, y: tuple) -> bool:
        return x <= y


class EmptyIsBottom(Antichain):
    """Bug: the empty antichain treated as the bottom (everything beyond it) instead of the top."""

    def less_equal(self, time: Any) -> bool:
        return self.is_empty() or super().less_equal(time)


def lex_product() -> ModelImplementation:
    class Impl(ModelImplementation):
        def time_domain(self, name: str):
            d = super().time_domain(name)
            return LexicographicProduct(d.a, d.b) if name.startswith("product") else d

    return Impl()


def empty_is_bottom() -> ModelImplementation:
    class Impl(ModelImplementation):
        def antichain(self, domain, times):
            return EmptyIsBottom.of(domain, times)

    return Impl()


def advance_by_joins_all() -> ModelImplementation:
    """Bug: `advance_by` joins the time with every frontier element instead of meeting the joins."""

    class Impl(ModelImplementation):
        def advance_by(self, time, frontier):
            for f in frontier:
                joined = frontier.domain.join(time, f)
                time = joined if joined is not None else time
            return time

    return Impl()


def model_keeps_zero_diffs() -> ModelImplementation:
    """Bug: the model's collections with a consolidation that keeps zero diffs."""
    from model import collection
    from properties.suites import collections as suite

    class Impl(ModelImplementation):
        def observe_collections(self, domain, histories):
            with patched(suite, "consolidate", _consolidate_keeping_zeros(collection.consolidate)):
                return [suite.observe(h) for h in histories]

    return Impl()


def _consolidate_keeping_zeros(consolidate):
    def broken(domain, updates):
        updates = list(updates)
        kept = consolidate(domain, updates)
        cancelled = {(u.data, u.time) for u in updates} - {(u.data, u.time) for u in kept}
        from model.collection import Update

        return kept + [Update(data, time, 0) for data, time in sorted(cancelled, key=repr)]

    return broken


def spark_keeps_zero_diffs() -> Any:
    """Bug on the Spark side: consolidation without the `diff != 0` filter."""
    from pyspark.sql import functions as F

    from properties.adapters.spark import SparkImplementation
    from spark_impl import collection

    def consolidate(updates, keys=("history_id",)):
        return updates.groupBy(*keys, "data", "time").agg(F.sum("diff").alias("diff"))

    class Impl(SparkImplementation):
        def observe_collections(self, domain, histories):
            with patched(collection, "consolidate", consolidate):
                return collection.observe_collections(domain, histories)

    return Impl()


def spark_jvm_killed() -> Any:
    """Infrastructure, not a bug: SIGKILLs the Spark JVM before every job."""
    return _jvm_killer(times=None)


def spark_jvm_killed_once() -> Any:
    """A flaky infrastructure failure: the JVM dies once; the runner's one retry recovers."""
    return _jvm_killer(times=1)


def _jvm_killer(times: Any) -> Any:
    import os
    import signal

    from pyspark import SparkContext

    from properties.adapters.spark import SparkImplementation

    class Impl(SparkImplementation):
        kills = 0

        def observe_collections(self, domain, histories):
            if times is None or Impl.kills < times:
                Impl.kills += 1
                os.kill(SparkContext._gateway.proc.pid, signal.SIGKILL)
            return super().observe_collections(domain, histories)

    return Impl()
