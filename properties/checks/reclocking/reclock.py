"""The *reclock* suite: Spark's remap, reclocked collections and inversion against the model's.

Histories of mints, source updates, compactions, reads, inversions and reclock
points (`frontier_harness.properties.checks.reclocking.strategies.reclocking`), in every FromTime domain. Observed:
`R(tick)` at each read, `source_upper_at` at each inversion, the reclocked
collection and the pending updates at each reclock point and at the end, and the
remap's final (compacted, consolidated) bindings.

Required hard cases (docs/required-events.md), in every domain unless `EVENT_DOMAINS`
says (partitions exist only in `partitioned`, a Total frontier has one element): besides
skipped ticks, a closed source, compactions and pending updates, the boundaries of the
rules: an update exactly at a remap frontier element (not yet reclockable), in
`partitioned` a one-partition update between the offsets of two frontier elements that
cover its partition (beyond the frontier by the least offset only), reads and
inversions exactly at a since a compaction moved, a read at the last readable tick, a
mint exactly at the remap's upper, a compaction to the since it already has, and a
second compaction that moves it.
"""

from __future__ import annotations

from collections.abc import Iterator

from frontier_harness.model.errors import ModelError
from frontier_harness.model.reclocking.reclock import reclock
from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.partitioned_time import PartitionedTime
from frontier_harness.model.vocabulary.reclocking import (
    Compact,
    Mint,
    Observe,
    ReclockAction,
    ReclockLabel,
    ReclockStep,
    SourceUpdate,
    reclock_steps,
)
from frontier_harness.properties.checks.reclocking.strategies.reclocking import draw_reclock_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Reference, Suite, differential


def replay(history: History) -> Iterator[tuple[ReclockStep, Remap, list]]:
    """`(step, remap, updates)` after applying each of the history's decoded steps in order."""
    domain = history.time_domain
    remap, updates = Remap.initial(domain), list[Update]()
    for step in reclock_steps(history):
        match step:
            case Mint(upper=upper, tick=tick):
                remap = remap.mint(Antichain.checked(domain, upper), tick)
            case SourceUpdate(data=data, time=time, diff=diff):
                updates = updates + [Update(data, time, diff)]
            case Compact(to=to):
                remap = remap.compact(Antichain.of(INTO, [to]))
        yield step, remap, updates


def final_state(history: History) -> tuple[Remap, list]:
    """The remap and the source updates after the whole history."""
    remap, updates = Remap.initial(history.time_domain), list[Update]()
    for _, after, now in replay(history):
        remap, updates = after, now
    return remap, updates


def inversion_frontier(step: Observe) -> Antichain:
    """The IntoTime frontier an `invert` step names: `{tick}`, or `{}` when `closed`."""
    return Antichain(INTO) if step.closed else Antichain.of(INTO, [step.tick])


def _reclocked(observed: Observation, step: int, remap: Remap, updates: list[Update]) -> None:
    result = reclock(remap, updates)
    observed[(step, ReclockLabel.RECLOCKED)] = frozenset((u.data, u.time, u.diff) for u in result.updates)
    observed[(step, ReclockLabel.PENDING)] = frozenset((u.data, u.time, u.diff) for u in result.pending)


def observe(history: History) -> Observation:
    """The model's observations of a reclock history."""
    observed: Observation = {}
    remap, updates = Remap.initial(history.time_domain), list[Update]()
    for step, remap, updates in replay(history):
        match step:
            case Observe(kind=ReclockAction.READ, tick=int(tick)):
                observed[(step.step, ReclockLabel.REMAP_AT)] = frozenset(remap.at(tick))
            case Observe(kind=ReclockAction.INVERT):
                inverted = remap.source_upper_at(inversion_frontier(step))
                observed[(step.step, ReclockLabel.INVERTED)] = frozenset(inverted)
            case Observe(kind=ReclockAction.RECLOCK):
                _reclocked(observed, step.step, remap, updates)
    end = len(history.actions)
    _reclocked(observed, end, remap, updates)
    observed[(end, ReclockLabel.BINDINGS)] = frozenset(
        (b.from_time, b.into_time, b.diff) for b in remap.bindings
    )
    return observed


def events(history: History) -> list[str]:
    """Hard cases this history reaches (none for a history the model rejects)."""
    try:
        return _events(history)
    except ModelError:
        return []


def _events(history: History) -> list[str]:
    found: set[str] = set()
    ticks: set[int] = set()
    seen_partitions: set[int] = set()
    remap, updates = Remap.initial(history.time_domain), list[Update]()
    for step, after, now in replay(history):
        updates = now
        match step:
            case Mint(upper=upper, tick=tick):
                found |= _mint_events(remap, after, upper, seen_partitions)
                if after.bindings != remap.bindings:
                    ticks.add(tick)
            case Compact(to=to) if to in ticks and to > 0:
                found.add("since at a binding time")
            case SourceUpdate(time=time) if _on_a_range(time):
                found.add("update on a range of partitions")
        found |= _boundary_events(remap, after, step)
        remap = after
    result = reclock(remap, updates)
    if result.pending:
        found.add("pending updates")
    start = next(iter(remap.since))
    if start > 0 and any(u.time == start for u in result.updates):
        found.add("update reclocked to a compacted since")
    if any(len(f) > 1 for _, f in remap.steps()):
        found.add("remap frontier with several elements")
    if any(u.time in f for _, f in remap.steps() for u in updates):
        found.add(AT_FRONTIER)
    if any(_between_covering(f, u.time) for _, f in remap.steps() for u in updates):
        found.add(BETWEEN_COVERING)
    return sorted(found)


def _between_covering(frontier: Antichain, time: object) -> bool:
    """A one-partition time at an offset from the least to below the greatest offset of the frontier's
    elements covering its partition: beyond the frontier by the least, not by the greatest."""
    if not isinstance(time, PartitionedTime) or time.lo != time.hi:
        return False
    offsets = [f.offset for f in frontier if f.lo <= time.lo <= f.hi]
    return len(offsets) > 1 and min(offsets) <= time.offset < max(offsets)


AT_FRONTIER = "update exactly at a remap frontier element"
BETWEEN_COVERING = "one-partition update between the offsets of two frontier elements covering it"
READ_AT_SINCE = "read exactly at a moved since"
READ_AT_LAST = "read at the last readable tick"
INVERT_AT_SINCE = "inversion exactly at a moved since"
MINT_AT_UPPER = "mint exactly at the remap's upper"
SINCE_AGAIN = "compaction to the since it already has"
TWO_COMPACTIONS = "a second compaction that moves the since"
BOUNDARIES = (
    AT_FRONTIER,
    READ_AT_SINCE,
    READ_AT_LAST,
    INVERT_AT_SINCE,
    MINT_AT_UPPER,
    SINCE_AGAIN,
    TWO_COMPACTIONS,
)


def _on_a_range(time: object) -> bool:
    """Whether a source time covers a range of partitions (only a Partitioned time can)."""
    return getattr(time, "lo", 0) != getattr(time, "hi", 0)


def _only(frontier: Antichain) -> int | None:
    return next(iter(frontier), None)


def _boundary_events(before: Remap, after: Remap, step: ReclockStep) -> set[str]:
    """Ticks exactly at the since (moved by a compaction), at the last readable tick, at the upper."""
    found, since, upper = set(), _only(before.since), _only(before.upper)
    kind, tick = getattr(step, "kind", None), getattr(step, "tick", None)
    if kind is ReclockAction.READ and since and tick == since:
        found.add(READ_AT_SINCE)
    if kind is ReclockAction.READ and upper is not None and tick == upper - 1:
        found.add(READ_AT_LAST)
    if kind is ReclockAction.INVERT and since and tick == since:
        found.add(INVERT_AT_SINCE)
    if isinstance(step, Mint) and after != before and step.tick == upper:
        found.add(MINT_AT_UPPER)
    if isinstance(step, Compact) and step.to == since:
        found.add(SINCE_AGAIN)
    if isinstance(step, Compact) and since and _only(after.since) != since:
        found.add(TWO_COMPACTIONS)
    return found


def _mint_events(before: Remap, after: Remap, upper: tuple, seen_partitions: set[int]) -> set[str]:
    found = set()
    if after == before and not before.upper.is_empty():
        found.add("skipped tick")
    if after != before and after.upper.is_empty():
        found.add("source closed")
    points = {t.lo for t in upper if getattr(t, "lo", None) == getattr(t, "hi", -1)}
    if after != before and points - seen_partitions and seen_partitions:
        found.add("new partition appears")
    if after != before:
        seen_partitions |= points
    return found


# Partitions exist only in `partitioned`; a Total frontier has one element.
EVENT_DOMAINS = {
    "new partition appears": ("partitioned",),
    "update on a range of partitions": ("partitioned",),
    "remap frontier with several elements": ("product(total,total)", "partitioned"),
    BETWEEN_COVERING: ("partitioned",),
}

SUITE = Suite(
    name="reclock",
    doc="Remap minting, compaction, R(t), inversion and reclocked collections on Spark against the model.",
    properties=(
        Property(
            name="reclocking_matches_model",
            doc="Every R(t), inversion, reclocked collection, pending set and the final bindings equal the model's.",
            draw=draw_reclock_history,
            check=differential(observe, "observe_reclock"),
            events=events,
        ),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    batched_cost=5.0,  # ~30 stages a job (remap per point, as-of joins): seconds per batch, not tenths
    required_events=(
        "skipped tick",
        "source closed",
        "new partition appears",
        "since at a binding time",
        "pending updates",
        "update reclocked to a compacted since",
        "update on a range of partitions",
        "remap frontier with several elements",
        BETWEEN_COVERING,
        *BOUNDARIES,
    ),
    event_domains=EVENT_DOMAINS,
)
