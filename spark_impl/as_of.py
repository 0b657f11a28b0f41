"""The as-of join: each value gets the first step whose monotone bound lies above it, with no sort of the values.

Per key, boundaries `(t, bound)` with `bound` non-decreasing in `t` (null: infinite,
the source closed) cut the values into *intervals*: `[previous bound, bound)` goes
to step `t`. Every value lies in exactly one interval, or beyond the last finite
bound (pending unless the source closed). The intervals are few (one per binding)
and the values many (one per source update), so the intervals are indexed and
broadcast, and each value looks its interval up by a hash join on one `long`; the
values are never sorted or shuffled.

The index is by *level*: an interval of length `L` is filed at level
`k = ceil(log2 L)` under the one or two buckets `v >> k` it overlaps, so a bucket of
any level overlaps at most three intervals of that level, whatever the spread of
lengths (an upper that jumps far ahead adds a level, not a blow-up). A value probes
its bucket at each level its key uses; the two unbounded intervals sit at level
`-1`, bucket `-1` (below every cut) and bucket `1` (from the last cut on).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

BELOW, ABOVE = -1, 1  # the buckets of level -1: values below the first cut, values from the last cut on


def as_of(boundaries: DataFrame, rows: DataFrame, keys: list, value: str) -> DataFrame:
    """`rows` with `into_time`: the first boundary `t` (same `keys`) whose `bound` is `> value`; null: pending.

    `boundaries` `(keys..., t, bound)` must be monotone: a larger `t` never has a smaller bound.
    """
    return as_of_intervals(intervals(boundaries, keys), rows, keys, value)


def as_of_intervals(spans: DataFrame, rows: DataFrame, keys: list, value: str) -> DataFrame:
    """`rows` with `into_time`: the `t` of the interval `(keys..., lo, hi, t)` with `lo <= value < hi` (null
    `lo`, `hi`: unbounded); null when none holds it (pending).

    Per key the intervals must be disjoint and non-empty, as `intervals` makes them, with at most one
    unbounded below and one unbounded above.
    """
    probed = _probes(rows, _key_levels(spans, keys), keys, F.col(value))
    index = _index(spans, keys)
    v = F.col(value)
    inside = F.coalesce(F.col("cut_lo") <= v, F.lit(True)) & F.coalesce(v < F.col("cut_hi"), F.lit(True))
    placed = [*keys, "level", "bucket"]
    on = [slot(placed) == F.col("cut_slot"), *[_same(c) for c in placed], inside]
    joined = probed.join(F.broadcast(index), on=on, how="left")
    # A value's probes at the levels where its interval is not filed find nothing; only a probe above every cut may.
    found = F.col("into_time").isNotNull() | (F.col("level") == -1) & (F.col("bucket") == ABOVE)
    return joined.where(found).drop("level", "bucket", *[c for c in index.columns if c.startswith("cut_")])


def slot(columns: list) -> Column:
    """The one `long` an index entry is hashed under: Spark keeps a single-`long` join key in a compact
    map (`LongHashedRelation`), faster to probe at 100k entries than one keyed by several columns."""
    return F.xxhash64(*columns)


def _same(column: str) -> Column:
    """`column` equal on both sides, written so that Spark checks it after the lookup instead of keying by it
    (an equality would be taken as a join key); it makes a collision of `slot` harmless."""
    mine, cut = F.col(column), F.col(f"cut_{column}")
    return (mine <= cut) & (cut <= mine)


def _index(spans: DataFrame, keys: list) -> DataFrame:
    """The broadcast side: each interval once per place it is filed, with its `slot`, columns renamed `cut_*`
    (both sides of the join may descend from one frame)."""
    entries = spans.select(*keys, "lo", "hi", "t", F.inline(filed(F.col("lo"), F.col("hi"))))
    placed = [*keys, "level", "bucket"]
    return entries.select(
        slot(placed).alias("cut_slot"),
        *[F.col(c).alias(f"cut_{c}") for c in placed],
        F.col("lo").alias("cut_lo"),
        F.col("hi").alias("cut_hi"),
        F.col("t").alias("into_time"),
    )


def intervals(boundaries: DataFrame, keys: list) -> DataFrame:
    """Per key, `(lo, hi, t)`: the values `lo <= v < hi` whose first boundary above them is at `t`.

    `lo` is the previous step's bound (null: unbounded below), `hi` the step's own
    (null once the source closed: unbounded above); empty intervals and the steps
    after the source closed are left out.
    """
    order = Window.partitionBy(*keys).orderBy("t")
    earlier = order.rowsBetween(Window.unboundedPreceding, -1)
    marked = boundaries.select(
        *keys,
        "t",
        F.col("bound").alias("hi"),
        F.lag("bound").over(order).alias("lo"),
        F.coalesce(F.max(F.col("bound").isNull().cast("int")).over(earlier), F.lit(0)).alias("closed_before"),
    )
    nonempty = F.col("lo").isNull() | F.col("hi").isNull() | (F.col("lo") < F.col("hi"))
    return marked.where((F.col("closed_before") == 0) & nonempty).drop("closed_before")


def level(lo: Column, hi: Column) -> Column:
    """The level of a bounded interval `[lo, hi)`: `ceil(log2(hi - lo))`, so it overlaps at most two buckets.

    Needs `lo < hi` and `hi - lo` within a `long`: offsets are non-negative, so it is.
    """
    return F.ceil(F.log2(hi - lo)).cast("int")


def shift(value: Column, k: Column) -> Column:
    """The bucket of `value` at level `k`: `value >> k` (a per-row shift, which `F.shiftright` does not take)."""
    return F.call_function("shiftright", value, k)


def filed(lo: Column, hi: Column) -> Column:
    """Where an interval is filed: `array<struct<level, bucket>>`; a bounded one under each bucket it overlaps."""
    k = level(lo, hi)
    buckets = F.sequence(shift(lo, k), shift(hi - 1, k))
    bounded = F.transform(buckets, lambda b: F.struct(k.alias("level"), b.alias("bucket")))
    below, above = _edge(BELOW), _edge(ABOVE)
    return (
        F.when(lo.isNull() & hi.isNull(), F.concat(below, above))
        .when(lo.isNull(), below)
        .when(hi.isNull(), above)
        .otherwise(bounded)
    )


def _edge(bucket: int) -> Column:
    """The one place at level -1 for an unbounded side: `BELOW` or `ABOVE`."""
    return F.array(F.struct(F.lit(-1).alias("level"), F.lit(bucket).cast("long").alias("bucket")))


def _key_levels(spans: DataFrame, keys: list) -> DataFrame:
    """Per key, a row `(level, first, last)` for each level its bounded intervals are filed at, and one for
    level -1; `first` and `last` are the key's first and last cut (the bounded intervals lie between)."""
    bounded = F.col("lo").isNotNull() & F.col("hi").isNotNull()
    levels = spans.groupBy(*keys).agg(
        F.least(F.min("lo"), F.min("hi")).alias("first"),
        F.greatest(F.max("lo"), F.max("hi")).alias("last"),
        F.array_union(
            F.array(F.lit(-1)), F.collect_set(F.when(bounded, level(F.col("lo"), F.col("hi"))))
        ).alias("levels"),
    )
    return levels.select(
        *[F.col(k).alias(f"key_{k}") for k in keys], "first", "last", F.explode("levels").alias("level")
    )


def _probes(rows: DataFrame, key_levels: DataFrame, keys: list, value: Column) -> DataFrame:
    """`rows` with `(level, bucket)`: one probe per level of the key between its cuts, else one at level -1.

    Plain columns and joins, no arrays: this runs once per update.
    """
    above = F.col("first").isNull() | (value >= F.col("last"))
    outside = above | (value < F.col("first"))
    same = [F.col(k) == F.col(f"key_{k}") for k in keys]
    probed = rows.join(F.broadcast(key_levels), on=[*same, (F.col("level") == -1) == outside], how="left")
    edge = F.when(above, F.lit(ABOVE)).otherwise(F.lit(BELOW)).cast("long")
    bucket = F.when(F.col("level") == -1, edge).otherwise(shift(value, F.col("level")))
    return probed.select(
        *rows.columns,
        F.coalesce(F.col("level"), F.lit(-1)).alias("level"),
        F.coalesce(bucket, F.lit(ABOVE)).alias("bucket"),
    )
