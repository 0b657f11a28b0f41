"""The ttl_compaction suite's observer on Spark: every compaction of a batch of histories in one job.

A history is rows of a few sorted runs (`row(run, key, value?, seq, create,
expire)`) and compactions of all of them (`compact(now, last)`); each
compaction's output rows are observed as plain tuples
`(key, value, seq, create_ts, expire_ts)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.ttl import CompactAt, CompactionLabel, SstRow, compaction_steps
from frontier_harness.spark_impl.arrow import HistoryTables, columns_of
from frontier_harness.spark_impl.ttl.compaction import NO_BROADCAST, compact_frame
from frontier_harness.spark_impl.ttl.row import ROW_COLUMNS, ROW_SCHEMA, TOMBSTONE

ROWS = {"history_id": pa.int64()} | {field.name: field.type for field in ROW_SCHEMA}
COMPACTIONS = {"history_id": pa.int64(), "step": pa.int64(), "now": pa.int64(), "last": pa.bool_()}


def observe_ttl_compaction(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Every compaction's output rows, for a whole batch of histories, in one Spark job."""
    frames = _tables(histories).frames()
    joined = frames["rows"].join(frames["compactions"].hint(NO_BROADCAST), on="history_id")
    out = compact_frame(joined, ("history_id", "step")).select("history_id", "step", *ROW_COLUMNS).toArrow()
    observed: list[dict[tuple[int, str], set]] = [
        {(s.step, CompactionLabel.OUTPUT): set() for s in compaction_steps(h) if isinstance(s, CompactAt)}
        for h in histories
    ]
    cols = columns_of(out)
    for hid, step, key, value, seq, flags, create_ts, expire_ts in zip(
        *(cols[name] for name in ("history_id", "step", *ROW_COLUMNS))
    ):
        row = (key.decode(), None if flags & TOMBSTONE else value.decode(), seq, create_ts, expire_ts)
        observed[hid][(step, CompactionLabel.OUTPUT)].add(row)
    return [{k: frozenset(v) for k, v in obs.items()} for obs in observed]


def _tables(histories: Sequence[HistoryLike]) -> HistoryTables:
    """The batch's rows and compactions as Arrow tables keyed by `history_id`."""
    tables = HistoryTables({"rows": ROWS, "compactions": COMPACTIONS})
    for hid, history in enumerate(histories):
        for step in compaction_steps(history):
            match step:
                case SstRow(key=key, value=value, seq=seq, create=create, expire=expire):
                    flags = TOMBSTONE if value is None else 0
                    tables.append("rows", history_id=hid, key=key, value=value, seq=seq, flags=flags,
                                  create_ts=create, expire_ts=expire)  # fmt: skip
                case CompactAt(step=at, now=now, last=last):
                    tables.append("compactions", history_id=hid, step=at, now=now, last=last)
    return tables
