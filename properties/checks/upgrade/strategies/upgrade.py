"""Histories of an upgrade: a stateful job's history (`frontier_harness.properties.checks.event_time.strategies.
stateful`) in which one `restart {upgrade}` switches the query to the new job, at a drawn point: after a
clean stop (a restart inserted while the query runs) or after a crash (the restart that brings a crashed
query back, or one inserted while it is down).

`scripted_upgrade` writes a small one from the stateful suite's script words, `upgrade` marking the switch;
`held_across` one whose only window group is in state at the switch and updated after it.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> from frontier_harness.model.event_time.stateful import StatefulPlan, Window
>>> plan = StatefulPlan("aggregation", (5_000,), Window(10_000), ("key",), "update", 5_000)
>>> h = scripted_upgrade(RandomSource(0), "partitioned", plan, "ahead trigger upgrade ahead trigger")
>>> [(a.name, a.args.get("upgrade")) for a in h.actions][2:4]
[('trigger', None), ('restart', True)]
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.event_time.stateful import StatefulPlan
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import StreamingAction, Trigger
from frontier_harness.model.vocabulary.upgrade import UpgradeArg
from frontier_harness.properties.checks.event_time.strategies.stateful import (
    KEYS,
    draw_stateful_history,
    scripted,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source

SWITCH = Action(StreamingAction.RESTART, {UpgradeArg.UPGRADE: True})


def switch_step(history: History) -> int | None:
    """The index of the history's upgrade restart, or None."""
    return next(
        (
            i
            for i, a in enumerate(history.actions)
            if a.name == StreamingAction.RESTART and a.args.get(UpgradeArg.UPGRADE)
        ),
        None,
    )


def draw_upgrade_history(source: Source, domain_name: str, plan: StatefulPlan, kill: bool = False) -> History:
    """A stateful history with its switch: half the time the restart after a crash (when there is one),
    otherwise a restart inserted after a drawn action (the old job stops there, cleanly or down)."""
    history = draw_stateful_history(source, domain_name, plan, kill=kill)
    actions = list(history.actions)
    restarts = [i for i, a in enumerate(actions) if a.name == StreamingAction.RESTART]
    if restarts and source.boolean(0.5):
        actions[source.choice(restarts)] = SWITCH
    else:
        actions.insert(source.integer(1, len(actions)), SWITCH)
    return History(domain_name, tuple(actions))


def scripted_upgrade(
    source: Source, domain_name: str, plan: StatefulPlan, script: str, trigger: str = Trigger.PROCESSING_TIME
) -> History:
    """`strategies.stateful.scripted`'s history of `script`, its word `upgrade` the switch."""
    words = script.split()
    at = words.index("upgrade")
    history = scripted(
        source, domain_name, plan, " ".join(w if w != "upgrade" else "restart" for w in words), trigger
    )
    restarts = [i for i, a in enumerate(history.actions) if a.name == StreamingAction.RESTART]
    switch = restarts[sum(w == "restart" for w in words[:at])]
    actions = list(history.actions)
    actions[switch] = SWITCH
    return History(domain_name, tuple(actions))


def held_across(source: Source, domain_name: str, plan: StatefulPlan) -> History:
    """Two records of one group (one key, and one data when the plan keys on it) in the middle of one window,
    a batch each, the switch between them: the window's group is held in state at the switch (the
    watermark, a delay behind the first record, is before the window's end) and updated after it."""
    assert plan.window is not None, "held_across: a window aggregation's history"
    middle = plan.window.start + plan.window.slide + plan.window.duration // 2

    def record(i: int, time: int) -> Action:
        data = "r0" if Arg.DATA in plan.keys else f"r{i}"  # a group of data too: the same data again
        args: dict[str, Any] = {
            IngestionArg.PARTITION: 0,
            IngestionArg.KEY: KEYS[0],
            IngestionArg.EVENT_TIME: time,
            Arg.DATA: data,
        }
        return Action(StreamingAction.PRODUCE, args)

    trigger = Action(StreamingAction.TRIGGER, {})
    query = Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: Trigger.PROCESSING_TIME})
    later = middle + plan.window.duration // 4
    return History(domain_name, (query, record(0, middle), trigger, SWITCH, record(1, later), trigger))
