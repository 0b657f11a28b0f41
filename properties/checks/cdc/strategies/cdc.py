"""Histories of a CDC query over PostgreSQL: transactions in sessions, triggers, crashes, restarts.

Actions (plain data; run by `frontier_harness.spark_impl.cdc.trial`, judged by
`frontier_harness.properties.checks.cdc.cdc`):

- transactions: `begin {session}`, one to four `write {session, op, key, value, count}`, `commit
  {session}`. Two sessions, each with keys of its own (so neither blocks the other); a second
  session's transaction may begin and commit while the first's is open (interleaved), a key may be
  updated twice in one transaction, and a large transaction inserts `LARGE` rows in one statement;
  inserts take keys the table does not hold, updates and deletes keys it does;
- `trigger {fault?, kill?}`: the query processes what was committed; a `fault` names a crash point,
  `kill` crashes a separate driver by SIGKILL there (`thorough` and the directed histories);
- `restart {}` after a crash; `postgres_restart {}` with no transaction open; `slot_ahead {}` while
  the query is down, after more was committed, which ends the history (the final restart must fail).

`directed(kill)` draws, for each required hard case, a small history that reaches it; several cases
share one history where they can (one trial each: a query start costs seconds, a SIGKILL a JVM).

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_cdc_history(RandomSource(4), "total")
>>> {a.name for a in h.actions} <= set(CdcAction)
True
"""

from __future__ import annotations

from collections.abc import Callable

from frontier_harness.model.vocabulary.cdc import CdcAction, CdcArg, Op
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

CRASH_POINTS = tuple(CrashPoint)
SESSIONS = 2
KEYS_PER_SESSION = 1000  # session s writes keys [s * 1000, (s + 1) * 1000)
LARGE = 150  # rows of a large transaction
TRIGGER = Action(CdcAction.TRIGGER, {})
RESTART = Action(CdcAction.RESTART, {})
POSTGRES_RESTART = Action(CdcAction.POSTGRES_RESTART, {})
SLOT_AHEAD = Action(CdcAction.SLOT_AHEAD, {})

# The suite's required hard cases besides a crash at each point (`crashed`, `killed`). A run checks the
# directed histories in the order of these names: the crashes' history (a crash case) first.
INTERLEAVED = "interleaved transactions (one commits inside another)"
TWICE = "key updated twice in one transaction"
LARGE_TXN = f"large transaction ({LARGE} rows)"
RERUN = f"re-run of a batch after {CrashPoint.AFTER_SINK}"
POSTGRES = "postgres restarted under the running query"
SLOT_BEHIND = "restart with the slot behind the checkpoint"
SLOT_AHEAD_REFUSED = "restart refused: the slot ahead of the checkpoint"


def crashed(point: str) -> str:
    """The hard case of a crash at `point` in a query with new transactions."""
    return f"crash {point}"


def killed(point: str) -> str:
    """The hard case of a separate driver SIGKILLed at `point`."""
    return f"crash {point} (SIGKILL)"


class CdcState:
    """What the sessions hold: each session's committed keys and its next fresh key, an open transaction's
    keys, and whether the query is down (a crash with new transactions) or refused for good."""

    def __init__(self) -> None:
        self.keys: list[set[int]] = [set() for _ in range(SESSIONS)]
        self.fresh = [s * KEYS_PER_SESSION for s in range(SESSIONS)]
        self.values = 0
        self.new = False  # committed since the last trigger, restart or PostgreSQL restart
        self.down = False

    def value(self) -> str:
        self.values += 1
        return f"v{self.values}"


def _write(source: Source, state: CdcState, session: int, view: set[int], large: bool = False) -> Action:
    """A write that suits `view` (the session's keys as its transaction sees them), which it updates."""
    ops = [Op.INSERT] + ([Op.UPDATE, Op.DELETE] if view else [])
    op = Op.INSERT if large else source.choice(ops)
    count = LARGE if large else 1
    if op == Op.INSERT:
        key = state.fresh[session]
        state.fresh[session] += count
        view.update(range(key, key + count))
    else:
        key = source.choice(sorted(view))
        if op == Op.DELETE:
            view.discard(key)
    args: dict[str, object] = {CdcArg.SESSION: session, CdcArg.OP: op, CdcArg.KEY: key, CdcArg.COUNT: count}
    if op != Op.DELETE:
        args[CdcArg.VALUE] = state.value()
    return Action(CdcAction.WRITE, args)


def transaction(source: Source, state: CdcState, session: int = 0, inner: int | None = None) -> list[Action]:
    """A committed transaction of `session`: begin, writes, commit; with `inner`, a transaction of that
    session begins and commits between its writes (interleaved)."""
    view = set(state.keys[session])
    actions = [Action(CdcAction.BEGIN, {CdcArg.SESSION: session})]
    large = source.boolean(0.1)
    actions.append(_write(source, state, session, view, large))
    actions += [_write(source, state, session, view) for _ in range(source.integer(0, 3))]
    if inner is not None:
        actions[2:2] = transaction(source, state, inner)
    actions.append(Action(CdcAction.COMMIT, {CdcArg.SESSION: session}))
    state.keys[session], state.new = view, True
    return actions


def twice(state: CdcState, session: int = 0) -> list[Action]:
    """A transaction inserting a key and updating it twice."""
    key = state.fresh[session]
    state.fresh[session] += 1
    state.keys[session].add(key)
    state.new = True
    write: dict[str, object] = {CdcArg.SESSION: session, CdcArg.KEY: key, CdcArg.COUNT: 1}
    return [
        Action(CdcAction.BEGIN, {CdcArg.SESSION: session}),
        Action(CdcAction.WRITE, {**write, CdcArg.OP: Op.INSERT, CdcArg.VALUE: state.value()}),
        Action(CdcAction.WRITE, {**write, CdcArg.OP: Op.UPDATE, CdcArg.VALUE: state.value()}),
        Action(CdcAction.WRITE, {**write, CdcArg.OP: Op.UPDATE, CdcArg.VALUE: state.value()}),
        Action(CdcAction.COMMIT, {CdcArg.SESSION: session}),
    ]


def large(state: CdcState, session: int = 0) -> list[Action]:
    """A transaction inserting `LARGE` rows in one statement."""
    key = state.fresh[session]
    state.fresh[session] += LARGE
    state.keys[session].update(range(key, key + LARGE))
    state.new = True
    args: dict[str, object] = {
        CdcArg.SESSION: session,
        CdcArg.OP: Op.INSERT,
        CdcArg.KEY: key,
        CdcArg.COUNT: LARGE,
    }
    return [
        Action(CdcAction.BEGIN, {CdcArg.SESSION: session}),
        Action(CdcAction.WRITE, {**args, CdcArg.VALUE: state.value()}),
        Action(CdcAction.COMMIT, {CdcArg.SESSION: session}),
    ]


def crash(point: str, kill: bool = False) -> Action:
    args: dict[str, object] = {IngestionArg.FAULT: point}
    if kill:
        args[IngestionArg.KILL] = True
    return Action(CdcAction.TRIGGER, args)


def _trigger(source: Source, state: CdcState, kill: bool) -> list[Action]:
    """A trigger, a crash at a point 2 in 5 (down only when it fires: something new was committed)."""
    action = crash(source.choice(CRASH_POINTS), kill) if source.boolean(0.4) else TRIGGER
    state.down = action is not TRIGGER and state.new
    state.new = False
    return [action]


def _step(source: Source, state: CdcState, kill: bool) -> list[Action]:
    kind = source.integer(0, 9)
    if kind < 3:
        return transaction(source, state, kind // 2)
    if kind == 3:
        return transaction(source, state, 0, inner=1)
    if kind == 4:
        state.new = False  # processed before PostgreSQL restarts
        return [POSTGRES_RESTART]
    if state.down:
        state.down = state.new = False
        return [RESTART]
    return _trigger(source, state, kill)


def draw_cdc_history(source: Source, domain_name: str, max_steps: int = 8, kill: bool = False) -> History:
    """A transaction, then up to `max_steps` mixed steps; a history whose query is down may end with the
    slot moved ahead of it. `kill` crashes by SIGKILL."""
    state = CdcState()
    actions = transaction(source, state)
    for step in repeat(source, lambda: _step(source, state, kill), 0, max_steps, 0.85):
        actions += step
    if state.down and source.boolean(0.2):
        actions += transaction(source, state) + [SLOT_AHEAD]
    return History(domain_name, tuple(actions))


Draw = Callable[[Source, str], History]


def _crashes(kill: bool) -> Draw:
    """A crash at each point, each followed by a restart; the batch a crash after the sink left
    uncommitted is run again. With `kill`, each crash SIGKILLs a separate driver."""

    def draw(source: Source, domain_name: str) -> History:
        state = CdcState()
        actions = transaction(source, state) + [TRIGGER]
        for point in CRASH_POINTS:
            actions += transaction(source, state) + [crash(point, kill), RESTART]
        return History(domain_name, tuple(actions))

    return draw


def _transactions(source: Source, domain_name: str) -> History:
    """Interleaved sessions, a key updated twice, a large transaction; PostgreSQL restarted under the
    running query; a restart with the slot behind the checkpoint (Spark commits upstream a batch late)."""
    state = CdcState()
    actions = transaction(source, state, 0, inner=1) + twice(state) + [TRIGGER] + large(state, 1)
    actions += [TRIGGER, POSTGRES_RESTART] + transaction(source, state, 1) + [TRIGGER, RESTART]
    return History(domain_name, tuple(actions))


def _slot_ahead(source: Source, domain_name: str) -> History:
    """A batch committed, a crash after the next one's offsets, more committed, the slot moved past the
    checkpoint while the query is down: the final restart must be refused."""
    state = CdcState()
    actions = transaction(source, state) + [TRIGGER] + transaction(source, state)
    actions += [crash(CrashPoint.AFTER_OFFSETS)] + transaction(source, state) + [SLOT_AHEAD]
    return History(domain_name, tuple(actions))


def directed(kill: bool = False) -> dict[str, Draw]:
    """For each required hard case, a draw of a small history that reaches it (`Property.directed`); the
    SIGKILL cases share one history, and so do the in-process crashes and the transactions' shapes.

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> [a.name for a in directed()[SLOT_AHEAD_REFUSED](RandomSource(0), "total").actions][-3:]
    ['write', 'commit', 'slot_ahead']
    """
    crashes, killings = _crashes(kill), _crashes(True)
    return {
        **{crashed(p): crashes for p in CRASH_POINTS},
        **{killed(p): killings for p in CRASH_POINTS},
        RERUN: crashes,
        **{case: _transactions for case in (INTERLEAVED, TWICE, LARGE_TXN, POSTGRES, SLOT_BEHIND)},
        SLOT_AHEAD_REFUSED: _slot_ahead,
    }
