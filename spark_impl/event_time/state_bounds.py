"""How far in event time a stateful trial's state reaches: each entry's bound, read from the checkpoint.

A state entry is bounded in event time by what evicts it: a window aggregation's `window.end`, a
deduplication's event time when its key holds the watermarked column, a `dropDuplicatesWithinWatermark`
entry's `expiresAtMicros`; an entry of a key without event time is bounded by nothing (None). `bounds`
reads, with Spark's state data source (`frontier_harness.spark_impl.event_time.state_store`),
the store of operator 0 as it was after a batch, for many trials in one Spark job, and reports per trial
each bound (in epoch milliseconds, or None) and how many entries have it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.spark_impl.event_time.state_store import (
    read_or_raise,
    state_rows,
    window_end_ms,
)

TAG = "_fh_trial"
EVENT_TIME, EXPIRES = "event_time", "expiresAtMicros"


def bound_ms(rows: DataFrame) -> Column:
    """Each state row's bound in event time, in epoch milliseconds (null when its entry has none)."""
    window = window_end_ms(rows)
    if window is not None:
        return window
    key, value = rows.schema["key"].dataType, rows.schema["value"].dataType
    if isinstance(value, T.StructType) and EXPIRES in value.fieldNames():
        return (F.col("value").getField(EXPIRES) / 1000).cast("long")
    if isinstance(key, T.StructType) and EVENT_TIME in key.fieldNames():
        return F.unix_millis(F.col("key").getField(EVENT_TIME))
    return F.lit(None).cast("long")


def bounds(session: Any, stores: Sequence[tuple[Path, int]]) -> list[dict[int | None, int]]:
    """For each `(checkpoint, batch)`, the bounds of operator 0's entries after that batch: bound -> entries.

    One Spark job for every store: each read, tagged, grouped by its bound, unioned. A store Spark cannot
    load raises `StateUnreadable` (naming the file when Spark does)."""
    found: list[dict[int | None, int]] = [{} for _ in stores]
    frames = []
    for i, (checkpoint, batch) in enumerate(stores):
        if not (checkpoint / "state").is_dir():
            continue
        rows = state_rows(session, checkpoint, batch)
        frames.append(rows.select(F.lit(i).alias(TAG), bound_ms(rows).alias("bound")))
    if not frames:
        return found
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    counted = union.groupBy(TAG, "bound").count()
    for row in read_or_raise(stores[0][0], counted.collect):
        found[row[TAG]][row["bound"]] = row["count"]
    return found
