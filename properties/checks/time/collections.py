"""The *collections* suite: an implementation's update collections against the model's.

Histories of updates, reads and compactions (`frontier_harness.properties.checks.time.strategies.collections`);
every read and the final consolidated collection must equal the model's.

Required hard cases (in every domain unless `event_domains` says; docs/required-events.md):
the boundaries of `<=` (a read exactly at an update's time or a since element), of
consolidation (merge, cancel to zero, distinct times compacted into one), of compaction
(a read after one at a time it moved, and the same time read before and after it: a
cache compaction should have invalidated), two compactions, the empty frontier, and an
update at the row format's largest value. Incomparable times exist only in the partial
domains, and a time with no join only in `partitioned` (disjoint partition ranges).
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, advance_collection, at, consolidate
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.time import (
    CollectionAction,
    CollectionCompact,
    CollectionLabel,
    CollectionRead,
    CollectionUpdate,
    collection_steps,
)
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.checks.time.strategies.times import LONG_MAX
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Reference, Suite, differential


def observe(history: History) -> Observation:
    """The model's observations: contents at each read, and the final consolidated collection."""
    domain, updates, observed = history.time_domain, list[Update](), dict[tuple[int, str], frozenset]()
    for step in collection_steps(history):
        match step:
            case CollectionUpdate(data=data, time=time, diff=diff):
                updates.append(Update(data, time, diff))
            case CollectionRead(step=at_step, time=time):
                observed[(at_step, CollectionLabel.READ)] = frozenset(at(domain, updates, time).items())
            case CollectionCompact(since=since):
                updates = advance_collection(domain, updates, Antichain.checked(domain, since))
    final = consolidate(domain, updates)
    observed[(len(history.actions), CollectionLabel.FINAL)] = frozenset(
        (u.data, u.time, u.diff) for u in final
    )
    return observed


MERGE = "updates merge or cancel in consolidation"
CANCEL = "updates cancel to a zero diff"
INCOMPARABLE = "incomparable update times"
AFTER = "read after compaction"
MOVED = "read after a compaction, at a time it moved"
STALE = "time read before and after a compaction that changed its answer, no update between"
AT_UPDATE = "read exactly at an update's time"
AT_SINCE = "read exactly at a since element"
COLLAPSED = "compaction merges distinct update times"
TWICE = "a second compaction"
EMPTY = "compaction to the empty frontier"
NO_JOIN = "time with no join against a frontier element"
LIMIT = "update time at the row format's largest value"


def events(history: History) -> list[str]:
    """Hard cases this history reaches: the boundaries of `<=`, consolidation and compaction.

    A read "at a time it moved" answers differently over the compacted collection than
    over the same updates uncompacted (its time is not beyond the since); when that
    time was also read before the compaction, a cached answer would be stale.
    """
    domain, found = history.time_domain, set()
    updates = [a for a in history.actions if a.name == CollectionAction.UPDATE]
    merged = consolidate(
        domain, (Update(a.args[Arg.DATA], a.args[Arg.TIME], a.args[Arg.DIFF]) for a in updates)
    )
    if len(merged) < len(updates):
        found.add(MERGE)
    if {(a.args[Arg.DATA], a.args[Arg.TIME]) for a in updates} - {(u.data, u.time) for u in merged}:
        found.add(CANCEL)
    times = [a.args[Arg.TIME] for a in updates]
    if any(not domain.le(s, t) and not domain.le(t, s) for s in times for t in times):
        found.add(INCOMPARABLE)
    if any(_at_limit(domain, t) for t in times):
        found.add(LIMIT)
    return sorted(found | _compaction_events(history, times))


def _at_limit(domain, time) -> bool:
    if domain.name == "total":
        return time == LONG_MAX
    if domain.name == "partitioned":
        return time.offset == LONG_MAX
    return _at_limit(domain.a, time[0]) or _at_limit(domain.b, time[1])


def _compaction_events(history: History, times: list) -> set[str]:
    domain, found = history.time_domain, set()
    raw, compacted, sinces, answers = list[Update](), list[Update](), list[Antichain](), dict[Any, Any]()
    for action in history.actions:
        args = action.args
        if action.name == CollectionAction.UPDATE:
            raw.append(Update(args[Arg.DATA], args[Arg.TIME], args[Arg.DIFF]))
            compacted.append(raw[-1])
        elif action.name == CollectionAction.COMPACT:
            frontier = Antichain.of(domain, args[Arg.SINCE])
            found |= {TWICE} if sinces else set()
            found |= {EMPTY} if frontier.is_empty() else set()
            if any(domain.join(t, f) is None for t in times for f in frontier):
                found.add(NO_JOIN)
            before = consolidate(domain, compacted)
            compacted = advance_collection(domain, compacted, frontier)
            if len({u.time for u in compacted}) < len({u.time for u in before}):
                found.add(COLLAPSED)
            sinces.append(frontier)
        elif action.name == CollectionAction.READ:
            t, answer = args[Arg.TIME], at(domain, compacted, args[Arg.TIME])
            found |= {AT_UPDATE} if any(u.time == t for u in raw) else set()
            found |= {AT_SINCE} if any(t in s for s in sinces) else set()
            if sinces:
                found.add(AFTER)
                if answer != at(domain, raw, t):
                    found.add(MOVED)
                    earlier = answers.get(t)
                    if earlier and earlier[:2] == (len(raw), len(sinces) - 1) and earlier[2] != answer:
                        found.add(STALE)
            answers[t] = (len(raw), len(sinces), answer)
    return found


SUITE = Suite(
    name="collections",
    doc="Update collections (consolidate, contents at a time, compaction) against the model.",
    properties=(
        Property(
            name="observations_match_model",
            doc="Every read and the final consolidated collection equal the model's.",
            draw=draw_collection_history,
            check=differential(observe, "observe_collections"),
            events=events,
        ),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    required_events=(
        MERGE,
        CANCEL,
        INCOMPARABLE,
        AFTER,
        MOVED,
        STALE,
        AT_UPDATE,
        AT_SINCE,
        COLLAPSED,
        TWICE,
        EMPTY,
        NO_JOIN,
        LIMIT,
    ),
    event_domains={
        INCOMPARABLE: ("product(total,total)", "partitioned"),
        NO_JOIN: ("partitioned",),
    },
)
