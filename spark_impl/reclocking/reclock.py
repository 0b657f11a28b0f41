"""Reclocking on Spark: every source update assigned to the first IntoTime whose `R(t)` it is not beyond.

Three paths, by what the FromTime domain allows:

- Total: a valid `R(t)` holds at most one element `u(t)` (`None` once closed), and
  `u` is monotone in `t`, so the update at `s` goes to the first step with
  `u(t) > s`: an as-of join (`frontier_harness.spark_impl.reclocking.as_of`) of the updates against the
  intervals `[u(t-1), u(t))`, each read off step `t`'s own bindings (no running
  sum, no sort of the bindings).
- Partitioned, single-partition updates: per partition `p`, `u_p(t)` is the smallest
  offset of an element of `R(t)` covering `p` (monotone too), so the same as-of join
  keyed by partition.
- Product, and Partitioned updates on a range of partitions: a join of each update
  with its point's steps under the general predicate "not beyond `R(t)`".

The as-of join never sorts the updates: the boundaries cut the values into
intervals, indexed and broadcast, and each update looks its interval up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.reclocking import (
    Compact,
    Mint,
    Observe,
    ReclockAction,
    ReclockLabel,
    ReclockStep,
    SourceUpdate,
    reclock_steps,
)
from frontier_harness.spark_impl.arrow import HistoryTables, arrow_type, columns_of
from frontier_harness.spark_impl.reclocking import remap
from frontier_harness.spark_impl.reclocking.as_of import as_of, as_of_intervals
from frontier_harness.spark_impl.reclocking.remap import frontier_at
from frontier_harness.spark_impl.time import frontiers
from frontier_harness.spark_impl.time.time_columns import TimeColumns, time_columns

POINT = ["history_id", "point"]
END = "end"  # the `kind` of the point at a history's end


def not_beyond(tc: TimeColumns, frontier: Column, time: Column) -> Column:
    """The assignment rule: `time` is complete at `frontier` (no element `<=` it)."""
    return ~frontiers.less_equal(tc, frontier, time)


def steps(remap: DataFrame, sinces: DataFrame) -> DataFrame:
    """Per point, the IntoTimes where `R` may change: its since and every binding's IntoTime."""
    starts = sinces.select(*POINT, F.col("since").alias("t"))
    return remap.select(*POINT, F.col("into_time").alias("t")).unionByName(starts).distinct()


def total_intervals(remap: DataFrame, sinces: DataFrame) -> DataFrame:
    """`(history_id, point, lo, hi, t)`: the FromTimes `lo <= s < hi` that step `t` reclocks.

    Relies on the remap law that `R(t)` holds at most one element, with multiplicity 1, and never
    regains one once empty: a step after the since retracts the old upper `u(t-1)` and inserts the new
    `u(t)`, so its interval is read off its own bindings, `[u(t-1), u(t))`, with no running sum over
    the steps (no sort). The since's bindings are `R(since)` itself: nothing below, `u(since)` (none
    once closed) above. A step with no insertion closed the source: unbounded above.
    """
    bindings = remap.select(*POINT, F.col("into_time").alias("t"), "from_time", "diff")
    starts = sinces.select(
        *POINT,
        F.col("since").alias("t"),
        F.lit(None).cast(remap.schema["from_time"].dataType).alias("from_time"),
        F.lit(0).cast("long").alias("diff"),
    )
    # The intervals feed the as-of join's broadcast sides, which the driver collects whole: one task reads
    # them, so neither the bindings nor the sinces are shuffled and no task runs over an empty partition.
    per_step = bindings.unionByName(starts).coalesce(1).groupBy(*POINT, "t")
    return per_step.agg(
        F.max(F.when(F.col("diff") < 0, F.col("from_time"))).alias("lo"),
        F.max(F.when(F.col("diff") > 0, F.col("from_time"))).alias("hi"),
    )


def assign_total(remap: DataFrame, sinces: DataFrame, updates: DataFrame) -> DataFrame:
    """Total FromTime: each update `(history_id, point, time, ...)` with its `into_time` (null: pending)."""
    return as_of_intervals(total_intervals(remap, sinces), updates, POINT, "time")


def assign_partitioned(tc: TimeColumns, remap: DataFrame, sinces: DataFrame, updates: DataFrame) -> DataFrame:
    """Partitioned FromTime: single-partition updates by a per-partition as-of join, ranges by the predicate."""
    single = F.col("time")["lo"] == F.col("time")["hi"]
    points = (
        updates.where(single)
        .withColumn("part", F.col("time")["lo"])
        .withColumn("offset", F.col("time")["offset"])
    )
    at_steps = frontier_at(remap, steps(remap, sinces))
    parts = points.select(*POINT, "part").distinct()

    def covering(f):
        return (f["lo"] <= F.col("part")) & (F.col("part") <= f["hi"])

    bound = F.array_min(F.transform(F.filter("frontier", covering), lambda f: f["offset"]))
    boundaries = at_steps.join(parts, on=POINT).select(*POINT, "part", "t", bound.alias("bound"))
    by_partition = as_of(boundaries, points, [*POINT, "part"], "offset").drop("part", "offset")
    return by_partition.unionByName(assign_general(tc, at_steps, updates.where(~single)))


def assign_general(tc: TimeColumns, at_steps: DataFrame, updates: DataFrame) -> DataFrame:
    """Any FromTime: the least step `t` whose `R(t)` (`at_steps`) the update is not beyond."""
    candidates = updates.join(at_steps, on=POINT, how="left")
    first = F.min(F.when(not_beyond(tc, F.col("frontier"), F.col("time")), F.col("t")))
    return candidates.groupBy(*updates.columns).agg(first.alias("into_time"))


def assign(
    tc: TimeColumns, domain_name: str, remap: DataFrame, sinces: DataFrame, updates: DataFrame
) -> DataFrame:
    """Each update `(history_id, point, step, data, time, diff)` with its `into_time`, per the domain's path."""
    if domain_name == "total":
        return assign_total(remap, sinces, updates)
    if domain_name == "partitioned":
        return assign_partitioned(tc, remap, sinces, updates)
    return assign_general(tc, frontier_at(remap, steps(remap, sinces)), updates)


def reclocked_and_pending(assigned: DataFrame) -> DataFrame:
    """Consolidated reclocked updates `(…, data, into_time, from_time: null, diff)` and pending ones
    `(…, data, into_time: null, from_time, diff)`, in one aggregation: an assigned update is keyed by its
    `into_time`, a pending one by its own time.

    A null `into_time` is what marks an update pending: the observation's string label is added by
    `labelled`, over the consolidated rows. Written into each of 10M rows here, it cost reclocking ~0.4 s
    of ~5 s (the bench's job, side by side in one process; a boolean column cost nothing).
    """
    pending = F.col("into_time").isNull()
    keyed = assigned.select(
        *POINT, "data", "into_time", F.when(pending, F.col("time")).alias("from_time"), "diff"
    )
    summed = keyed.groupBy(*POINT, "data", "into_time", "from_time").agg(F.sum("diff").alias("diff"))
    return summed.where(F.col("diff") != 0)


def labelled(clocked: DataFrame) -> DataFrame:
    """`reclocked_and_pending`'s rows with their observation `label`: pending where `into_time` is null."""
    label = F.when(F.col("into_time").isNull(), F.lit(ReclockLabel.PENDING.value)).otherwise(
        F.lit(ReclockLabel.RECLOCKED.value)
    )
    return clocked.select(*POINT, label.alias("label"), "data", "into_time", "from_time", "diff")


def observe_reclock(domain: Any, histories: Sequence[HistoryLike]) -> list[dict]:
    """Observations of a batch of reclock histories (`frontier_harness.properties.checks.reclocking.reclock`) in one Spark job."""
    tc = time_columns(domain)
    frames = _history_tables(tc, histories).frames()
    rows = _observations(tc, domain, frames).toArrow()
    return _decode(tc, histories, rows)


def _observations(tc: TimeColumns, domain: Any, frames: dict[str, DataFrame]) -> DataFrame:
    points, compactions = frames["points"], frames["compactions"]
    minimum = literal(tc.to_row(domain.minimum), tc.spark_type)
    bindings = remap.mint(frames["histories"], frames["mints"], minimum)
    # Checkpointed: every observation reads the remap at its point, and a plan that
    # repeats its derivation ~8 times spends more time in analysis than in execution.
    sinces = _fresh(remap.since_at(points.select(*POINT), compactions).localCheckpoint())
    at_points = _fresh(remap.remap_at_points(bindings, sinces).localCheckpoint())
    reads = points.where(F.col("kind") == ReclockAction.READ.value).select(*POINT, F.col("tick").alias("t"))
    read = frontier_at(at_points, reads).select(
        *POINT, F.lit(ReclockLabel.REMAP_AT.value).alias("label"), F.explode("frontier").alias("from_time")
    )
    inverts = points.where(F.col("kind") == ReclockAction.INVERT.value).join(sinces, on=POINT)
    inverts = inverts.select(
        *POINT, remap.inversion_time(F.col("tick"), F.col("closed"), F.col("since")).alias("t")
    )
    inverted = frontier_at(at_points, inverts).select(
        *POINT,
        F.lit(ReclockLabel.INVERTED.value).alias("label"),
        F.explode(F.when(F.col("t").isNull(), F.array(minimum)).otherwise(F.col("frontier"))).alias(
            "from_time"
        ),
    )
    targets = points.where(F.col("kind").isin(ReclockAction.RECLOCK.value, END)).select(*POINT)
    updates = frames["updates"].join(targets, on="history_id").where(F.col("step") < F.col("point"))
    clocked = labelled(reclocked_and_pending(assign(tc, domain.name, at_points, sinces, updates)))
    ends = points.where(F.col("kind") == END).select(*POINT)
    final = at_points.join(ends, on=POINT).select(
        *POINT, F.lit(ReclockLabel.BINDINGS.value).alias("label"), "from_time", "into_time", "diff"
    )
    rows = read.unionByName(inverted, allowMissingColumns=True).unionByName(clocked, allowMissingColumns=True)
    rows = rows.unionByName(final, allowMissingColumns=True)
    return rows.withColumn("from_time", F.col("from_time").cast(nullable(tc.spark_type)))


def nullable(spark_type: T.DataType) -> T.DataType:
    """`spark_type` with every struct field nullable, so a null time reads back through Arrow."""
    if isinstance(spark_type, T.StructType):
        return T.StructType([T.StructField(f.name, nullable(f.dataType), True) for f in spark_type.fields])
    return spark_type


def _fresh(frame: DataFrame) -> DataFrame:
    """The same columns under new attribute ids: a checkpoint keeps its source's ids, which
    later joins with other frames derived from that source cannot tell apart."""
    return frame.select(*[F.col(c).alias(c) for c in frame.columns])


def literal(row: Any, spark_type: T.DataType) -> Column:
    """A constant Column of `spark_type` holding `row` (a `to_row` value)."""
    if isinstance(spark_type, T.StructType):
        return F.struct(*[literal(row[f.name], f.dataType).alias(f.name) for f in spark_type.fields])
    return F.lit(row).cast(spark_type)


def _history_tables(tc: TimeColumns, histories: Sequence[HistoryLike]) -> HistoryTables:
    ids, time = pa.int64(), arrow_type(tc.spark_type)
    tables = HistoryTables(
        {
            "histories": {"history_id": ids},
            "mints": {"history_id": ids, "step": ids, "tick": ids, "upper": pa.list_(time)},
            "updates": {"history_id": ids, "step": ids, "data": pa.string(), "time": time, "diff": ids},
            "compactions": {"history_id": ids, "step": ids, "to": ids},
            "points": {
                "history_id": ids,
                "point": ids,
                "kind": pa.string(),
                "tick": ids,
                "closed": pa.bool_(),
            },
        }
    )
    for hid, history in enumerate(histories):
        tables.append("histories", history_id=hid)
        for step in reclock_steps(history):
            _add_step(tc, tables, hid, step)
        tables.append("points", history_id=hid, point=len(history.actions), kind=END, tick=None, closed=False)
    return tables


def _add_step(tc: TimeColumns, tables: HistoryTables, hid: int, step: ReclockStep) -> None:
    match step:
        case Mint(step=at, upper=upper, tick=tick):
            rows = [tc.to_row(t) for t in upper]
            tables.append("mints", history_id=hid, step=at, tick=tick, upper=rows)
        case SourceUpdate(step=at, data=data, time=time, diff=diff):
            tables.append("updates", history_id=hid, step=at, data=data, time=tc.to_row(time), diff=diff)
        case Compact(step=at, to=to):
            tables.append("compactions", history_id=hid, step=at, to=to)
        case Observe(step=at, kind=kind, tick=tick, closed=closed):
            tables.append("points", history_id=hid, point=at, kind=str(kind), tick=tick, closed=closed)


def _decode(tc: TimeColumns, histories: Sequence[HistoryLike], rows: pa.Table) -> list[dict]:
    observed = [_empty_observation(h) for h in histories]
    cols = columns_of(rows)
    for hid, point, label, data, from_time, into, diff in zip(
        cols["history_id"],
        cols["point"],
        cols["label"],
        cols["data"],
        cols["from_time"],
        cols["into_time"],
        cols["diff"],
    ):
        if label in (ReclockLabel.REMAP_AT, ReclockLabel.INVERTED):
            value = tc.from_row(from_time)
        elif label == ReclockLabel.RECLOCKED:
            value = (data, into, diff)
        elif label == ReclockLabel.PENDING:
            value = (data, tc.from_row(from_time), diff)
        else:
            value = (tc.from_row(from_time), into, diff)
        observed[hid][(point, label)].add(value)
    return [{key: frozenset(value) for key, value in obs.items()} for obs in observed]


# The labels each observing action is seen under, and those of a history's end.
POINT_LABELS: dict[str, tuple[ReclockLabel, ...]] = {
    ReclockAction.READ: (ReclockLabel.REMAP_AT,),
    ReclockAction.INVERT: (ReclockLabel.INVERTED,),
    ReclockAction.RECLOCK: (ReclockLabel.RECLOCKED, ReclockLabel.PENDING),
}
END_LABELS = (ReclockLabel.RECLOCKED, ReclockLabel.PENDING, ReclockLabel.BINDINGS)


def _empty_observation(history: HistoryLike) -> dict:
    keys = [(i, label) for i, a in enumerate(history.actions) for label in POINT_LABELS.get(a.name, ())]
    end = len(history.actions)
    return {key: set() for key in keys + [(end, label) for label in END_LABELS]}
