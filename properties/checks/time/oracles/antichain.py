"""The frontier of positive counts, restated by brute force (a `MutableAntichain`'s rule).

Sum every diff so far per time; keep the times whose sum is positive; of those,
keep the ones no other is strictly below (by the domain's `le`). A batch's
reported changes are the old frontier's elements that left (-1) and the new
frontier's that arrived (+1).

>>> from frontier_harness.model.time.domains import Total
>>> frontiers_after(Total(), [[(3, 1), (5, 1)], [(3, -1), (4, -1)]])
[frozenset({3}), frozenset({5})]
>>> sorted(changes(frozenset({3}), frozenset({5})))
[(3, -1), (5, 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def minimal_positive(domain: Any, counts: Mapping[Any, int]) -> frozenset[Any]:
    """The times with a positive count that have no smaller time with a positive count."""
    positive = [t for t, n in counts.items() if n > 0]
    return frozenset(t for t in positive if not any(s != t and domain.le(s, t) for s in positive))


def frontiers_after(domain: Any, batches: Iterable[Sequence[tuple[Any, int]]]) -> list[frozenset[Any]]:
    """The frontier after each batch of `(time, diff)` updates, from counts summed since the start."""
    counts: dict[Any, int] = {}
    out = []
    for batch in batches:
        for time, diff in batch:
            counts[time] = counts.get(time, 0) + diff
        out.append(minimal_positive(domain, counts))
    return out


def changes(before: frozenset[Any], after: frozenset[Any]) -> frozenset[tuple[Any, int]]:
    """What a batch reports: `(t, -1)` for each element that left, `(t, +1)` for each that arrived."""
    return frozenset({(t, -1) for t in before - after} | {(t, 1) for t in after - before})
