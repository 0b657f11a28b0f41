"""Frontiers as `array<time>` columns, with Spark's higher-order functions.

Mirrors the model's antichain vocabulary (`model.antichain`): `less_equal`
(some element `<=` the time: the time is beyond the frontier), `advance_by`, `minimal` (the antichain of an array), and frontier
`meet`/`join`. Each takes the domain's `TimeColumns`.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_impl.time_columns import TimeColumns


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
