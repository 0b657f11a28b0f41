"""Histories of a Structured Streaming query over the upstream log: produce, trigger, crash, compact, restart.

Actions (plain data; run by `frontier_harness.spark_impl.ingestion.streaming.trial`, judged by `frontier_harness.properties.checks.ingestion.streaming`):

- `query {trigger, sink}` first: `processingTime` or `availableNow`; the `shard` or `files` sink;
- `produce {partition, data}`: the upstream appends a record (as in `frontier_harness.properties.checks.ingestion.strategies.ingestion`,
  whose producer this reuses: new partitions appear, `data` unique per history);
- `trigger {fault?, kill?}`: the query processes what the upstream offers; a `fault` names the crash
  point (`CRASH_POINTS`), `kill` crashes a separate driver process with SIGKILL there;
- `upstream_compact {}`: the upstream deletes everything before its committed offsets;
- `restart {}`: the query starts again from its checkpoint (the generator restarts a crashed query,
  sometimes after more produces and upstream compactions).

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_streaming_history(RandomSource(3), "partitioned")
>>> h.actions[0].name, {a.name for a in h.actions[1:]} - (set(StreamingAction) - {StreamingAction.QUERY})
('query', set())
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.ingestion import (
    CrashPoint,
    IngestionArg,
    Sink,
    StreamingAction,
    Trigger,
)
from frontier_harness.properties.checks.ingestion.strategies.ingestion import ProducerState, produce
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

CRASH_POINTS = tuple(CrashPoint)
TRIGGERS = (Trigger.PROCESSING_TIME, Trigger.AVAILABLE_NOW)
SINKS = (Sink.SHARD, Sink.FILES)


def _trigger(source: Source, state: ProducerState, kill: bool) -> Action:
    if not source.boolean(0.45):
        return Action(StreamingAction.TRIGGER, {})
    state.down = True
    args: dict[str, object] = {IngestionArg.FAULT: source.choice(CRASH_POINTS)}
    if kill:
        args[IngestionArg.KILL] = True
    return Action(StreamingAction.TRIGGER, args)


def _step(source: Source, state: ProducerState, kill: bool) -> Action:
    kind = source.integer(0, 9)
    if kind < 4:
        return produce(source, state)
    if kind == 9 or (kind == 8 and state.down):  # compaction while the query is down is the hard case
        return Action(StreamingAction.UPSTREAM_COMPACT, {})
    if state.down:
        state.down = False
        return Action(StreamingAction.RESTART, {})
    return _trigger(source, state, kill)


def draw_streaming_history(
    source: Source, domain_name: str, max_steps: int = 10, kill: bool = False
) -> History:
    """The query's settings, a produce, then up to `max_steps` mixed steps; `kill` crashes by SIGKILL."""
    state = ProducerState(domain_name)
    trigger = source.choice(TRIGGERS + TRIGGERS[:1])  # availableNow starts a query per trigger: 1 in 3
    query = Action(
        StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger, IngestionArg.SINK: source.choice(SINKS)}
    )
    actions = [query, produce(source, state)]
    actions += repeat(source, lambda: _step(source, state, kill), 0, max_steps, 0.85)
    return History(domain_name, tuple(actions))
