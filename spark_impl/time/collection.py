"""Update collections on Spark: consolidate, contents at a time, compaction.

Batched: every frame carries `history_id`. `observe_collections` evaluates a
whole batch of collection histories (updates, reads, compactions; see
`frontier_harness.properties.checks.time.strategies.collections`) in one Spark job and one `toArrow()`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.time import (
    CollectionAction,
    CollectionCompact,
    CollectionLabel,
    CollectionRead,
    CollectionStep,
    CollectionUpdate,
    collection_steps,
)
from frontier_harness.spark_impl.arrow import HistoryTables, arrow_type, columns_of
from frontier_harness.spark_impl.time import frontiers
from frontier_harness.spark_impl.time.time_columns import TimeColumns, time_columns

KEYS = ("history_id", "step")


def consolidate(updates: DataFrame, keys: Sequence[str] = ("history_id",)) -> DataFrame:
    """Sums diffs per `(keys..., data, time)` and drops zero sums."""
    return updates.groupBy(*keys, "data", "time").agg(F.sum("diff").alias("diff")).where(F.col("diff") != 0)


def contents_at(tc: TimeColumns, updates: DataFrame, reads: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Per read (`keys` + `read_time`) and datum, the sum of diffs of `updates` (same `keys`) at times `<= read_time`."""
    joined = updates.join(reads, on=list(keys)).where(tc.le(F.col("time"), F.col("read_time")))
    return joined.groupBy(*keys, "data").agg(F.sum("diff").alias("diff")).where(F.col("diff") != 0)


def advance_through(tc: TimeColumns, time: Column, compactions: Column) -> Column:
    """`time` advanced by each `since` in the array, in order."""
    return F.aggregate(compactions, time, lambda acc, c: frontiers.advance_by(tc, acc, c["since"]))


def observe_collections(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Observations of a batch of collection histories: per read, and the final collection."""
    tc = time_columns(domain)
    frames = _history_tables(tc, histories).frames()
    rows = _observations(tc, frames).toArrow()
    return _decode(tc, histories, rows)


def _observations(tc: TimeColumns, frames: dict[str, DataFrame]) -> DataFrame:
    compactions = (
        frames["compactions"]
        .groupBy("history_id")
        .agg(F.array_sort(F.collect_list(F.struct("step", "since"))).alias("compactions"))
    )
    points = frames["points"]
    seen = (
        frames["updates"]
        .join(points.select("history_id", F.col("step").alias("point")), on="history_id")
        .where(F.col("step") < F.col("point"))
        .join(compactions, on="history_id", how="left")
    )
    between = F.filter(
        F.coalesce(F.col("compactions"), F.array().cast(compactions.schema["compactions"].dataType)),
        lambda c: (c["step"] > F.col("step")) & (c["step"] < F.col("point")),
    )
    state = seen.select(
        "history_id", "point", "data", advance_through(tc, F.col("time"), between).alias("time"), "diff"
    )
    state = state.withColumnRenamed("point", "step")
    finals = points.where(F.col("read_time").isNull()).select("history_id", "step")
    final = consolidate(state.join(finals, on=list(KEYS)), KEYS)
    reads = points.where(F.col("read_time").isNotNull())
    read = contents_at(tc, state, reads, KEYS)
    return final.select(*KEYS, "data", "time", "diff").unionByName(
        read.select(*KEYS, "data", F.lit(None).cast(tc.spark_type).alias("time"), "diff")
    )


def _history_tables(tc: TimeColumns, histories: Sequence[HistoryLike]) -> HistoryTables:
    ids, time = pa.int64(), arrow_type(tc.spark_type)
    tables = HistoryTables(
        {
            "updates": {"history_id": ids, "step": ids, "data": pa.string(), "time": time, "diff": ids},
            "points": {"history_id": ids, "step": ids, "read_time": time},
            "compactions": {"history_id": ids, "step": ids, "since": pa.list_(time)},
        }
    )
    for hid, history in enumerate(histories):
        for step in collection_steps(history):
            _add_step(tc, tables, hid, step)
        tables.append("points", history_id=hid, step=len(history.actions), read_time=None)
    return tables


def _add_step(tc: TimeColumns, tables: HistoryTables, hid: int, step: CollectionStep) -> None:
    match step:
        case CollectionUpdate(step=at, data=data, time=time, diff=diff):
            tables.append("updates", history_id=hid, step=at, data=data, time=tc.to_row(time), diff=diff)
        case CollectionRead(step=at, time=time):
            tables.append("points", history_id=hid, step=at, read_time=tc.to_row(time))
        case CollectionCompact(step=at, since=since):
            tables.append("compactions", history_id=hid, step=at, since=[tc.to_row(t) for t in since])


def _decode(tc: TimeColumns, histories: Sequence[HistoryLike], rows: pa.Table) -> list[dict]:
    observed: list[dict] = [_empty_observation(h) for h in histories]
    cols = columns_of(rows)
    for hid, step, data, time, diff in zip(
        cols["history_id"], cols["step"], cols["data"], cols["time"], cols["diff"]
    ):
        obs = observed[hid]
        if time is None:
            obs[(step, CollectionLabel.READ)].add((data, diff))
        else:
            obs[(step, CollectionLabel.FINAL)].add((data, tc.from_row(time), diff))
    return [{key: frozenset(value) for key, value in obs.items()} for obs in observed]


def _empty_observation(history: HistoryLike) -> dict:
    points: dict[tuple[int, str], set] = {
        (i, CollectionLabel.READ): set()
        for i, a in enumerate(history.actions)
        if a.name == CollectionAction.READ
    }
    points[(len(history.actions), CollectionLabel.FINAL)] = set()
    return points
