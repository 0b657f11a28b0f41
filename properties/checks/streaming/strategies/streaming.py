"""Histories of a Structured Streaming query over the upstream log: produce, trigger, crash, compact, restart.

Actions (plain data; run by `frontier_harness.spark_impl.streaming.trial`, judged by `frontier_harness.properties.checks.streaming.streaming`):

- `query {trigger, sink}` first: `processingTime` or `availableNow`; the `shard` or `files` sink;
- `produce {partition, data}`: the upstream appends a record (as in `frontier_harness.properties.checks.ingestion.strategies.ingestion`,
  whose producer this reuses: new partitions appear, `data` unique per history);
- `trigger {fault?, kill?}`: the query processes what the upstream offers; a `fault` names the crash
  point (`CRASH_POINTS`), `kill` crashes a separate driver process with SIGKILL there;
- `upstream_compact {}`: the upstream deletes everything before its committed offsets;
- `restart {}`: the query starts again from its checkpoint (the generator restarts a crashed query,
  sometimes after more produces and upstream compactions).

`directed(kill)` draws, for each of the suite's required hard cases, a small history that
reaches it (a crash at each point then a restart; a compaction while the query is down; a batch
with a two-digit id, where a writer that orders batch ids as text puts `10` before `9`): a run
checks those first, so a run of a few trials reaches every hard case.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_streaming_history(RandomSource(3), "partitioned")
>>> h.actions[0].name, {a.name for a in h.actions[1:]} - (set(StreamingAction) - {StreamingAction.QUERY})
('query', set())
"""

from __future__ import annotations

from collections.abc import Callable

from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint, Sink, StreamingAction, Trigger
from frontier_harness.properties.checks.ingestion.strategies.ingestion import ProducerState, produce
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

CRASH_POINTS = tuple(CrashPoint)
TRIGGERS = (Trigger.PROCESSING_TIME, Trigger.AVAILABLE_NOW)
SINKS = (Sink.SHARD, Sink.FILES)
# The suite's required hard cases besides a crash at each point (`crashed`).
RESTART_AFTER_COMPACTION = "restart after upstream compaction"
RERUN = f"re-run of a batch after {CrashPoint.AFTER_SINK}"
TWO_DIGITS = "a batch with a two-digit id committed, the rows read after it"
FIRST_TWO_DIGIT_BATCH = 10  # the drawn histories stop before it: a directed history runs to it
RESTART = Action(StreamingAction.RESTART, {})
TRIGGER = Action(StreamingAction.TRIGGER, {})


def crashed(point: str) -> str:
    """The hard case of a crash at `point` firing in a live query with new records."""
    return f"crash {point}"


def _trigger(source: Source, state: ProducerState, kill: bool) -> Action:
    if not source.boolean(0.45):
        return TRIGGER
    state.down = True
    return _crash(source.choice(CRASH_POINTS), kill)


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


def _query(source: Source, killed_at: str | None = None) -> Action:
    """The query's settings: its trigger (`availableNow` 1 in 3) and its sink; for a SIGKILL at `after_sink`,
    our shard sink (Spark's file sink runs none of our code: no process of it can be killed there)."""
    trigger = source.choice(TRIGGERS + TRIGGERS[:1])  # availableNow starts a query per trigger: 1 in 3
    sink = source.choice(SINKS)
    sink = Sink.SHARD if killed_at == CrashPoint.AFTER_SINK else sink
    return Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: trigger, IngestionArg.SINK: sink})


def _crash(point: str, kill: bool) -> Action:
    args: dict[str, object] = {IngestionArg.FAULT: point}
    if kill:
        args[IngestionArg.KILL] = True
    return Action(StreamingAction.TRIGGER, args)


Draw = Callable[[Source, str], History]


def _crash_then_restart(point: str, kill: bool) -> Draw:
    """A record, a trigger that crashes at `point`, a restart (the final step then triggers)."""

    def draw(source: Source, domain_name: str) -> History:
        state = ProducerState(domain_name)
        query = _query(source, point if kill else None)
        actions = (query, produce(source, state), _crash(point, kill), RESTART)
        return History(domain_name, actions)

    return draw


def _compaction_while_down(kill: bool) -> Draw:
    """Two batches committed, a third crashed once its offsets were written, the upstream compacted while the
    query is down, a restart: the restart runs that third batch again from its logged offsets, which the
    compaction must have left (as the stateful suite's `RESTART_AFTER_COMPACTION` script does). A source
    that commits upstream more than Spark made durable fails on this history (the restart's read is refused).

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> crash = _compaction_while_down(False)(RandomSource(0), "partitioned").actions[-3]
    >>> crash.name, crash.args
    ('trigger', {'fault': 'after_offsets'})
    """

    def draw(source: Source, domain_name: str) -> History:
        state, query = ProducerState(domain_name), _query(source)
        first, second, third = (produce(source, state) for _ in range(3))
        crash = _crash(CrashPoint.AFTER_OFFSETS, kill)
        actions = (query, first, TRIGGER, second, TRIGGER, third, crash)
        return History(domain_name, (*actions, Action(StreamingAction.UPSTREAM_COMPACT, {}), RESTART))

    return draw


def directed(kill: bool = False) -> dict[str, Draw]:
    """For each required hard case, a draw of a small history that reaches it (`Property.directed`).

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> [a.name for a in directed()[RERUN](RandomSource(0), "partitioned").actions]
    ['query', 'produce', 'trigger', 'restart']
    """
    crashes = {crashed(p): _crash_then_restart(p, kill) for p in CRASH_POINTS}
    return {
        **crashes,
        RERUN: crashes[crashed(CrashPoint.AFTER_SINK)],
        RESTART_AFTER_COMPACTION: _compaction_while_down(kill),
        TWO_DIGITS: _to_a_two_digit_batch,
    }


def _to_a_two_digit_batch(source: Source, domain_name: str) -> History:
    """A record and a trigger for each batch up to the first with a two-digit id (`FIRST_TWO_DIGIT_BATCH`).

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> sum(a.name == "trigger" for a in _to_a_two_digit_batch(RandomSource(0), "partitioned").actions)
    11
    """
    state = ProducerState(domain_name)
    batches = [a for _ in range(FIRST_TWO_DIGIT_BATCH + 1) for a in (produce(source, state), TRIGGER)]
    return History(domain_name, (_query(source), *batches))


def draw_streaming_history(
    source: Source, domain_name: str, max_steps: int = 10, kill: bool = False
) -> History:
    """The query's settings, a produce, then up to `max_steps` mixed steps; `kill` crashes by SIGKILL."""
    state = ProducerState(domain_name)
    actions = [_query(source), produce(source, state)]
    actions += repeat(source, lambda: _step(source, state, kill), 0, max_steps, 0.85)
    return History(domain_name, tuple(actions))


def aimed_at(history: History) -> list[str]:
    """The hard cases a history is drawn to reach (what `directed` aims at; the suites count what each trial
    observed, never this): which trigger and sink the query runs, `aimed_crashes`, and a two-digit batch id
    (more triggers than `FIRST_TWO_DIGIT_BATCH`).

    >>> h = History("partitioned", (Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: Trigger.AVAILABLE_NOW}),))
    >>> aimed_at(h)
    ['availableNow trigger, shard sink']
    """
    first = history.actions[0] if history.actions else None
    query = first.args if first is not None and first.name == StreamingAction.QUERY else {}
    trigger = query.get(IngestionArg.TRIGGER, Trigger.PROCESSING_TIME)
    triggers = sum(a.name == StreamingAction.TRIGGER for a in history.actions)
    two_digits = {TWO_DIGITS} if triggers > FIRST_TWO_DIGIT_BATCH else set()
    return sorted(
        {
            f"{trigger} trigger, {query.get(IngestionArg.SINK, Sink.SHARD)} sink",
            *aimed_crashes(history),
            *two_digits,
        }
    )


def aimed_crashes(history: History) -> set[str]:
    """The crashes a history is drawn to reach: each crash point firing (a live query with new records), a
    restart after the upstream compacted while the query was down, and the batch a crash after the sink left
    uncommitted run again (a restart, or the final step's). Under a user's job every crash point is in its
    query, `after_sink` after its `write` returned."""
    found: set[str] = set()
    down = pending = compacted = False
    after_sink = False
    for action in history.actions:
        fault = action.args.get(IngestionArg.FAULT)
        if action.name == StreamingAction.PRODUCE:
            pending = True
        elif action.name == StreamingAction.UPSTREAM_COMPACT:
            compacted = compacted or down
        elif action.name == StreamingAction.TRIGGER and not down:
            if fault and pending:
                found.add(crashed(fault) + (" (SIGKILL)" if action.args.get(IngestionArg.KILL) else ""))
                after_sink = fault == CrashPoint.AFTER_SINK
            down, pending = bool(fault and pending), False
        elif action.name == StreamingAction.RESTART:
            if down and compacted:
                found.add(RESTART_AFTER_COMPACTION)
            if down and after_sink:
                found.add(RERUN)
            down = pending = compacted = after_sink = False
    if down and compacted:
        found.add(RESTART_AFTER_COMPACTION)
    if down and after_sink:
        found.add(RERUN)
    return found
