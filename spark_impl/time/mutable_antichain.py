"""A `MutableAntichain` on Spark: after every batch, the frontier of positive counts and its changes.

Batched by `history_id`: a whole batch of histories (see
`frontier_harness.properties.checks.time.strategies.mutable_antichain`) in one job and one `toArrow()`. Each
update carries the step of the batch that applies it; each batch end `(history_id,
step)` accumulates every update of its history applied at or before it, and
`frontiers.of_positive_counts` gives its frontier. The changes are set
differences with the previous batch end's frontier: elements that left (-1) and
elements that arrived (+1).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.time import AntichainLabel, antichain_batches
from frontier_harness.spark_impl.arrow import HistoryTables, arrow_type, columns_of
from frontier_harness.spark_impl.time import frontiers
from frontier_harness.spark_impl.time.time_columns import TimeColumns, time_columns

KEYS = ("history_id", "step")


def after_batches(tc: TimeColumns, updates: DataFrame, ends: DataFrame) -> DataFrame:
    """Per batch end `(history_id, step)`: its `frontier`, and what left (`removed`) and arrived (`added`).

    `updates` are `(history_id, step, time, diff)`, `step` the batch end that applies them.
    """
    applied = ends.join(updates.withColumnRenamed("step", "applied"), on="history_id").where(
        F.col("applied") <= F.col("step")
    )
    found = frontiers.of_positive_counts(tc, applied, KEYS)
    empty = F.array().cast(T.ArrayType(tc.spark_type))
    at = ends.join(found, on=list(KEYS), how="left").select(
        *KEYS, F.coalesce(F.col("frontier"), empty).alias("frontier")
    )
    previous = F.coalesce(F.lag("frontier").over(Window.partitionBy("history_id").orderBy("step")), empty)
    return at.select(
        *KEYS,
        "frontier",
        F.array_except(previous, F.col("frontier")).alias("removed"),
        F.array_except(F.col("frontier"), previous).alias("added"),
    )


def observe_mutable_antichain(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Observations of a batch of histories, as `frontier_harness.properties.checks.time.mutable_antichain.observe` records them."""
    tc = time_columns(domain)
    frames = _history_tables(tc, histories).frames()
    rows = after_batches(tc, frames["updates"], frames["ends"]).toArrow()
    return _decode(tc, len(histories), rows)


def _history_tables(tc: TimeColumns, histories: Sequence[HistoryLike]) -> HistoryTables:
    ids, time = pa.int64(), arrow_type(tc.spark_type)
    tables = HistoryTables(
        {
            "updates": {"history_id": ids, "step": ids, "time": time, "diff": ids},
            "ends": {"history_id": ids, "step": ids},
        }
    )
    for hid, history in enumerate(histories):
        for batch in antichain_batches(history):
            tables.append("ends", history_id=hid, step=batch.step)
            for time, diff in batch.updates:
                tables.append("updates", history_id=hid, step=batch.step, time=tc.to_row(time), diff=diff)
    return tables


def _decode(tc: TimeColumns, n: int, rows: pa.Table) -> list[dict]:
    observed: list[dict] = [{} for _ in range(n)]
    cols = columns_of(rows)
    for hid, step, frontier, removed, added in zip(
        cols["history_id"], cols["step"], cols["frontier"], cols["removed"], cols["added"]
    ):
        observed[hid][(step, AntichainLabel.FRONTIER)] = frozenset(tc.from_row(t) for t in frontier)
        observed[hid][(step, AntichainLabel.CHANGES)] = frozenset(
            [(tc.from_row(t), -1) for t in removed] + [(tc.from_row(t), 1) for t in added]
        )
    return observed
