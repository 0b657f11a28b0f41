"""Deliberately broken implementations: every suite must catch its planted bugs.

Each factory is importable as `--impl tests.planted:NAME`, so a counterexample
file written against one replays on the CLI.
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.time.antichain import Antichain, MutableAntichain
from frontier_harness.model.time.domains import Product
from frontier_harness.properties.adapters.model import ModelImplementation
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
    from frontier_harness.model.time import collection
    from frontier_harness.properties.checks.time import collections as suite

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
        from frontier_harness.model.time.collection import Update

        return kept + [Update(data, time, 0) for data, time in sorted(cancelled, key=repr)]

    return broken


def spark_keeps_zero_diffs() -> Any:
    """Bug on the Spark side: consolidation without the `diff != 0` filter."""
    from pyspark.sql import functions as F

    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.time import collection

    def consolidate(updates, keys=("history_id",)):
        return updates.groupBy(*keys, "data", "time").agg(F.sum("diff").alias("diff"))

    class Impl(SparkImplementation):
        def observe_collections(self, domain, histories):
            with patched(collection, "consolidate", consolidate):
                return collection.observe_collections(domain, histories)

    return Impl()


class KeepsZeroCount(MutableAntichain):
    """Bug: a batch of retractions only lowers counts, so the frontier is not rebuilt after one:
    a time whose count returned to zero stays in it."""

    kept: Any = None

    @property
    def frontier(self) -> Antichain:
        return self.kept if self.kept is not None else super().frontier

    def update_iter(self, updates: Any) -> list:
        updates = list(updates)
        self.kept = None if any(diff > 0 for _, diff in updates) else self.frontier
        return super().update_iter(updates)


class NonNegativeCounts(MutableAntichain):
    """Bug: the frontier counts times with `count >= 0` among every time ever updated (off by one)."""

    touched: frozenset = frozenset()

    @property
    def frontier(self) -> Antichain:
        return Antichain.of(self.domain, [t for t in self.touched if self.count(t) >= 0])

    def update_iter(self, updates: Any) -> list:
        updates, before = list(updates), set(self.frontier)
        super().update_iter(updates)
        self.touched = self.touched | {time for time, _ in updates}
        after = set(self.frontier)
        return [(t, -1) for t in before - after] + [(t, 1) for t in after - before]


class NonMinimalFrontier(MutableAntichain):
    """Bug: the frontier is every time with a positive count, minimal or not."""

    @property
    def frontier(self) -> Antichain:
        return Antichain(self.domain, [t for t, c in self._counts.items() if c > 0])


def _model_with_antichain(broken: type) -> ModelImplementation:
    from frontier_harness.properties.checks.time import mutable_antichain as suite

    class Impl(ModelImplementation):
        def observe_mutable_antichain(self, domain, histories):
            with patched(suite, "MutableAntichain", broken):
                return [suite.observe(h) for h in histories]

    return Impl()


def model_keeps_zero_count() -> ModelImplementation:
    return _model_with_antichain(KeepsZeroCount)


def model_nonnegative_counts() -> ModelImplementation:
    return _model_with_antichain(NonNegativeCounts)


def model_non_minimal_frontier() -> ModelImplementation:
    return _model_with_antichain(NonMinimalFrontier)


def _spark_with_frontiers(name: str, broken: Any) -> Any:
    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.time import frontiers, mutable_antichain

    class Impl(SparkImplementation):
        def observe_mutable_antichain(self, domain, histories):
            with patched(frontiers, name, broken(frontiers)):
                return mutable_antichain.observe_mutable_antichain(domain, histories)

    return Impl()


def spark_keeps_zero_count() -> Any:
    """Bug on the Spark side: summed counts kept with `>= 0`, so a time whose count returned to zero stays."""
    from pyspark.sql import functions as F

    def broken(frontiers: Any) -> Any:
        def positive(updates, keys, time="time"):
            counts = updates.groupBy(*keys, time).agg(F.sum("diff").alias("count"))
            return (
                counts.where(F.col("count") >= 0).groupBy(*keys).agg(F.collect_list(time).alias("frontier"))
            )

        return positive

    return _spark_with_frontiers("positive", broken)


def spark_non_minimal_frontier() -> Any:
    """Bug on the Spark side: the frontier of positive counts without `minimal`."""
    return _spark_with_frontiers(
        "of_positive_counts", lambda frontiers: lambda tc, u, keys: frontiers.positive(u, keys)
    )


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

    from frontier_harness.properties.adapters.spark import SparkImplementation

    class Impl(SparkImplementation):
        kills = 0

        def observe_collections(self, domain, histories):
            if times is None or Impl.kills < times:
                Impl.kills += 1
                os.kill(SparkContext._gateway.proc.pid, signal.SIGKILL)
            return super().observe_collections(domain, histories)

    return Impl()


def complete_one_record_short(pool: Any) -> set[str]:
    """Bug in the model's summary rule `complete_txns`: a transaction is complete one data record short."""
    from collections import Counter

    from frontier_harness.model.reclocking.summary import DataRecord, TxnRecord

    sizes = {r.txn: r.size for r in pool if isinstance(r, TxnRecord)}
    counts = Counter(r.txn for r in pool if isinstance(r, DataRecord))
    return {txn for txn, size in sizes.items() if counts[txn] >= size - 1}


def model_complete_one_record_short() -> ModelImplementation:
    """The model with `complete_one_record_short` in its summaries (the fold oracle is not patched)."""
    from frontier_harness.model.reclocking import summary

    class Impl(ModelImplementation):
        def observe_summary(self, domain, histories):
            with patched(summary, "complete_txns", complete_one_record_short):
                return super().observe_summary(domain, histories)

    return Impl()


def model_read_cache_survives_compaction() -> ModelImplementation:
    """Bug: reads are served from a cache keyed by time that a compaction does not invalidate
    (a user's collections implementation; `dev` and `thorough` on `partitioned` missed it)."""
    from frontier_harness.model.time.antichain import Antichain
    from frontier_harness.model.time.collection import Update, advance_collection, at, consolidate

    def observe(history):
        domain, updates, cache, observed = history.time_domain, [], {}, {}
        for step, action in enumerate(history.actions):
            args = action.args
            if action.name == "update":
                updates.append(Update(args["data"], args["time"], args["diff"]))
                cache.clear()
            elif action.name == "read":
                key = domain.key(args["time"])
                cache.setdefault(key, frozenset(at(domain, updates, args["time"]).items()))
                observed[(step, "read")] = cache[key]
            else:
                updates = advance_collection(domain, updates, Antichain.checked(domain, args["since"]))
        final = consolidate(domain, updates)
        observed[(len(history.actions), "final")] = frozenset((u.data, u.time, u.diff) for u in final)
        return observed

    class Impl(ModelImplementation):
        def observe_collections(self, domain, histories):
            return [observe(h) for h in histories]

    return Impl()
