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
  reading below one it has handed out: `ClockRegression`); a restart is a new driver process with
  a JVM of its own, whose clock is its own;
- a batch sees the clock it was journaled with: `current_timestamp()` in it equals its
  `batchTimestampMs`, a batch re-run after a crash included, and a batch without a get too (every
  batch answers a probe).

The implementation is Spark's (`frontier_harness.spark_impl.ttl.state.store`); the model
has no such engine, so the suite runs against Spark only. The hard cases are counted from what
each trial observed (`reached`): the crash a driver was seen killed at, a batch whose clock another
start of the query read than the batch before's, the answers and clocks
that show a value expiring between two gets, a put over an expired value, a get after a delete.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from frontier_harness.model.errors import ClockRegression
from frontier_harness.model.ttl.clock import ManualClock
from frontier_harness.model.ttl.store import StoreOptions, TtlStore
from frontier_harness.model.vocabulary.ttl import StateAction, StateArg, StateLabel
from frontier_harness.properties.checks.ttl.strategies.spark_state import draw_state_history
from frontier_harness.properties.engine.history import Action, History
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
    """The gets against the model at the observed clocks; the clock and `current_timestamp()` laws (every
    batch's: one that answered nothing at all fails, its clock unseen)."""
    clocks = clocks_of(observed)
    for step, ms in sorted(clocks.items()):
        now = observed.get((step, StateLabel.NOW), frozenset())
        if now != frozenset({(ms,)}):
            saw = f"saw current_timestamp() {sorted(n for (n,) in now)}" if now else "answered nothing"
            message = f"the batch at step {step} {saw}, its batchTimestampMs is {ms}"
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
    """One call for the batch; each history judged on its own observation, with what it reached."""
    observed = observations(impl, METHOD, histories)
    return [attrs.evolve(judge(h, o), reached=tuple(reached(h, o))) for h, o in zip(histories, observed)]


def reached(history: History, observed: Observation) -> list[str]:
    """The hard cases the observation shows: a batch whose driver was seen killed after its sink (`killed`;
    the judge holds its re-run to the clock it journaled); two of the history's batches in a row whose
    clocks were read by different starts of the query (`run`: a restart, a driver of its own); a get that answered a value, then the next get of its key
    (no write between) that answered none, after a long wait (the straddle); a put of a key at a clock at or
    past its last put's plus the TTL, then a get of it (a put over an expired value); a get after a delete
    of its key, answered (a get after a delete)."""
    found: set[str] = set()
    steps = sorted(clocks_of(observed))
    runs = {s: next(iter(observed[(s, StateLabel.RUN)]))[0] for s in steps if (s, StateLabel.RUN) in observed}
    killed = {s for s in steps if (s, StateLabel.KILLED) in observed}
    found |= {CRASH} if killed else set()
    found |= {RESTART} if any(runs.get(a) != runs.get(b) for a, b in zip(steps, steps[1:])) else set()
    return sorted(found | _answered(history, observed))


def _answered(history: History, observed: Observation) -> set[str]:
    """The straddle, a put over an expired value and a get after a delete, from the answers and clocks."""
    ttl = next(a.args[StateArg.TTL_MS] for a in history.actions if a.name == StateAction.OPEN)
    clocks = clocks_of(observed)
    answers = {
        (step, index): value
        for (step, label), rows in observed.items()
        if label == StateLabel.GET
        for index, _, value in rows
    }
    found: set[str] = set()
    last: dict[str, tuple[str, object]] = {}  # key -> what the last request of it was, and what it saw
    put_at: dict[str, int] = {}  # key -> the clock of its last put
    pending: list[Action] = []
    for step, action in enumerate(history.actions):
        if action.name in (StateAction.PUT, StateAction.GET, StateAction.DELETE):
            pending.append(action)
            continue
        if action.name != StateAction.TRIGGER or step not in clocks:
            continue
        for index, request in enumerate(pending):
            key = request.args[StateArg.KEY]
            if request.name == StateAction.GET:
                value = answers.get((step, index), "unanswered")
                before = last.get(key)
                if before == ("get", "value") and value is None:
                    found.add(STRADDLE)
                if before is not None and before[0] == "expired put" and value != "unanswered":
                    found.add(REWRITE)
                if before is not None and before[0] == "delete" and value is None:
                    found.add(DELETED)
                if value != "unanswered":
                    last[key] = ("get", "value" if value is not None else None)
            elif request.name == StateAction.PUT:
                expired = key in put_at and clocks[step] >= put_at[key] + ttl
                last[key] = ("expired put" if expired else "put", None)
                put_at[key] = clocks[step]
            else:
                last[key] = ("delete", None)
                put_at.pop(key, None)
        pending = []
    return found


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
            check=check,  # its outcomes carry what each history reached
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
