"""Histories over one update collection: updates, reads at a time, and compactions.

Semantics (the model's, in `frontier_harness.properties.checks.time.collections`): the collection
starts empty; `update` adds `(data, time, diff)`; `read` observes the contents at
`time`; `compact` advances every time so far by `since`. At the end the whole
collection is observed consolidated.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_collection_history(RandomSource(3), "total", min_updates=20)
>>> sum(a.name == CollectionAction.UPDATE for a in h.actions) >= 20
True
"""

from __future__ import annotations

from frontier_harness.model.time.domains import parse_domain
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.time import CollectionAction
from frontier_harness.properties.checks.time.strategies.times import (
    draw_extreme_time,
    draw_frontier,
    draw_time,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source

DATA = ("a", "b", "c")


def draw_update(source: Source, domain) -> Action:
    """An update; one time in 16 at the row format's limits (`draw_extreme_time`)."""
    diff = source.choice((1, -1, 2, 1))
    time = draw_extreme_time(source, domain) if source.integer(0, 15) == 15 else draw_time(source, domain)
    return Action(CollectionAction.UPDATE, {Arg.DATA: source.choice(DATA), Arg.TIME: time, Arg.DIFF: diff})


def draw_read_time(source: Source, domain, earlier: list) -> object:
    """A read's time: drawn, or exactly the last read's, or an earlier update's, read's or since
    element's time (the boundaries of `<=` and of compaction), so that a time is read before and
    after a compaction."""
    reads = [a.args[Arg.TIME] for a in earlier if a.name == CollectionAction.READ]
    if reads and source.boolean(0.3):
        return reads[-1]
    seen = [a.args[Arg.TIME] for a in earlier if Arg.TIME in a.args]
    seen += [t for a in earlier if a.name == CollectionAction.COMPACT for t in a.args[Arg.SINCE]]
    if seen and source.boolean(0.6):
        return seen[source.integer(0, len(seen) - 1)]
    return draw_time(source, domain)


def draw_since(source: Source, domain, earlier: list) -> tuple:
    """A compaction's frontier: drawn, or one element strictly beyond the last read's time (so the
    compaction moves the updates that read saw)."""
    reads = [a.args[Arg.TIME] for a in earlier if a.name == CollectionAction.READ]
    if reads and source.boolean(0.5):
        beyond = domain.join(reads[-1], draw_time(source, domain))
        if beyond is not None and beyond != reads[-1]:
            return (beyond,)
    return tuple(draw_frontier(source, domain).sorted())


def draw_step(source: Source, domain, earlier: list) -> Action:
    """Mostly updates (some retracting an earlier one); sometimes a read or a compaction."""
    updates = [a for a in earlier if a.name == CollectionAction.UPDATE]
    reads = [a for a in earlier if a.name == CollectionAction.READ]
    if earlier and earlier[-1].name == CollectionAction.COMPACT and reads and source.boolean(0.4):
        return reads[-1]  # the time read just before the compaction, read again
    kind = source.integer(0, 9)
    if kind < 5 or (kind < 7 and not updates):
        return draw_update(source, domain)
    if kind < 7:
        undone = updates[source.integer(0, len(updates) - 1)].args
        return Action(CollectionAction.UPDATE, {**undone, Arg.DIFF: -undone[Arg.DIFF]})
    if kind < 9:
        return Action(CollectionAction.READ, {Arg.TIME: draw_read_time(source, domain, earlier)})
    return Action(CollectionAction.COMPACT, {Arg.SINCE: draw_since(source, domain, earlier)})


def draw_collection_history(
    source: Source, domain_name: str, min_updates: int = 0, max_steps: int = 30
) -> History:
    """A history with at least `min_updates` updates, then up to `max_steps` mixed steps."""
    domain = parse_domain(domain_name)
    actions = [draw_update(source, domain) for _ in range(min_updates)]
    for _ in range(max_steps):
        if not source.boolean(0.85):
            break
        actions.append(draw_step(source, domain, actions))
    return History(domain_name, tuple(actions))
