"""How far in event time a stateful trial's state reaches: each entry's bound, read from the checkpoint.

A state entry is bounded in event time by what evicts it (`state_store.bound_ms`, the one reader of
bounds, which `validate-checkpoint --state` reads too): a window aggregation's `window.end`, a
deduplication's event time when its key holds the watermarked column, a `dropDuplicatesWithinWatermark`
entry's `expiresAtMicros`; an entry of a key without event time is bounded by nothing (None). `bounds`
reads, with Spark's state data source (`frontier_harness.spark_impl.event_time.state_store`),
the store of one operator as it was after a batch, for many stores in one Spark job, and reports for each
store each bound (in epoch milliseconds, or None) and how many entries have it; None for a checkpoint with no
state store of that operator. `operator_ids` lists the operators a checkpoint keeps state for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from frontier_harness.spark_impl.event_time.state_store import bound_ms, read_together, state_rows

TAG = "_fh_trial"


def operator_ids(checkpoint: Path) -> list[int]:
    """The ids of the operators whose state the checkpoint keeps (`state/<id>/`), in order; none without state.

    >>> operator_ids(Path("/nonexistent"))
    []
    """
    state = checkpoint / "state"
    return sorted(int(d.name) for d in state.iterdir() if d.name.isdigit()) if state.is_dir() else []


def bounds(session: Any, stores: Sequence[tuple[Path, int, int]]) -> list[dict[int | None, int] | None]:
    """For each `(checkpoint, batch, operator)`, the bounds of the operator's entries after that batch: bound
    -> entries (None: the checkpoint has no state store of the operator).

    One Spark job for every store, of one stage: each read, tagged, unioned, and its entries' bounds counted
    here (a trial's stores hold a few dozen entries; grouping them in Spark added a shuffle and a second stage,
    about a sixth of a wave's state reads, measured on the worked example's trials). A store Spark cannot
    load raises `StateUnreadable` (naming the file when Spark does)."""
    read: dict[int, dict[int | None, int]] = {}
    frames = []
    for i, (checkpoint, batch, operator) in enumerate(stores):
        if not (checkpoint / "state" / str(operator)).is_dir():
            continue
        read[i] = {}
        rows = state_rows(session, checkpoint, batch, operator)
        frames.append(rows.select(F.lit(i).alias(TAG), bound_ms(rows).alias("bound")))
    if frames:
        for tag, bound in read_together(stores[0][0], frames):
            read[tag][bound] = read[tag].get(bound, 0) + 1
    return [read.get(i) for i in range(len(stores))]


def join_operator(checkpoint: Path) -> int | None:
    """The id of the stream-stream join's operator in the checkpoint: the one whose stores hold a join side's
    (`left-keyToNumValues`); Spark numbers operators top down, so an aggregation over the join is 0 and the
    join 1. None when no state of a join was written.

    >>> join_operator(Path("/nonexistent")) is None
    True
    """
    for operator in operator_ids(checkpoint):
        stores = checkpoint / "state" / str(operator)
        if any((p / "left-keyToNumValues").is_dir() for p in stores.iterdir()):
            return operator
    return None


def join_rows(
    session: Any, stores: Sequence[tuple[Path, int, str]]
) -> list[list[tuple[str | None, int]] | None]:
    """For each `(checkpoint, batch, side)`, the `data` and the event time (ms) of every row a stream-stream
    join (`join_operator`) keeps in that side's state after that batch (Spark's state data source with
    `joinSide`); None for a checkpoint with no state of the join. The `data` is None when the join stores
    none (Spark prunes the columns nothing above the join reads: a count over the join stores no `data`).
    One Spark job for every store."""
    read: dict[int, list[tuple[str | None, int]]] = {}
    frames = []
    operators = {
        checkpoint: join_operator(checkpoint) for checkpoint, _, _ in stores
    }  # one scan a checkpoint
    for i, (checkpoint, batch, side) in enumerate(stores):
        operator = operators[checkpoint]
        if operator is None:
            continue
        read[i] = []
        rows = (
            session.read.format("statestore")
            .option("batchId", batch)
            .option("operatorId", operator)
            .option("joinSide", side)
            .load(str(checkpoint))
        )
        stored = rows.schema["value"].dataType.fieldNames()
        data = F.col("value.data") if "data" in stored else F.lit(None).cast("string")
        at = F.unix_millis(F.col("value.event_time"))
        frames.append(rows.select(F.lit(i).alias(TAG), data.alias("data"), at.alias("event_time")))
    if frames:
        for row in read_together(stores[0][0], frames):
            read[row[TAG]].append((row["data"], row["event_time"]))
    return [read.get(i) for i in range(len(stores))]
