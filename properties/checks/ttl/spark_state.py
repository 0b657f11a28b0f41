"""The *ttl_spark_state* suite: state TTL on Spark's own engine, its clock the batch timestamp, across restarts.

Histories (`frontier_harness.properties.checks.ttl.strategies.spark_state`) put, get and
delete values of a `transformWithState` value state with a TTL, batch by batch, with waits
in real time, crashes that re-run a batch and restarts. An implementation observes, per
batch, each get's answer, the batch's clock (`batchTimestampMs` in its offsets) and
`current_timestamp()` as the batch saw it. The reference is the TTL model (`model/ttl/`,
`TtlStore` with the state's TTL as its default) driven by those clocks, every request of a
batch at its batch's reading:

- every get equals the model's: a value is visible until its batch timestamp reaches
  written + TTL, never after; a put restarts its expiry; a delete hides it;
- the clock never goes back, not across a restart either (the model's clock refuses a
  reading below one it has handed out: `ClockRegression`);
- a batch sees the clock it was journaled with: `current_timestamp()` in it equals its
  `batchTimestampMs`, a batch re-run after a crash included.

The implementation is Spark's (`frontier_harness.spark_impl.ttl.state.store`); the model
has no such engine, so the suite runs against Spark only.
"""

from __future__ import annotations

from collections.abc import Sequence

from frontier_harness.model.errors import ClockRegression
from frontier_harness.model.ttl.clock import ManualClock
from frontier_harness.model.ttl.store import StoreOptions, TtlStore
from frontier_harness.model.vocabulary.ttl import StateAction, StateArg, StateLabel
from frontier_harness.properties.checks.ttl.strategies.spark_state import LONG_WAIT_MS, draw_state_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Observation
from frontier_harness.properties.engine.suite import Outcome, Property, Suite, compare, observations

METHOD = "observe_ttl_spark_state"
STRADDLE = "gets straddling an expiry"
REWRITE = "a put over an expired value, then a get"
CRASH = "a batch re-run after a crash"
RESTART = "a restart between batches"
DELETED = "a get after a delete"


def clocks_of(observed: Observation) -> dict[int, int]:
    """Each trigger step's batch clock, as the implementation observed it."""
    return {
        step: next(iter(found))[0] for (step, label), found in observed.items() if label == StateLabel.CLOCK
    }


def expected_gets(history: History, clocks: dict[int, int]) -> Observation:
    """The model's answers, each batch's requests at its clock: `ClockRegression` if a clock goes back."""
    ttl = next(a.args[StateArg.TTL_MS] for a in history.actions if a.name == StateAction.OPEN)
    clock = ManualClock(0)
    store = TtlStore.open(clock, StoreOptions(default_ttl=ttl))
    pending: list = []
    observed: Observation = {}
    for step, action in enumerate(history.actions):
        if action.name in (StateAction.PUT, StateAction.GET, StateAction.DELETE):
            pending.append(action)
        elif action.name == StateAction.TRIGGER:
            clock.set(clocks[step])
            observed[(step, StateLabel.GET)] = frozenset(_apply(store, pending))
            pending = []
    return observed


def _apply(store: TtlStore, requests: list) -> list[tuple]:
    answers = []
    for index, request in enumerate(requests):
        key = request.args[StateArg.KEY].encode()
        if request.name == StateAction.PUT:
            store.put(key, request.args[StateArg.VALUE].encode())
        elif request.name == StateAction.DELETE:
            store.delete(key)
        else:
            found = store.get(key)
            answers.append((index, request.args[StateArg.KEY], None if found is None else found.decode()))
    return answers


def judge(history: History, observed: Observation) -> Outcome:
    """The gets against the model at the observed clocks; the clock and `current_timestamp()` laws."""
    clocks = clocks_of(observed)
    for step, ms in sorted(clocks.items()):
        now = observed.get((step, StateLabel.NOW))
        if now is not None and now != frozenset({(ms,)}):
            message = f"the batch at step {step} saw current_timestamp() {sorted(now)}, its batchTimestampMs is {ms}"
            return Outcome(
                ok=False,
                message=message,
                expected={(step, StateLabel.NOW): frozenset({(ms,)})},
                actual={(step, StateLabel.NOW): now},
                step=step,
            )
    try:
        expected = expected_gets(history, clocks)
    except ClockRegression as error:
        back = next((s for s, ms in sorted(clocks.items()) if ms == error.reading), None)
        return Outcome(ok=False, message=f"the batch clock went back: {error}", step=back)
    actual = {k: v for k, v in observed.items() if k[1] == StateLabel.GET}
    return compare(expected, actual)


def check(impl: Implementation, histories: Sequence[History]) -> list[Outcome]:
    """One call for the batch; each history judged on its own observation."""
    return [judge(h, o) for h, o in zip(histories, observations(impl, METHOD, histories))]


def events(history: History) -> list[str]:
    """Hard cases, from the history: the straddle, a put over an expired value, a crash, a restart, a delete."""
    found: set[str] = set()
    rounds: list[tuple[list, dict]] = []
    pending: list = []
    for action in history.actions:
        if action.name == StateAction.TRIGGER:
            rounds.append((pending, action.args))
            pending = []
        elif action.name in (StateAction.PUT, StateAction.GET, StateAction.DELETE):
            pending.append(action)
    found |= {CRASH} if any(args.get(StateArg.CRASH) for _, args in rounds) else set()
    found |= {RESTART} if any(a.name == StateAction.RESTART for a in history.actions) else set()
    for before, after in zip(rounds, rounds[1:]):
        if after[1].get(StateArg.WAIT_MS, 0) < LONG_WAIT_MS:
            continue
        written = {r.args[StateArg.KEY] for r in before[0] if r.name == StateAction.PUT}
        firsts = _first_requests(after[0])
        found |= (
            {STRADDLE}
            if any(firsts.get(k) == StateAction.GET and _read_after_put(before[0], k) for k in written)
            else set()
        )
        found |= (
            {REWRITE}
            if any(firsts.get(k) == StateAction.PUT and _get_after(after[0], k) for k in written)
            else set()
        )
    requests = [r for requests, _ in rounds for r in requests]
    found |= (
        {DELETED}
        if any(
            _get_after(requests[i:], r.args[StateArg.KEY])
            for i, r in enumerate(requests)
            if r.name == StateAction.DELETE
        )
        else set()
    )
    return sorted(found)


def _first_requests(requests: list) -> dict[str, str]:
    firsts: dict[str, str] = {}
    for r in requests:
        firsts.setdefault(r.args[StateArg.KEY], r.name)
    return firsts


def _read_after_put(requests: list, key: str) -> bool:
    """The round's last write of `key` is a put, read after it in the round."""
    ops = [r.name for r in requests if r.args[StateArg.KEY] == key]
    last_write = max((i for i, op in enumerate(ops) if op != StateAction.GET), default=None)
    return (
        last_write is not None and ops[last_write] == StateAction.PUT and StateAction.GET in ops[last_write:]
    )


def _get_after(requests: list, key: str) -> bool:
    ops = [r.name for r in requests if r.args[StateArg.KEY] == key]
    return StateAction.GET in ops[1:]


SUITE = Suite(
    name="ttl_spark_state",
    doc="State TTL on Spark's engine (transformWithState, ttlDurationMs, the batch clock): gets match the TTL "
    "model at each batch's batchTimestampMs; the clock never goes back; a re-run batch sees its journaled clock.",
    properties=(
        Property(
            name="gets_match_the_model_at_the_batch_clock",
            doc="Every get equals the TTL model's at its batch's batchTimestampMs; clocks never go back; "
            "current_timestamp() in a batch is its batchTimestampMs, after a crash too.",
            draw=draw_state_history,
            check=check,
            events=events,
        ),
    ),
    default_impl="spark",
    batched_cost=500.0,  # every history of a call runs in one query, a micro-batch a round, in real time
    shrink_batch=256,
    serial_jobs=True,
    calls=(METHOD,),
    required_events=(STRADDLE, REWRITE, CRASH, RESTART, DELETED),
    domains=("total",),
)
