"""Histories over one update collection: updates, reads at a time, and compactions.

Semantics (the model's, in `frontier_harness.properties.checks.time.collections`): the collection
starts empty; `update` adds `(data, time, diff)`; `read` observes the contents at
`time`; `compact` advances every time so far by `since`. At the end the whole
collection is observed consolidated.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_collection_history(RandomSource(3), "total", min_updates=20)
>>> sum(a.name == "update" for a in h.actions) >= 20
True
"""

from __future__ import annotations

from frontier_harness.model.domains import parse_domain
from frontier_harness.properties.checks.time.strategies.times import draw_frontier, draw_time
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source

DATA = ("a", "b", "c")


def draw_update(source: Source, domain) -> Action:
    diff = source.choice((1, -1, 2, 1))
    return Action("update", {"data": source.choice(DATA), "time": draw_time(source, domain), "diff": diff})


def draw_step(source: Source, domain, earlier: list) -> Action:
    """Mostly updates (some retracting an earlier one); sometimes a read or a compaction."""
    kind = source.integer(0, 9)
    if kind < 5 or (kind < 7 and not earlier):
        return draw_update(source, domain)
    if kind < 7:
        undone = earlier[source.integer(0, len(earlier) - 1)].args
        return Action("update", {**undone, "diff": -undone["diff"]})
    if kind < 9:
        return Action("read", {"time": draw_time(source, domain)})
    return Action("compact", {"since": tuple(draw_frontier(source, domain).sorted())})


def draw_collection_history(
    source: Source, domain_name: str, min_updates: int = 0, max_steps: int = 30
) -> History:
    """A history with at least `min_updates` updates, then up to `max_steps` mixed steps."""
    domain = parse_domain(domain_name)
    actions = [draw_update(source, domain) for _ in range(min_updates)]
    for _ in range(max_steps):
        if not source.boolean(0.85):
            break
        actions.append(draw_step(source, domain, [a for a in actions if a.name == "update"]))
    return History(domain_name, tuple(actions))
