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

`variables(checkpoint, operator)` names a processor's value, list and map states, each with its kind, and
its registered timers unless it has none (`timeMode` `NoTime`: Spark then refuses to read them, measured); None
for an operator that is not a processor's. `entries(session, stores)` reads, for many `(checkpoint, batch,
operator, variables)` in one Spark job, each store's entries `(variable, key, value)` and its timers
`(TIMERS, key, expiry ms)`, key and value as JSON. A list or map state is read with
`flattenCollectionTypes` off (measured on PySpark 4.3.0: a row per key, its list in `list_value`, its map in
`map_value`), so its value is the key's whole list, in order, or its map's entries, sorted: a change to any
element is a change to the entry.

>>> variables(Path("/nonexistent"), 0) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from frontier_harness.spark_impl.event_time.state_store import read_together

VALUE, LIST, MAP = "ValueState", "ListState", "MapState"  # Spark's `stateVariableType`s read here
TIMER = "TimerState"  # `variables`' kind for the registered timers, read unless the time mode is `NO_TIME`
NO_TIME = "NoTime"  # a processor without timers (`timeMode`): Spark refuses to read timers there
TIMERS = "$timers"  # the variable name `entries` gives registered timers
GROUP_STATE = "$groupState"  # the variable name `entries` gives an applyInPandasWithState group's state
PROCESSOR_NAMES = ("transformWithState",)  # the prefix of a processor's operator name
GROUP_STATE_NAMES = ("applyInPandasWithState",)  # an operator keeping one group state and its timeout
GROUP = ((GROUP_STATE, VALUE),)  # `variables` of an applyInPandasWithState operator
NO_TIMEOUT = -1  # `timeoutTimestamp` when a group has no timeout set
TAG = "_fh_store"


def variables(checkpoint: Path, operator: int) -> tuple[tuple[str, str], ...] | None:
    """The `(name, kind)` of each value, list and map state of a processor's operator `operator` (from its
    newest `_metadata/v2` file), and `(TIMERS, TIMER)` unless its time mode is `NO_TIME`; None when the
    operator is not a processor's."""
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
    properties = json.loads(found.get("operatorPropertiesJson") or "{}")
    states = tuple(
        (v["stateName"], v["stateVariableType"])
        for v in properties.get("stateVariables", [])
        if v["stateVariableType"] in (VALUE, LIST, MAP)
    )
    return states if properties.get("timeMode") == NO_TIME else (*states, (TIMERS, TIMER))


def _group_state(metadata: Path) -> tuple[tuple[str, str], ...] | None:
    """`GROUP` when the `v1` metadata file names an `applyInPandasWithState` operator, else None."""
    if not metadata.is_file():
        return None
    found = json.loads(metadata.read_text().splitlines()[1])
    return GROUP if found["operatorInfo"]["operatorName"].startswith(GROUP_STATE_NAMES) else None


def entries(
    session: Any, stores: Sequence[tuple[Path, int, int, tuple[tuple[str, str], ...]]]
) -> list[set[tuple]]:
    """For each `(checkpoint, batch, operator, variables)`, the processor's state after that batch: its
    states' entries `(variable, key json, value json)` and its timers `(TIMERS, key json, expiry ms)`. One
    Spark job for every store."""
    frames = []
    for i, (checkpoint, batch, operator, names) in enumerate(stores):
        if names == GROUP:
            frames += _group_frames(_read(session, checkpoint, batch, operator).load(str(checkpoint)), i)
            continue
        for name, kind in names:
            read = _read(session, checkpoint, batch, operator)
            if kind == TIMER:
                frames.append(_timers(read.option("readRegisteredTimers", True).load(str(checkpoint)), i))
                continue
            rows = (
                read.option("stateVarName", name)
                .option("flattenCollectionTypes", False)
                .load(str(checkpoint))
            )
            frames.append(rows.select(F.lit(i), F.lit(name), F.to_json("key"), _value_json(kind)))
    found: list[set[tuple]] = [set() for _ in stores]
    if not frames:
        return found
    named = [frame.toDF(TAG, "variable", "key", "value") for frame in frames]
    for row in read_together(stores[0][0], named):
        value = int(row["value"]) if row["variable"] == TIMERS else row["value"]
        found[row[TAG]].add((row["variable"], row["key"], value))
    return found


def _timers(rows: Any, i: int) -> Any:
    """A store's registered timers as `entries` reads them (`TIMERS`, key, expiry ms)."""
    return rows.select(
        F.lit(i), F.lit(TIMERS), F.to_json("key"), F.col("expiration_timestamp_ms").cast("string")
    )


def _value_json(kind: str) -> Any:
    """A state's value as JSON: a value state's value, a list state's list, a map state's entries sorted."""
    if kind == LIST:
        return F.to_json("list_value")
    if kind == MAP:
        return F.to_json(F.array_sort(F.map_entries("map_value")))
    return F.to_json("value")


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
