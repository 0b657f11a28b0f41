"""`validate-checkpoint --state`: the state's rows, read with Spark, as `state_rows` actions of the log's history.

For every stateful operator `state-metadata` lists, and each of its stores, the rows the store
held after each committed batch among the newest `minBatchesToRetain` (those whose state Spark
keeps), counted with their oldest window end or expiry in one Spark job per store
(`frontier_harness.spark_impl.event_time.state_store.summaries`). A store Spark cannot
load (a truncated or missing file) is bad input: exit 2 naming the file when Spark does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.state_laws import retained
from frontier_harness.properties.engine.errors import CheckpointFormatError
from frontier_harness.properties.engine.history import Action, History


def with_state_rows(history: History, checkpoint: Path) -> History:
    """`history` followed by a `state_rows` action per operator, store and retained committed batch."""
    from frontier_harness.spark_impl.errors import StateUnreadable
    from frontier_harness.spark_impl.event_time.state_store import operators, summaries
    from frontier_harness.spark_impl.session import spark

    committed = sorted(a.args[LogArg.BATCH] for a in history.actions if a.name == LogAction.COMMIT)
    retain = next(a.args[LogArg.BATCHES] for a in history.actions if a.name == LogAction.RETAIN)
    added: list[Action] = []
    try:
        for op in operators(spark(), checkpoint):
            batches = [b for b in retained(committed, retain) if b in op.batches]
            for store in op.store_names:
                added += [
                    _action(op.operator_id, store, f)
                    for f in summaries(spark(), checkpoint, batches, op.operator_id, store)
                ]
    except StateUnreadable as exc:
        raise CheckpointFormatError(
            exc.file or checkpoint, None, f"Spark cannot load the state store: {exc.reason}"
        ) from exc
    return History(history.domain, history.actions + tuple(added))


def _action(operator: int, store: str, found: Any) -> Action:
    args: dict[str, Any] = {
        LogArg.OPERATOR: operator,
        LogArg.STORE: store,
        LogArg.BATCH: found.batch,
        LogArg.ROWS: found.rows,
    }
    if found.oldest_bound_ms is not None:
        args[LogArg.OLDEST_BOUND_MS] = found.oldest_bound_ms
    return Action(LogAction.STATE_ROWS, args)
