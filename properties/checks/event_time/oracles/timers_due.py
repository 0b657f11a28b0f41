"""When a user's processor's timers must have fired, by the model's clocks (`model.event_time.timers`), read
from the state its trial left: a part of `crash_invisible`'s judgement (issue 52's point 3).

Spark fires a `transformWithState...` timer at `t` in the first batch whose clock reaches it (`t <= E(N)`, or
`t <= T(N)` in processing time) and deletes it once its handler ran, so a handler that registers the same
time again leaves nothing; it times a group's timeout out (`applyInPandasWithState`) in the first batch whose
clock is past it (`t < E(N)`), clears it whenever it calls the function, and takes a new one no earlier than
that clock. Either way, **a timer the state held after batch N-1 that batch N's clock reached is gone after
batch N**: fired, or deleted by the processor. A timer set while batch N's timers fire may stay registered,
expired, after N (it waits for N+1); it was not in the state after N-1.

`overdue(state, clock)` reads that from the processor's state after every committed batch (`processor_state`
at the final step, read from the batch before its second start on) and each batch's clock as the offset log
journaled it (`processor_reached.clocks`); it returns what a failure names, the key, the timer, the batch and
its clock, or None. A group's timeout is told from a timer by the group's state, read beside it
(`GROUP_STATE`).

>>> held = lambda b, t: {(b, 0, None, None, None), (b, 0, "$timers", '{"key":"b"}', t)}
>>> print(overdue(held(3, 20_000) | held(4, 20_000), {3: 0, 4: 20_000}))
after batch 4 the timer of key {"key":"b"} at 20000 ms is still registered: the state after batch 3 held it, and batch 4's clock, 20000 ms, is at or past it (a timer fires in the first batch whose clock is at or past it)
>>> overdue(held(3, 20_000) | held(4, 20_000), {3: 0, 4: 19_999}) is None
True
>>> overdue(held(3, 20_000) | {(4, 0, None, None, None)}, {3: 20_000, 4: 25_000}) is None  # set by a timer in 3: fired in 4
True
>>> group = {(3, 0, "$groupState", '{"key":"b"}', "1")}
>>> overdue(held(3, 20_000) | held(4, 20_000) | group, {4: 20_000}) is None  # a timeout exactly at E waits
True
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from frontier_harness.model.event_time.timers import expired, timed_out
from frontier_harness.properties.checks.event_time.processor_reached import TIMERS

GROUP_STATE = "$groupState"  # `spark_impl.event_time.processor_state.GROUP_STATE`: a group's state


def overdue(state: Set[tuple], clock: Mapping[int, int]) -> str | None:
    """The first timer (or group timeout) the state held after a batch and still after the next, whose clock
    reached it (see the module), as a failure names it; None when every such timer is gone. A timer held in
    two batches' states was read in both."""
    groups = {(b, op, key) for b, op, variable, key, _ in state if variable == GROUP_STATE}
    timers: dict[tuple[int, int], set[tuple]] = {}
    for b, op, variable, key, at in state:
        if variable == TIMERS:
            timers.setdefault((b, op), set()).add((key, at))
    for (b, op), held in sorted(timers.items()):
        for key, at in sorted(held & timers.get((b + 1, op), set())):
            group = (b, op, key) in groups
            if (timed_out if group else expired)(at, clock[b + 1]):
                return _named(key, at, b + 1, clock[b + 1], group)
    return None


def _named(key: str, at: int, batch: int, now: int, group: bool) -> str:
    what, rule = ("timeout", "past") if group else ("timer", "at or past")
    return (
        f"after batch {batch} the {what} of key {key} at {at} ms is still registered: the state after batch "
        f"{batch - 1} held it, and batch {batch}'s clock, {now} ms, is {rule} it (a {what} fires in the first "
        f"batch whose clock is {rule} it)"
    )
