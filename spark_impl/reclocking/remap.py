"""The remap collection on Spark: minting, compaction, `R(t)` and inversion, batched by `history_id`.

Frames (every one keyed by `history_id`):

- mints `(history_id, step, tick, upper: array<time>)`: source uppers observed at ticks.
- bindings `(history_id, step, from_time, into_time, diff)`: `step` is the action
  that minted the binding (-1 for the initial `(minimum, 0, +1)`).
- points `(history_id, point, ...)`: where a remap is observed; the remap *at a
  point* is made of the bindings minted before it, compacted to the since then.

IntoTime is Total (`long`); `OPEN` stands for "beyond every IntoTime" (the empty
IntoTime frontier). All window functions are per history (or per point), never global.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

OPEN = 2**62


def effective_mints(mints: DataFrame) -> DataFrame:
    """The mints that advance the remap: tick beyond every earlier tick, and the source not closed before.

    A tick not beyond the upper is skipped; an empty upper closes the remap, after which every tick is skipped.
    """
    before = Window.partitionBy("history_id").orderBy("step").rowsBetween(Window.unboundedPreceding, -1)
    advancing = mints.withColumn(
        "advancing", F.col("tick") > F.coalesce(F.max("tick").over(before), F.lit(0))
    )
    closing = (F.col("advancing") & (F.size("upper") == 0)).cast("int")
    marked = advancing.withColumn("closed_before", F.coalesce(F.max(closing).over(before), F.lit(0)) > 0)
    return marked.where(F.col("advancing") & ~F.col("closed_before")).select(
        "history_id", "step", "tick", "upper"
    )


def mint(histories: DataFrame, mints: DataFrame, minimum: Column) -> DataFrame:
    """Bindings of every history: the initial `(minimum, 0, +1)`, then per effective mint the old
    upper's elements retracted and the new one's inserted at its tick."""
    effective = effective_mints(mints)
    previous = F.lag("upper").over(Window.partitionBy("history_id").orderBy("step"))
    paired = effective.withColumn("old", F.coalesce(previous, F.array(minimum)))
    retracted = paired.select(
        "history_id",
        "step",
        F.explode(retractions(F.col("old"), F.col("upper"))).alias("from_time"),
        F.col("tick").alias("into_time"),
        F.lit(-1).alias("diff"),
    )
    inserted = paired.select(
        "history_id",
        "step",
        F.explode(insertions(F.col("old"), F.col("upper"))).alias("from_time"),
        F.col("tick").alias("into_time"),
        F.lit(1).alias("diff"),
    )
    initial = histories.select(
        "history_id",
        F.lit(-1).alias("step"),
        minimum.alias("from_time"),
        F.lit(0).cast("long").alias("into_time"),
        F.lit(1).alias("diff"),
    )
    return initial.unionByName(retracted).unionByName(inserted)


def retractions(old: Column, new: Column) -> Column:
    """Minting rule: the old upper's elements not in the new one."""
    return F.array_except(old, new)


def insertions(old: Column, new: Column) -> Column:
    """Minting rule: the new upper's elements not in the old one."""
    return F.array_except(new, old)


def since_at(points: DataFrame, compactions: DataFrame) -> DataFrame:
    """Per point, the remap's since then: the latest compaction before it (`since` never goes back), else 0."""
    compacted = compactions.select(F.col("history_id").alias("compacted"), "step", "to")
    before = (F.col("history_id") == F.col("compacted")) & (F.col("step") < F.col("point"))
    earlier = points.select("history_id", "point").join(compacted, on=before, how="left")
    return earlier.groupBy("history_id", "point").agg(
        F.coalesce(F.max("to"), F.lit(0)).cast("long").alias("since")
    )


def compact(bindings: DataFrame, keys: list) -> DataFrame:
    """Compaction: each binding's IntoTime advanced to the `since` column, then consolidated per `keys`."""
    advanced = bindings.withColumn("into_time", advance_into(F.col("into_time"), F.col("since")))
    return consolidate_bindings(advanced, keys)


def advance_into(into_time: Column, since: Column) -> Column:
    """Compaction rule: an IntoTime advanced by the Total frontier `{since}`."""
    return F.greatest(into_time, since)


def consolidate_bindings(bindings: DataFrame, keys: list) -> DataFrame:
    """Compaction rule: merges equal `(keys, from_time, into_time)` and drops zero diffs."""
    summed = bindings.groupBy(*keys, "from_time", "into_time").agg(F.sum("diff").alias("diff"))
    return summed.where(F.col("diff") != 0)


def remap_at_points(bindings: DataFrame, sinces: DataFrame) -> DataFrame:
    """Per point (`sinces`: `history_id, point, since`), its remap's bindings `(history_id, point, since, from_time, into_time, diff)`,
    partitioned by point: reclocking builds each point's index within its partition, with no other shuffle."""
    before = bindings.join(sinces, on="history_id").where(F.col("step") < F.col("point"))
    before = before.repartition("history_id", "point")
    compacted = compact(before, ["history_id", "point", "since"])
    return compacted.select("history_id", "point", "since", "from_time", "into_time", "diff")


def presence(remap: DataFrame) -> DataFrame:
    """Per point and element, the IntoTime intervals `[start, end)` in which its count is positive."""
    by_element = Window.partitionBy("history_id", "point", "from_time").orderBy("into_time")
    counted = remap.groupBy("history_id", "point", "from_time", "into_time").agg(F.sum("diff").alias("diff"))
    counted = counted.select(
        "history_id",
        "point",
        "from_time",
        F.col("into_time").alias("start"),
        F.sum("diff").over(by_element.rowsBetween(Window.unboundedPreceding, 0)).alias("count"),
        F.coalesce(F.lead("into_time").over(by_element), F.lit(OPEN)).alias("end"),
    )
    return counted.where(F.col("count") > 0).drop("count")


def frontier_at(remap: DataFrame, times: DataFrame) -> DataFrame:
    """`R(t)` as an array `frontier`, per row of `times` `(history_id, point, t, ...)`: the elements present at `t`.

    Compares every time of a point with every interval of its remap: for reads and
    for the general (Product, Partitioned) reclocking path, not for large remaps.
    """
    inside = present(F.col("start"), F.col("end"), F.col("t"))
    joined = times.join(presence(remap), on=["history_id", "point"], how="left")
    return joined.groupBy(*times.columns).agg(
        F.collect_list(F.when(inside, F.col("from_time"))).alias("frontier")
    )


def present(start: Column, end: Column, t: Column) -> Column:
    """`R(t)` rule: an element whose count is positive over IntoTimes `[start, end)` is in `R(t)` iff `t` is."""
    return (start <= t) & (t < end)


def inversion_time(tick: Column, closed: Column, since: Column) -> Column:
    """Inversion rule: the accumulation of bindings strictly before `{tick}` is `R(tick - 1)`;
    the empty frontier reads every binding; at or below `since` the answer is `{minimum}` (null here)."""
    return F.when(closed, F.lit(OPEN)).when(tick <= since, F.lit(None)).otherwise(tick - 1)
