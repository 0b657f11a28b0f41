"""The *mutable_antichain* suite: the frontier of positive counts after every batch of updates.

Histories (`frontier_harness.properties.checks.time.strategies.mutable_antichain`) are `update(time, diff)`
steps grouped into batches by `apply`; the end of the history applies what is
still buffered. After every batch the observation is the frontier (the minimal
times with a positive count) and the changes the batch reported.

- `frontier_is_minimal_positive_counts`: the implementation against the
  brute-force restatement in `frontier_harness.properties.checks.time.oracles.antichain` (sum, keep the
  positive, keep the minimal), never `frontier_harness.model.time.antichain`. Against the model, this
  is the property that judges `MutableAntichain`.
- `observations_match_model`: the implementation against `frontier_harness.model.time.antichain.MutableAntichain`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from frontier_harness.model.time.antichain import MutableAntichain
from frontier_harness.model.time.domains import Domain, Time
from frontier_harness.model.vocabulary.time import AntichainLabel, antichain_batches
from frontier_harness.properties.checks.time.oracles.antichain import (
    changes,
    frontiers_after,
    minimal_positive,
)
from frontier_harness.properties.checks.time.strategies.mutable_antichain import draw_antichain_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Reference, Suite, differential

ZERO = "a count returns to zero"
CANCEL = "updates in one batch cancel at a time"
NEGATIVE = "a count goes negative"
EXPOSED = "removing the frontier's element exposes later ones"
INCOMPARABLE = "an update at a time incomparable to the frontier"
SEVERAL = "one batch changes several frontier elements"
EMPTIED = "the frontier empties"
UNCHANGED = "counts change but the frontier does not"


def observe(history: History) -> Observation:
    """The model's observations: `MutableAntichain.update_iter` per batch, then its frontier."""
    antichain = MutableAntichain(history.time_domain)
    observed: Observation = {}
    for batch in antichain_batches(history):
        observed[(batch.step, AntichainLabel.CHANGES)] = frozenset(antichain.update_iter(batch.updates))
        observed[(batch.step, AntichainLabel.FRONTIER)] = frozenset(antichain.frontier)
    return observed


def reference(history: History) -> Observation:
    """The brute-force observations (`frontier_harness.properties.checks.time.oracles.antichain`): the first property's expected side."""
    steps, updates = zip(*((b.step, b.updates) for b in antichain_batches(history)))
    observed: Observation = {}
    before: frozenset[Time] = frozenset()
    for step, after in zip(steps, frontiers_after(history.time_domain, updates)):
        observed[(step, AntichainLabel.CHANGES)] = changes(before, after)
        observed[(step, AntichainLabel.FRONTIER)] = before = after
    return observed


def events(history: History) -> list[str]:
    """Hard cases this history reaches, found by brute force (never by the model)."""
    domain, found = history.time_domain, set[str]()
    counts: dict[Time, int] = {}
    before: frozenset[Time] = frozenset()
    for batch in (b.updates for b in antichain_batches(history)):
        start = counts
        counts = dict(start)
        for time, diff in batch:
            counts[time] = counts.get(time, 0) + diff
        counts = {t: n for t, n in counts.items() if n != 0}
        after = minimal_positive(domain, counts)
        found |= _count_events(batch, start, counts)
        found |= _frontier_events(domain, batch, start, before, after)
        found |= {UNCHANGED} if counts != start and before == after else set()
        before = after
    return sorted(found)


def _count_events(
    batch: Sequence[tuple[Time, int]], start: dict[Time, int], counts: dict[Time, int]
) -> set[str]:
    found = set()
    if any(start.get(t, 0) != 0 and t not in counts for t, _ in batch):
        found.add(ZERO)
    touched = Counter(t for t, _ in batch)
    if any(touched[t] > 1 and sum(d for s, d in batch if s == t) == 0 for t in touched):
        found.add(CANCEL)
    if any(n < 0 for n in counts.values()):
        found.add(NEGATIVE)
    return found


def _frontier_events(
    domain: Domain,
    batch: Sequence[tuple[Time, int]],
    start: dict[Time, int],
    before: frozenset[Time],
    after: frozenset[Time],
) -> set[str]:
    found = set()
    if before and any(not any(domain.le(f, t) or domain.le(t, f) for f in before) for t, _ in batch):
        found.add(INCOMPARABLE)
    removed, added = before - after, after - before
    if any(start.get(t, 0) > 0 and any(domain.lt(f, t) for f in removed) for t in added):
        found.add(EXPOSED)
    if len(removed) > 1 or len(added) > 1:
        found.add(SEVERAL)
    if before and not after:
        found.add(EMPTIED)
    return found


def _property(
    name: str, doc: str, expected: Callable[[History], Observation], reference: Reference
) -> Property:
    return Property(
        name=name,
        doc=doc,
        draw=draw_antichain_history,
        check=differential(expected, "observe_mutable_antichain"),
        events=events,
        reference=reference,
    )


SUITE = Suite(
    name="mutable_antichain",
    doc="MutableAntichain: the frontier of positive counts and its changes after every batch.",
    properties=(
        _property(
            "frontier_is_minimal_positive_counts",
            "After every batch, the frontier and changes equal a brute-force restatement of the rule.",
            reference,
            Reference.ORACLE,
        ),
        _property(
            "observations_match_model",
            "After every batch, the frontier and changes equal frontier_harness.model.time.antichain.MutableAntichain's.",
            observe,
            Reference.MODEL,
        ),
    ),
    default_impl="spark",
    # Both properties observe the same histories (the same seed draws them): against
    # Spark each gets half the examples, so the suite costs what one property would.
    batched_cost=2.0,
    required_events=(ZERO, CANCEL, NEGATIVE, EXPOSED, INCOMPARABLE, SEVERAL, EMPTIED, UNCHANGED),
    event_domains={
        INCOMPARABLE: ("product(total,total)", "partitioned"),
        SEVERAL: ("product(total,total)", "partitioned"),
    },
)
