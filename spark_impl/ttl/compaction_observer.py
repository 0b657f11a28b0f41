"""The ttl_compaction suite's observer on Spark: every compaction of a batch of histories in one job.

A history is rows of a few sorted runs (`row(run, key, value?, seq, create,
expire)`) and compactions of all of them (`compact(now, last)`); each
compaction's output rows are observed as plain tuples
`(key, value, seq, create_ts, expire_ts)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from frontier_harness.spark_impl.arrow import to_frame
from frontier_harness.spark_impl.ttl.compaction import NO_BROADCAST, compact_frame
from frontier_harness.spark_impl.ttl.row import ROW_COLUMNS, ROW_SCHEMA, TOMBSTONE

ROWS = pa.schema([("history_id", pa.int64())] + list(ROW_SCHEMA))
COMPACTIONS = pa.schema(
    [("history_id", pa.int64()), ("step", pa.int64()), ("now", pa.int64()), ("last", pa.bool_())]
)


def observe_ttl_compaction(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Every compaction's output rows, for a whole batch of histories, in one Spark job."""
    rows, compactions = _tables(histories)
    joined = to_frame(rows).join(to_frame(compactions).hint(NO_BROADCAST), on="history_id")
    out = compact_frame(joined, ("history_id", "step")).select("history_id", "step", *ROW_COLUMNS).toArrow()
    observed: list[dict[tuple[int, str], set]] = [
        {(step, "output"): set() for step, a in enumerate(h.actions) if a.name == "compact"}
        for h in histories
    ]
    for r in out.to_pylist():
        value = None if r["flags"] & TOMBSTONE else r["value"].decode()
        row = (r["key"].decode(), value, r["seq"], r["create_ts"], r["expire_ts"])
        observed[r["history_id"]][(r["step"], "output")].add(row)
    return [{k: frozenset(v) for k, v in obs.items()} for obs in observed]


def _tables(histories: Sequence[Any]) -> tuple[pa.Table, pa.Table]:
    """The batch's rows and compactions as Arrow tables keyed by `history_id`."""
    rows: dict[str, list] = {name: [] for name in ROWS.names}
    comps: dict[str, list] = {name: [] for name in COMPACTIONS.names}
    for hid, history in enumerate(histories):
        for step, action in enumerate(history.actions):
            a = action.args
            if action.name == "row":
                value = a.get("value")
                flags = TOMBSTONE if value is None else 0
                encoded = None if value is None else value.encode()
                record = (hid, a["key"].encode(), encoded, a["seq"], flags, a["create"], a["expire"])
                for name, v in zip(ROWS.names, record):
                    rows[name].append(v)
            elif action.name == "compact":
                for name, v in zip(COMPACTIONS.names, (hid, step, a["now"], a["last"])):
                    comps[name].append(v)
            else:
                raise ValueError(f"ttl_compaction history: unknown action {action.name!r} at step {step}")
    return pa.table(rows, schema=ROWS), pa.table(comps, schema=COMPACTIONS)
