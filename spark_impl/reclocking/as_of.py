"""The as-of join: each value gets the first step whose monotone bound lies above it, with no sort of the values.

Per key, boundaries `(t, bound)` with `bound` non-decreasing in `t` (null: infinite,
the source closed) cut the values into *intervals*: `[previous bound, bound)` goes
to step `t`. Every value lies in exactly one interval, or beyond the last finite
bound (pending unless the source closed). The intervals are few (one per binding)
and the values many (one per source update), so the intervals are indexed and
broadcast, and each value looks its interval up by a hash join on one `long`; the
values are never sorted or shuffled.

The index is by *level*: a bounded interval of length `L` is filed at level
`k = ceil(log2 L)` under the one or two buckets `v >> k` it overlaps, so a bucket of
any level overlaps at most three intervals of that level (one entering it, one inside,
one leaving), whatever the spread of lengths (an upper that jumps far ahead adds a
level, not a blow-up). A value between its key's first and last cut probes its bucket
at each level the key uses; a value outside them needs no probe: the key's row of
levels carries the step of the interval unbounded below (if any) and of the one
unbounded above (the source closed; none: the value is pending). With one level per
key, as when an upper advances by steady amounts, the index's slots are consecutive
and Spark keeps them in an array.

A value finds its key's row of levels by one `long`, the hash of its keys (the keys then
checked, so a collision is harmless): Spark keeps a relation keyed by one `long` in a compact
map and probes it by one lookup when every key has one level; keyed by the key columns, it
built a key row per value and probed a map of byte strings (reclocking 10M updates, side by
side in one process: 1.27x and 1.29x Spark's consolidation of them, against 1.40x and 1.39x).

Each *place* (key, level, bucket) is one row of the index, holding its (at most
three) intervals side by side, so the index's keys are unique: Spark probes a
relation with unique keys by one lookup, and one with repeated keys by an iterator
over the matches (reclocking 10M updates, side by side: 2.26x Spark's consolidation
of them filed one row per interval, 1.98x one row per place). A place's intervals are
gathered by their role in its bucket (entering, inside, leaving), which Spark aggregates
in generated code; a list per place made it sort the places.

The lookup is written for the JIT. Spark fuses the probe, the lookup and the assignment
into one generated method per update, and the JVM's optimizing compiler inlines calls
into a method only up to ~8,000 bytes of bytecode, the method's own counted: past that,
each read of a column of the index (`UnsafeRow.getLong`, `isNullAt`) stays a call. So
the place's check that it holds the value is the join's condition, and the filter that
drops a value's fruitless probes reads only whether the lookup found a place (written on
`into_time`, Spark copied the assignment into the filter); the bucket is not re-checked
(the slot fixes it once the key and level match); the level is never null; each role
keeps only the bounds it needs. The method went from 3,277 to 2,299 bytes and the
compiler's refusals from 26 calls to 8 (none of them a read of the index): reclocking
10M updates ran in 0.93x the time, side by side in one process.

Both broadcast sides are built from the intervals in one task (`coalesce(1)`): the
driver collects them whole anyway. Spread over the shuffle partitions, as a remap
partitioned by point is, a one-point job ran one task per partition, all but one
empty at ~30 ms each, and on 2 cores the second side's build queued behind them.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

# What the index keeps of a place's intervals (at most one per role: `_roles`), by their role in the bucket
# (entering, inside, leaving): a bound that every value of the bucket passes is left out.
ROLE_BOUNDS = (("hi", "t"), ("lo", "hi", "t"), ("lo", "t"))
NO_LEVEL = -1  # the level of a value that probes no place (levels are >= 0)
LOW_BITS = (1 << 20) - 1  # the part of a slot that is the bucket's own


def as_of(boundaries: DataFrame, rows: DataFrame, keys: list, value: str) -> DataFrame:
    """`rows` with `into_time`: the first boundary `t` (same `keys`) whose `bound` is `> value`; null: pending.

    `boundaries` `(keys..., t, bound)` must be monotone: a larger `t` never has a smaller bound.
    """
    return as_of_intervals(intervals(boundaries.coalesce(1), keys), rows, keys, value)


def as_of_intervals(spans: DataFrame, rows: DataFrame, keys: list, value: str) -> DataFrame:
    """`rows` with `into_time`: the `t` of the interval `(keys..., lo, hi, t)` with `lo <= value < hi` (null
    `lo`, `hi`: unbounded); null (pending) when none holds it and the value is above every cut of its key, or
    its key has none. A value below or between the cuts that no interval holds is left out: the intervals
    `intervals` and `total_intervals` make leave no such value.

    Per key the intervals must be disjoint and non-empty, as `intervals` makes them, with at most one
    unbounded below and one unbounded above.
    """
    v, spans = F.col(value), spans.coalesce(1)
    probed = _probes(rows, _levels(spans, keys), keys, v)
    on = [F.col("slot") == F.col("cut_slot"), *[_same(c) for c in [*keys, "level"]], _holds(v)]
    joined = probed.join(F.broadcast(_index(_places(spans, keys), keys)), on=on, how="left")
    inside, below = F.col("inside"), F.coalesce(v < F.col("first"), F.lit(False))
    # A value's probes at the levels where its interval is not filed find no place that holds it; a value
    # above every cut is kept (pending unless the source closed).
    kept = F.when(inside, F.col("cut_slot").isNotNull()).when(below, F.col("below_t").isNotNull())
    into = F.when(inside, _pick(v)).when(below, F.col("below_t")).otherwise(F.col("above_t"))
    return joined.where(kept.otherwise(True)).select(*rows.columns, into.alias("into_time"))


def slot(key_level: Column, bucket: Column) -> Column:
    """The one `long` a place is looked up by: its key and level's hash (`key_level`) xor its bucket. Spark
    keeps a single-`long` join key in a compact map (`LongHashedRelation`), faster to probe than one keyed
    by several columns; the hash is made once per key and level on the probing side, not once per value."""
    return key_level.bitwiseXOR(bucket)


def key_level(keys: list) -> Column:
    """The hash of a key and its `level` that `slot` starts from, its low 20 bits cleared: a key and level's
    consecutive buckets get consecutive slots, so Spark's array of slots is no larger than the places
    (xor-ed with all 64 bits of the hash, they scattered over a range several times wider: 0.3 CPU-s more
    of reclocking's main stage at 10M updates, median of five side by side)."""
    return F.xxhash64(*keys, "level").bitwiseAND(F.lit(~LOW_BITS))


def _same(column: str, prefix: str = "cut_") -> Column:
    """`column` equal on both sides (the other side's named `prefix + column`), written so that Spark checks it
    after the lookup instead of keying by it (an equality would be taken as a join key). So a collision of the
    hash looked up by is harmless: with the keys (and the level) checked, an equal slot means an equal bucket."""
    mine, theirs = F.col(column), F.col(f"{prefix}{column}")
    return (mine <= theirs) & (theirs <= mine)


def _holds(value: Column) -> Column:
    """Whether one of the place's intervals holds `value` (a value of the place's bucket): the one entering
    the bucket if `value` is below its `hi`, the one inside it if `lo <= value < hi`, the one leaving it if
    `value` is not below its `lo` (null, false: the place has no such interval)."""
    entering, leaving = value < F.col("cut_hi0"), F.col("cut_lo2") <= value
    return entering | ((F.col("cut_lo1") <= value) & (value < F.col("cut_hi1"))) | leaving


def _pick(value: Column) -> Column:
    """The `t` of the place's interval that holds `value`, given that one does (`_holds`): the intervals are
    disjoint and in order, so the first whose `hi` lies above `value` (the leaving one has none)."""
    return (
        F.when(value < F.col("cut_hi0"), F.col("cut_t0"))
        .when(value < F.col("cut_hi1"), F.col("cut_t1"))
        .otherwise(F.col("cut_t2"))
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
    """The level of a bounded interval `[lo, hi)`: `k = ceil(log2(hi - lo))`, so `2^(k-1) < hi - lo <= 2^k`
    and it overlaps at most two buckets of its level.

    Exact: `log2` of a length beyond a double's 53 bits can be off by one (`2^53 + 2` reads as
    `2^53`), so the guess is corrected against powers of two. Needs `lo < hi` and `hi - lo`
    within a `long`: offsets are non-negative, so it is.
    """
    length = hi - lo
    guess = F.ceil(F.log2(length)).cast("int")
    return (
        F.when((guess < 63) & (_power(guess) < length), guess + 1)
        .when((guess > 0) & (_power(guess - 1) >= length), guess - 1)
        .otherwise(guess)
    )


def _power(k: Column) -> Column:
    """`2^k` as a `long`, for `0 <= k <= 62`."""
    return F.call_function("shiftleft", F.lit(1).cast("long"), k)


def shift(value: Column, k: Column) -> Column:
    """The bucket of `value` at level `k`: `value >> k` (a per-row shift, which `F.shiftright` does not take)."""
    return F.call_function("shiftright", value, k)


def filed(lo: Column, hi: Column, k: Column) -> Column:
    """The buckets that a bounded interval of level `k` is filed under: the one or two it overlaps."""
    first, last = shift(lo, k), shift(hi - 1, k)
    return F.when(first == last, F.array(first)).otherwise(F.array(first, last))


def _places(spans: DataFrame, keys: list) -> DataFrame:
    """`(keys..., lo, hi, t, level, bucket)`: each bounded interval once per place it is filed at."""
    lo, hi, k = F.col("lo"), F.col("hi"), F.col("level")
    bounded = spans.where(lo.isNotNull() & hi.isNotNull())
    leveled = bounded.select(*keys, "lo", "hi", "t", level(lo, hi).alias("level"))
    return leveled.select(*keys, "lo", "hi", "t", "level", F.explode(filed(lo, hi, k)).alias("bucket"))


def _levels(spans: DataFrame, keys: list) -> DataFrame:
    """Per key, one row per level it files intervals at (one row with a null level if it has no bounded
    interval): `(key_*..., level, key_level, first, last, below_t, above_t, lowest)`. `first` and `last` are
    the key's first and last cut, `below_t` and `above_t` the steps of its intervals unbounded below and
    above (null: none), `lowest` its lowest level: a value outside the cuts takes that level's row only."""
    lo, hi, t = F.col("lo"), F.col("hi"), F.col("t")
    bounded_level = F.when(lo.isNotNull() & hi.isNotNull(), level(lo, hi)).alias("level")
    per_level = spans.groupBy(*keys, bounded_level).agg(
        F.least(F.min(lo), F.min(hi)).alias("first"),
        F.greatest(F.max(lo), F.max(hi)).alias("last"),
        F.max(F.when(lo.isNull(), t)).alias("below_t"),
        F.max(F.when(hi.isNull(), t)).alias("above_t"),
    )
    key = Window.partitionBy(*keys)
    whole = per_level.select(
        *[F.col(k).alias(f"key_{k}") for k in keys],
        "level",
        key_level(keys).alias("key_level"),
        F.min("first").over(key).alias("first"),
        F.max("last").over(key).alias("last"),
        F.max("below_t").over(key).alias("below_t"),
        F.max("above_t").over(key).alias("above_t"),
        F.min("level").over(key).alias("lowest"),
    )
    return whole.where(F.col("level").isNotNull() | F.col("lowest").isNull())


def _index(places: DataFrame, keys: list) -> DataFrame:
    """The broadcast side: one row per place `(keys..., level, bucket)`, with its `slot` and the (at most
    three) intervals filed there by their role in the bucket (`_roles`; null: none): the one entering
    it as `cut_hi0`, `cut_t0` (its `lo` lies below every value of the bucket), the one inside as `cut_lo1`,
    `cut_hi1`, `cut_t1`, the one leaving as `cut_lo2`, `cut_t2` (its `hi` lies above them). Columns renamed
    `cut_*` (both sides of the join may descend from one frame)."""
    placed = [*keys, "level", "bucket"]
    held = [
        F.max(F.when(role, F.col(name))).alias(f"cut_{name}{i}")
        for i, role in enumerate(_roles(F.col("lo"), F.col("hi"), F.col("level"), F.col("bucket")))
        for name in ROLE_BOUNDS[i]
    ]
    packed = places.groupBy(*placed).agg(*held)
    return packed.select(
        slot(key_level(keys), F.col("bucket")).alias("cut_slot"),
        *[F.col(c).alias(f"cut_{c}") for c in keys],
        _comparable_level().alias("cut_level"),
        *[f"cut_{name}{i}" for i, bounds in enumerate(ROLE_BOUNDS) for name in bounds],
    )


def _comparable_level() -> Column:
    """`level`, or `NO_LEVEL` where it is null (no bounded interval): both sides of the lookup write it so, and
    the lookup compares it without null checks."""
    return F.coalesce(F.col("level"), F.lit(NO_LEVEL))


def _roles(lo: Column, hi: Column, k: Column, bucket: Column) -> list[Column]:
    """Whether the interval `[lo, hi)` of level `k` enters `bucket` (starts in an earlier one), lies inside
    it, or leaves it (ends in a later one). No interval does two (none is longer than a bucket), and each
    role has at most one interval (disjoint intervals longer than half a bucket), so a place holds at most three."""
    entering, leaving = shift(lo, k) < bucket, shift(hi - 1, k) > bucket
    return [entering, ~entering & ~leaving, leaving]


def _probes(rows: DataFrame, levels: DataFrame, keys: list, value: Column) -> DataFrame:
    """`rows` with `(inside, first, below_t, above_t, level, bucket, slot)`: a value between its key's cuts
    (`inside`) probes each level of its key; one outside them (or of a key with no intervals) takes one row
    and no slot. `level` is never null (`NO_LEVEL`: none), so the lookup compares it without null checks.

    Plain columns and joins, no arrays: this runs once per update.
    """
    inside = F.coalesce((value >= F.col("first")) & (value < F.col("last")), F.lit(False))
    one_level = F.when(inside, F.col("level").isNotNull()).otherwise(
        F.col("level").eqNullSafe(F.col("lowest"))
    )
    types = [_hashed_type(levels.schema[f"key_{k}"].dataType, rows.schema[k].dataType) for k in keys]
    hashed = levels.withColumn("key_hash", _key_hash(keys, types, "key_"))
    on = [_key_hash(keys, types) == F.col("key_hash"), *[_same(k, "key_") for k in keys], one_level]
    probed = rows.join(F.broadcast(hashed), on=on, how="left")
    bucket = F.when(inside, shift(value, F.col("level")))
    return probed.select(
        *rows.columns,
        inside.alias("inside"),
        "first",
        "below_t",
        "above_t",
        _comparable_level().alias("level"),
        bucket.alias("bucket"),
        slot(F.col("key_level"), bucket).alias("slot"),
    )


def _key_hash(keys: list, types: list, prefix: str = "") -> Column:
    """The one `long` a value finds its key's levels by (see the module's notes): the hash of its keys (named
    `prefix + key`), each read as its `types` entry, so that both sides hash equal keys alike."""
    return F.xxhash64(*[F.col(f"{prefix}{k}").cast(t) for k, t in zip(keys, types)])


def _hashed_type(theirs: T.DataType, mine: T.DataType) -> T.DataType:
    """The type both sides hash a key as: its own where they agree, `long` for two integer types (an `int` and
    a `long` of one number hash apart, and a `long` key need not fit an `int`), else the values' type."""
    integers = isinstance(theirs, T.IntegralType) and isinstance(mine, T.IntegralType)
    return T.LongType() if integers and theirs != mine else mine
