"""Antichains and frontiers, after timely-dataflow's `progress/frontier.rs`.

An `Antichain` is a set of mutually incomparable times. As a frontier it splits
times in two: `t` is *beyond* `F` (still open) iff some `f in F` has `f <= t`.
The empty antichain is the closed frontier: nothing is beyond it. Frontiers are
ordered `F <= G` iff every element of `G` is beyond `F`, so the empty antichain
is the top.

>>> from frontier_harness.model.time.domains import Total
>>> f = Antichain.of(Total(), [3])
>>> f.less_equal(3), f.less_equal(2), Antichain.of(Total(), []).less_equal(99)
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

from frontier_harness.model.errors import NotAnAntichain
from frontier_harness.model.time.domains import Domain, Time


@attrs.define(eq=False)
class Antichain:
    """A set of mutually incomparable times, kept minimal on `insert`."""

    domain: Domain
    _elements: list[Time] = attrs.field(factory=list, alias="elements")

    @classmethod
    def of(cls, domain: Domain, times: Iterable[Time]) -> Antichain:
        """The minimal elements of `times` (dominated ones are dropped).

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.of(Total(), [5, 3, 7])
        {3}
        """
        frontier = cls(domain)
        for time in times:
            frontier.insert(time)
        return frontier

    @classmethod
    def checked(cls, domain: Domain, times: Iterable[Time]) -> Antichain:
        """`times` as given, validated: a typed error if two are comparable.

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.checked(Total(), [3, 5])
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.NotAnAntichain: not an antichain: [3, 5] has 3 <= 5
        """
        times = [domain.validate(t) for t in times]
        for i, a in enumerate(times):
            for b in times[i + 1 :]:
                if domain.le(a, b) or domain.le(b, a):
                    small, large = (a, b) if domain.le(a, b) else (b, a)
                    raise NotAnAntichain(times, small, large)
        return cls(domain, list(times))

    @property
    def elements(self) -> tuple[Time, ...]:
        """The elements, in insertion order, as a tuple (the antichain is not changed through it).

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.of(Total(), [5, 3]).elements
        (3,)
        """
        return tuple(self._elements)

    def insert(self, time: Time) -> bool:
        """Adds `time` unless some element is `<=` it; removes elements it dominates.

        Returns whether the antichain changed.

        >>> from frontier_harness.model.time.domains import Total
        >>> f = Antichain.of(Total(), [5])
        >>> f.insert(7), f.insert(3), f
        (False, True, {3})
        """
        if self.less_equal(time):
            return False
        self._elements = [e for e in self._elements if not self.domain.le(time, e)]
        self._elements.append(time)
        return True

    def less_equal(self, time: Time) -> bool:
        """Whether `time` is beyond the frontier: some element is `<= time`.

        >>> from frontier_harness.model.time.domains import Product, Total
        >>> f = Antichain.of(Product(Total(), Total()), [(1, 2), (2, 1)])
        >>> f.less_equal((1, 2)), f.less_equal((3, 1)), f.less_equal((1, 1))
        (True, True, False)
        """
        return any(self.domain.le(e, time) for e in self._elements)

    def less_than(self, time: Time) -> bool:
        """Whether some element is strictly less than `time`.

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.of(Total(), [3]).less_than(3)
        False
        """
        return any(self.domain.lt(e, time) for e in self._elements)

    def le(self, other: Antichain) -> bool:
        """Frontier order: every element of `other` is beyond `self`.

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.of(Total(), [3]).le(Antichain.of(Total(), []))
        True
        """
        return all(self.less_equal(t) for t in other)

    def meet(self, other: Antichain) -> Antichain:
        """The earlier of two frontiers (greatest lower bound): minimal elements of the union.

        >>> from frontier_harness.model.time.domains import Product, Total
        >>> d = Product(Total(), Total())
        >>> sorted(Antichain.of(d, [(0, 2)]).meet(Antichain.of(d, [(1, 0), (0, 3)])))
        [(0, 2), (1, 0)]
        """
        return Antichain.of(self.domain, [*self, *other])

    def join(self, other: Antichain) -> Antichain:
        """The later of two frontiers (least upper bound): minimal pairwise joins.

        Pairs without an upper bound (disjoint Partitioned intervals) contribute nothing.

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.of(Total(), [3]).join(Antichain.of(Total(), [5]))
        {5}
        """
        joins = (self.domain.join(f, g) for f in self for g in other)
        return Antichain.of(self.domain, [j for j in joins if j is not None])

    def is_empty(self) -> bool:
        """Whether this is the closed frontier: no time is beyond it.

        >>> from frontier_harness.model.time.domains import Total
        >>> Antichain.of(Total(), []).is_empty(), Antichain.of(Total(), [0]).is_empty()
        (True, False)
        """
        return not self._elements

    def sorted(self) -> list[Time]:
        """Elements in the domain's presentation order (for output and comparison).

        >>> from frontier_harness.model.time.domains import Product, Total
        >>> Antichain.of(Product(Total(), Total()), [(2, 1), (1, 2)]).sorted()
        [(1, 2), (2, 1)]
        """
        return sorted(self._elements, key=self.domain.key)

    def __iter__(self) -> Iterator[Time]:
        return iter(self._elements)

    def __len__(self) -> int:
        return len(self._elements)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Antichain):
            return NotImplemented
        return set(self._elements) == set(other._elements)

    __hash__ = None  # type: ignore[assignment]  # mutable, so unhashable; typeshed types __hash__ as a method

    def __repr__(self) -> str:
        return "{" + ", ".join(repr(t) for t in self.sorted()) + "}"


def advance_by(time: Time, frontier: Antichain) -> Time:
    """Advances `time` to the meet of its joins with the frontier's elements.

    Differential dataflow's `Lattice::advance_by`: for every `t'` beyond
    `frontier`, `time <= t'` iff `advance_by(time, frontier) <= t'`. The empty
    frontier, or one with no element `time` can join (disjoint Partitioned
    intervals), leaves `time` unchanged.

    >>> from frontier_harness.model.time.domains import Product, Total
    >>> d = Product(Total(), Total())
    >>> advance_by((0, 0), Antichain.of(d, [(2, 1), (1, 2)]))
    (1, 1)
    >>> advance_by((5, 5), Antichain.of(d, [(2, 1)]))
    (5, 5)
    """
    joins = [j for f in frontier if (j := frontier.domain.join(time, f)) is not None]
    if not joins:
        return time
    result = joins[0]
    for j in joins[1:]:
        result = frontier.domain.meet(result, j)
    return result


@attrs.define
class MutableAntichain:
    """Counts per time; the frontier is the minimal times with a positive count.

    Choice (timely's): a count may go negative; such a time is not in the frontier and hides nothing.
    Zero counts are removed, so state stays compact under `+1/-1` churn.

    >>> from frontier_harness.model.time.domains import Total
    >>> m = MutableAntichain(Total())
    >>> m.update_iter([(3, 1), (5, 1)])
    [(3, 1)]
    >>> m.update_iter([(3, -1), (4, -1)])
    [(3, -1), (5, 1)]
    >>> m.frontier, m.count(4)
    ({5}, -1)
    """

    domain: Domain
    _counts: dict[Time, int] = attrs.field(factory=dict, alias="counts")

    @property
    def frontier(self) -> Antichain:
        """The minimal times with a positive count; non-positive counts hide nothing.

        >>> from frontier_harness.model.time.domains import Total
        >>> MutableAntichain(Total(), counts={3: -1, 5: 2, 7: 1}).frontier
        {5}
        """
        return Antichain.of(self.domain, [t for t, c in self._counts.items() if c > 0])

    def update_iter(self, updates: Iterable[tuple[Time, int]]) -> list[tuple[Time, int]]:
        """Applies `(time, diff)` updates; returns the frontier's changes, removals first.

        Updates that cancel out within one call change nothing and report nothing.

        >>> from frontier_harness.model.time.domains import Total
        >>> m = MutableAntichain(Total())
        >>> m.update_iter([(4, 1)]), m.update_iter([(2, 1), (2, -1)]), m.update_iter([(1, 1)])
        ([(4, 1)], [], [(4, -1), (1, 1)])
        """
        before = set(self.frontier)
        counts = dict(self._counts)
        for time, diff in updates:
            counts[time] = counts.get(time, 0) + diff
        self._counts = {t: c for t, c in counts.items() if c != 0}
        after = set(self.frontier)
        key = self.domain.key
        return [(t, -1) for t in sorted(before - after, key=key)] + [
            (t, 1) for t in sorted(after - before, key=key)
        ]

    def count(self, time: Time) -> int:
        """The accumulated count of `time`; 0 for a time never updated or cancelled out.

        >>> from frontier_harness.model.time.domains import Total
        >>> m = MutableAntichain(Total())
        >>> _ = m.update_iter([(3, 2), (4, 1), (4, -1)])
        >>> m.count(3), m.count(4), m.count(9)
        (2, 0, 0)
        """
        return self._counts.get(time, 0)

    def less_equal(self, time: Time) -> bool:
        """Whether `time` is beyond the frontier of positive counts.

        >>> from frontier_harness.model.time.domains import Total
        >>> m = MutableAntichain(Total(), counts={3: 1})
        >>> m.less_equal(3), m.less_equal(2)
        (True, False)
        """
        return self.frontier.less_equal(time)

    def support(self) -> int:
        """How many distinct times are stored (the compactness measure): zero counts are dropped.

        >>> from frontier_harness.model.time.domains import Total
        >>> m = MutableAntichain(Total())
        >>> _ = m.update_iter([(3, 1), (5, 1), (5, -1)])
        >>> m.support()
        1
        """
        return len(self._counts)
