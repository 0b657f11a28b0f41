"""A user's processor's state (`transformWithState...`), read from a trial's checkpoint after each batch.

Measured on PySpark 4.3.0 (`tests/test_processor_suite.py`): a processor's operator keeps its metadata in
`state/<id>/_metadata/v2/<batch>` (a line `v2`, then JSON: `operatorInfo.operatorName`, e.g.
`transformWithStateInPandasExec`, and `operatorPropertiesJson`, whose `stateVariables` name each state
variable and its `stateVariableType`: `ValueState`, `ListState`, `MapState`, `TimerState`). Spark's state data
source reads one variable at a time (`statestore` with `stateVarName`: columns `key`, `value`,
`partition_id`) and the registered timers (`readRegisteredTimers`: `key`, `expiration_timestamp_ms`).

An `applyInPandasWithState` operator keeps the older layout (`state/<id>/_metadata/metadata`: a line `v1`,
then JSON whose `operatorInfo.operatorName` is `applyInPandasWithState`) and one store whose `value` is
`groupState` (the user's state) and `timeoutTimestamp` (-1 when no timeout is set), measured on the same
PySpark: its state reads as one value state, `GROUP_STATE`, and its timeout as a timer. Spark clears a
group's timeout whenever it calls the function, so a timeout gone from the state may have been moved by a
call with new data rather than fired: the timer hard cases read from it (`processor_reached`) count a timer
as fired only in a batch whose watermark had reached it (a due timer the processor deleted, or moved in the
call that handled the batch's rows, still counts).

`variables(checkpoint, operator)` names a processor's value states (None for an operator that is not a
processor's); `entries(session, stores)` reads, for many `(checkpoint, batch, operator, value states)` in
one Spark job, each store's value-state entries `(variable, key, value)` (key and value as JSON) and its
timers `(TIMERS, key, expiry ms)`. List and map states are not read.

>>> variables(Path("/nonexistent"), 0) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from frontier_harness.spark_impl.event_time.state_store import read_or_raise

TIMERS = "$timers"  # the variable name `entries` gives registered timers
GROUP_STATE = "$groupState"  # the variable name `entries` gives an applyInPandasWithState group's state
PROCESSOR_NAMES = ("transformWithState",)  # the prefix of a processor's operator name
GROUP_STATE_NAMES = ("applyInPandasWithState",)  # an operator keeping one group state and its timeout
NO_TIMEOUT = -1  # `timeoutTimestamp` when a group has no timeout set
TAG = "_fh_store"


def variables(checkpoint: Path, operator: int) -> tuple[str, ...] | None:
    """The value states of a processor's operator `operator` (from its newest `_metadata/v2` file), or None
    when the operator is not a processor's."""
    directory = checkpoint / "state" / str(operator) / "_metadata" / "v2"
    files = (
        sorted((f for f in directory.iterdir() if f.name.isdigit()), key=lambda f: int(f.name))
        if directory.is_dir()
        else []
    )
    if not files:
        return _group_state(checkpoint / "state" / str(operator) / "_metadata" / "metadata")
    found = json.loads(files[-1].read_text().splitlines()[1])
    if not found["operatorInfo"]["operatorName"].startswith(PROCESSOR_NAMES):
        return None
    states = json.loads(found.get("operatorPropertiesJson") or "{}").get("stateVariables", [])
    return tuple(v["stateName"] for v in states if v["stateVariableType"] == "ValueState")


def _group_state(metadata: Path) -> tuple[str, ...] | None:
    """`(GROUP_STATE,)` when the `v1` metadata file names an `applyInPandasWithState` operator, else None."""
    if not metadata.is_file():
        return None
    found = json.loads(metadata.read_text().splitlines()[1])
    return (GROUP_STATE,) if found["operatorInfo"]["operatorName"].startswith(GROUP_STATE_NAMES) else None


def entries(session: Any, stores: Sequence[tuple[Path, int, int, tuple[str, ...]]]) -> list[set[tuple]]:
    """For each `(checkpoint, batch, operator, value states)`, the processor's state after that batch: its
    value states' entries `(variable, key json, value json)` and its timers `(TIMERS, key json, expiry
    ms)`. One Spark job for every store."""
    frames = []
    for i, (checkpoint, batch, operator, names) in enumerate(stores):
        if names == (GROUP_STATE,):
            frames += _group_frames(_read(session, checkpoint, batch, operator).load(str(checkpoint)), i)
            continue
        for name in names:
            rows = (
                _read(session, checkpoint, batch, operator).option("stateVarName", name).load(str(checkpoint))
            )
            frames.append(rows.select(F.lit(i), F.lit(name), F.to_json("key"), F.to_json("value")))
        timers = _read(session, checkpoint, batch, operator).option("readRegisteredTimers", True)
        rows = timers.load(str(checkpoint))
        frames.append(
            rows.select(
                F.lit(i), F.lit(TIMERS), F.to_json("key"), F.col("expiration_timestamp_ms").cast("string")
            )
        )
    found: list[set[tuple]] = [set() for _ in stores]
    if not frames:
        return found
    union = frames[0].toDF(TAG, "variable", "key", "value")
    for frame in frames[1:]:
        union = union.union(frame.toDF(TAG, "variable", "key", "value"))
    for row in read_or_raise(stores[0][0], union.collect):
        value = int(row["value"]) if row["variable"] == TIMERS else row["value"]
        found[row[TAG]].add((row["variable"], row["key"], value))
    return found


def _group_frames(rows: Any, i: int) -> list[Any]:
    """An `applyInPandasWithState` store's rows as `entries` reads them: each group's state, and its timeout
    as a timer when one is set."""
    state = rows.select(F.lit(i), F.lit(GROUP_STATE), F.to_json("key"), F.to_json("value.groupState"))
    timeouts = rows.where(F.col("value.timeoutTimestamp") != NO_TIMEOUT)
    timer = timeouts.select(
        F.lit(i), F.lit(TIMERS), F.to_json("key"), F.col("value.timeoutTimestamp").cast("string")
    )
    return [state, timer]


def _read(session: Any, checkpoint: Path, batch: int, operator: int) -> Any:
    return session.read.format("statestore").option("batchId", batch).option("operatorId", operator)
