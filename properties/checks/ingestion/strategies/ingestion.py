"""Ingestion histories with bounded input reliance: produce, ingest, checkpoint, compact, crash, restart.

Actions (plain data; semantics in `frontier_harness.model.ingestion.ingestion`, observed by
`frontier_harness.properties.checks.ingestion.resumption`):

- `produce {partition, data}`: the upstream appends a record (`data` unique per history);
- `ingest {tick, fault?}`: read, mint at IntoTime `tick`, append remap then data shard;
- `checkpoint {compact_first?, fault?}`: commit the offset resumption frontier and
  compact the remap, in that order or (`compact_first`) the other;
- `upstream_compact {}`: the upstream deletes everything before its committed offsets;
- `restart {}`: read the shards, recompute the frontiers, commit, resume.

A `fault` names the point where the process dies (`frontier_harness.model.vocabulary.ingestion.INGEST_FAULTS`,
`CHECKPOINT_FAULTS`); the generator then restarts it, sometimes after more produces
and upstream compactions. Now and then a running process restarts too.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_ingestion_history(RandomSource(5), "partitioned")
>>> {a.name for a in h.actions} <= set(IngestionAction)
True
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import (
    CHECKPOINT_FAULTS,
    INGEST_FAULTS,
    IngestionAction,
    IngestionArg,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

MAX_PARTITIONS = 3


class ProducerState:
    """What the upstream has so far: partitions, records, the tick, and whether the process is down."""

    def __init__(self, domain_name: str):
        self.partitions = 1 if domain_name == "total" else 0
        self.total = domain_name == "total"
        self.records = 0
        self.tick = 0
        self.down = False


def produce(source: Source, state: ProducerState) -> Action:
    """A `produce` to a known partition or the next new one (`data` unique per history)."""
    limit = 0 if state.total else min(state.partitions, MAX_PARTITIONS - 1)
    partition = source.integer(0, limit)
    state.partitions = max(state.partitions, partition + 1)
    state.records += 1
    return Action(
        IngestionAction.PRODUCE, {IngestionArg.PARTITION: partition, Arg.DATA: f"r{state.records - 1}"}
    )


def _fault(source: Source, state: ProducerState, faults: tuple):
    if not source.boolean(0.3):
        return None
    state.down = True
    return source.choice(faults)


def _step(source: Source, state: ProducerState) -> list[Action]:
    kind = source.integer(0, 9)
    if kind < 4:
        return [produce(source, state)]
    if kind == 9:
        clean = not state.down and source.boolean(0.25)  # a restart with nothing to recover
        return [Action(IngestionAction.RESTART if clean else IngestionAction.UPSTREAM_COMPACT, {})]
    if state.down:
        state.down = False
        return [Action(IngestionAction.RESTART, {})]
    if kind < 7:
        state.tick += source.choice((1, 1, 2, 0))
        fault = _fault(source, state, INGEST_FAULTS)
        return [Action(IngestionAction.INGEST, {IngestionArg.TICK: state.tick, **_faulted(fault)})]
    order: dict[str, Any] = {IngestionArg.COMPACT_FIRST: True} if source.boolean(0.3) else {}
    fault = _fault(source, state, CHECKPOINT_FAULTS)
    return [Action(IngestionAction.CHECKPOINT, {**order, **_faulted(fault)})]


def _faulted(fault: str | None) -> dict[str, Any]:
    """The `fault` argument, when there is one."""
    return {IngestionArg.FAULT: fault} if fault else {}


def draw_ingestion_history(source: Source, domain_name: str, max_steps: int = 24) -> History:
    """A few produces, then up to `max_steps` mixed steps (crashed processes get restarted)."""
    state = ProducerState(domain_name)
    actions = [produce(source, state) for _ in range(2)]
    for chunk in repeat(source, lambda: _step(source, state), 0, max_steps, 0.9):
        actions += chunk
    return History(domain_name, tuple(actions))
