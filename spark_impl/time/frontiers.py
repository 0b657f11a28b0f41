"""Frontiers as `array<time>` columns, with Spark's higher-order functions.

Mirrors the model's antichain vocabulary (`frontier_harness.model.time.antichain`): `less_equal`
(some element `<=` the time: the time is beyond the frontier), `advance_by`,
`minimal` (the antichain of an array), and frontier `meet`/`join`. Each takes
the domain's `TimeColumns`. From updates `(keys..., time, diff)`, `positive` is
the times whose count is positive per key and `of_positive_counts` the frontier
of positive counts per key (what a `MutableAntichain` shows).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from frontier_harness.spark_impl.time.time_columns import TimeColumns


def less_equal(tc: TimeColumns, frontier: Column, time: Column) -> Column:
    """True iff some element of `frontier` is `<= time`: the time is beyond it (still open)."""
    return F.exists(frontier, lambda f: tc.le(f, time))


def advance_by(tc: TimeColumns, time: Column, frontier: Column) -> Column:
    """The meet of `time`'s defined joins with the frontier's elements; unchanged if none."""
    joins = F.filter(F.transform(frontier, lambda f: tc.join(time, f)), lambda j: j.isNotNull())
    folded = F.aggregate(joins, F.element_at(joins, 1), lambda acc, j: tc.meet(acc, j))
    return F.when(F.size(joins) == 0, time).otherwise(folded)


def minimal(tc: TimeColumns, times: Column) -> Column:
    """The antichain of an array: distinct elements with no strictly smaller element."""
    return F.array_distinct(F.filter(times, lambda x: ~F.exists(times, lambda y: tc.lt(y, x))))


def meet(tc: TimeColumns, first: Column, second: Column) -> Column:
    """The earlier frontier: minimal elements of the union."""
    return minimal(tc, F.concat(first, second))


def join(tc: TimeColumns, first: Column, second: Column) -> Column:
    """The later frontier: minimal elements of the defined pairwise joins."""
    pairs = F.flatten(F.transform(first, lambda f: F.transform(second, lambda g: tc.join(f, g))))
    return minimal(tc, F.filter(pairs, lambda j: j.isNotNull()))


def le(tc: TimeColumns, first: Column, second: Column) -> Column:
    """Frontier order: every element of `second` is beyond `first`."""
    return F.forall(second, lambda g: less_equal(tc, first, g))


def positive(updates: DataFrame, keys: Sequence[str], time: str = "time") -> DataFrame:
    """Per `keys`, the times whose diffs sum positive, as an array `frontier`, not minimised.

    A key with no positive time has no row. The remap's accumulations use this
    as it is (as the model's do: a remap that is no antichain stays visible).
    """
    counts = updates.groupBy(*keys, time).agg(F.sum("diff").alias("count")).where(F.col("count") > 0)
    return counts.groupBy(*keys).agg(F.collect_list(time).alias("frontier"))


def of_positive_counts(tc: TimeColumns, updates: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Per `keys`, the frontier of positive counts: the minimal times whose diffs sum positive.

    Updates are `(keys..., time, diff)`; diffs may be negative, and a time whose
    count is zero or negative is not in the frontier and hides nothing.
    """
    return positive(updates, keys).withColumn("frontier", minimal(tc, F.col("frontier")))
