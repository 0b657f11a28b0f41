"""Histories for the ttl_spark_state suite: requests to a TTL store on Spark's engine, batch by batch.

`open(ttl_ms)`, then rounds: a few `put(key, value)`, `get(key)`, `delete(key)` requests,
ended by `trigger(wait_ms, crash?)`, which runs them as one micro-batch after waiting
`wait_ms` of real time: 0, or at least twice the TTL (batches are spaced in real time:
PySpark cannot set Spark's clock, so a wait of twice the TTL is what makes an expiry
certain), sometimes a `restart` first. Most histories open with the straddle: a put
and a get of one key in a batch, then a get of it in the next batch, after a long wait:
the last batch below its expiry and the first at or above it (or a put over the expired
value, then a get: a put restarts the expiry; or a delete, then a get). Short, to keep a run
of real batches within a minute.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> draw_state_history(RandomSource(3)).actions[0].args
{'ttl_ms': 2000}
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.ttl import StateAction, StateArg
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

TTL_MS = 2000
LONG_WAIT_MS = 2 * TTL_MS
KEYS = ("a", "b")
VALUES = ("x", "y")


def _request(source: Source) -> Action:
    kind = source.choice(
        (StateAction.PUT, StateAction.PUT, StateAction.GET, StateAction.GET, StateAction.DELETE)
    )
    args: dict[str, str] = {StateArg.KEY: source.choice(KEYS)}
    if kind == StateAction.PUT:
        args[StateArg.VALUE] = source.choice(VALUES)
    return Action(kind, args)


def _trigger(source: Source, wait: bool | None = None) -> Action:
    long_wait = source.boolean(0.3) if wait is None else wait
    args: dict[str, object] = {StateArg.WAIT_MS: LONG_WAIT_MS if long_wait else 0}
    if source.boolean(0.2):
        args[StateArg.CRASH] = True
    return Action(StateAction.TRIGGER, args)


def _straddle(source: Source) -> list[Action]:
    """A put and a get of a key in one batch; after a long wait a get of it (or a put over it, or a delete,
    then a get)."""
    key = source.choice(KEYS)
    put = Action(StateAction.PUT, {StateArg.KEY: key, StateArg.VALUE: source.choice(VALUES)})
    get = Action(StateAction.GET, {StateArg.KEY: key})
    delete = Action(StateAction.DELETE, {StateArg.KEY: key})
    again = source.choice(([get], [put, get], [delete, get]))
    return [put, get, _trigger(source, wait=False), *again, _trigger(source, wait=True)]


def draw_state_history(source: Source, domain_name: str = "total", max_rounds: int = 3) -> History:
    """`open`, maybe the straddle, then up to `max_rounds` rounds of requests and a trigger."""
    actions = [Action(StateAction.OPEN, {StateArg.TTL_MS: TTL_MS})]
    if source.boolean(0.8):
        actions += _straddle(source)

    def round_() -> list[Action]:
        restart = [Action(StateAction.RESTART, {})] if source.boolean(0.3) else []
        return restart + repeat(source, lambda: _request(source), 0, 3, 0.6) + [_trigger(source)]

    for chunk in repeat(source, round_, 1, max_rounds, 0.6):
        actions += chunk
    return History(domain_name, tuple(actions))
