"""Collections of updates `(data, time, diff)` and what they contain at a time.

A collection is a multiset of updates. Its contents *at* time `t` are the sums
of diffs of updates with `time <= t`. Every comparison in frontier-harness is
made after `consolidate`, never on row order.

>>> from frontier_harness.model.time.domains import Total
>>> ups = [Update("a", 1, 1), Update("b", 2, 1), Update("a", 3, -1)]
>>> at(Total(), ups, 2), at(Total(), ups, 3)
({'a': 1, 'b': 1}, {'b': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

from frontier_harness.model.time.antichain import Antichain, advance_by
from frontier_harness.model.time.domains import Domain, Time


@attrs.frozen
class Update:
    """One change: `diff` copies of `data` at `time` (negative diffs retract)."""

    data: Any
    time: Time
    diff: int


def consolidate(domain: Domain, updates: Iterable[Update]) -> list[Update]:
    """Merges equal `(data, time)` pairs and drops zero diffs, in a canonical order.

    >>> from frontier_harness.model.time.domains import Total
    >>> consolidate(Total(), [Update("a", 1, 2), Update("a", 1, -2), Update("b", 0, 1)])
    [Update(data='b', time=0, diff=1)]
    """
    sums: Counter[tuple[Any, Time]] = Counter()
    for u in updates:
        sums[(u.data, u.time)] += u.diff
    ordered = sorted(sums.items(), key=lambda kv: (kv[0][0], domain.key(kv[0][1])))
    return [Update(data, time, diff) for (data, time), diff in ordered if diff != 0]


def at(domain: Domain, updates: Iterable[Update], time: Time) -> dict[Any, int]:
    """The contents at `time`: per datum, the sum of diffs of updates at times `<= time`.

    Data whose sum is zero are absent.
    """
    sums: Counter[Any] = Counter()
    for u in updates:
        if domain.le(u.time, time):
            sums[u.data] += u.diff
    return {data: n for data, n in sorted(sums.items()) if n != 0}


def advance_collection(domain: Domain, updates: Iterable[Update], since: Antichain) -> list[Update]:
    """Compaction: every time advanced by `since`, then consolidated.

    Contents at every time beyond `since` are unchanged.

    >>> from frontier_harness.model.time.domains import Total
    >>> advance_collection(Total(), [Update("a", 1, 1), Update("a", 2, -1)], Antichain.of(Total(), [3]))
    []
    """
    return consolidate(domain, (Update(u.data, advance_by(u.time, since), u.diff) for u in updates))
