"""A shard: a durable collection with a `since` and an `upper`.

Times not beyond `upper` are complete (no more updates will arrive for them);
times not beyond `since` may have been advanced by compaction, so reads are
valid only at times beyond `since` and not beyond `upper`.

>>> from frontier_harness.model.time.domains import Total
>>> s = Shard.empty(Total()).append([Update("a", 0, 1)], Antichain.of(Total(), [2]))
>>> s.read_at(1), s.upper
({'a': 1}, {2})
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from frontier_harness.model.errors import ReadNotValid, SinceRegression, UpdateOutsideAppend, UpperRegression
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, advance_collection, at
from frontier_harness.model.time.domains import Domain, Time


@attrs.frozen
class Shard:
    """Updates with `since` and `upper` frontiers; values, never mutated in place."""

    domain: Domain
    updates: tuple[Update, ...] = ()
    since: Antichain = attrs.field(default=None)
    upper: Antichain = attrs.field(default=None)

    @classmethod
    def empty(cls, domain: Domain) -> Shard:
        """A shard with nothing written: since and upper at the minimum."""
        start = Antichain.of(domain, [domain.minimum])
        return cls(domain, (), start, Antichain.of(domain, [domain.minimum]))

    def append(self, updates: Iterable[Update], new_upper: Antichain) -> Shard:
        """Adds updates whose times lie in `[upper, new_upper)`; advances `upper`.

        >>> from frontier_harness.model.time.domains import Total
        >>> Shard.empty(Total()).append([Update("a", 5, 1)], Antichain.of(Total(), [3]))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.UpdateOutsideAppend: update Update(data='a', time=5, diff=1) is not in [{0}, {3})
        """
        if not self.upper.le(new_upper):
            raise UpperRegression(self.upper, new_upper)
        updates = tuple(updates)
        for u in updates:
            if not self.upper.less_equal(u.time) or new_upper.less_equal(u.time):
                raise UpdateOutsideAppend(u, self.upper, new_upper)
        return attrs.evolve(self, updates=self.updates + updates, upper=new_upper)

    def compact(self, since: Antichain) -> Shard:
        """Advances every time by `since`; `since` never goes back.

        >>> from frontier_harness.model.time.domains import Total
        >>> Shard.empty(Total()).compact(Antichain.of(Total(), [4])).compact(Antichain.of(Total(), [2]))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.SinceRegression: since may not go back: {2} is not >= current {4}
        """
        if not self.since.le(since):
            raise SinceRegression(self.since, since)
        advanced = advance_collection(self.domain, self.updates, since)
        return attrs.evolve(self, updates=tuple(advanced), since=since)

    def readable(self, time: Time) -> bool:
        """Whether `time` is beyond `since` and not beyond `upper`."""
        return self.since.less_equal(time) and not self.upper.less_equal(time)

    def read_at(self, time: Time) -> dict[Any, int]:
        """Contents at `time`; a typed error unless `readable(time)`."""
        if not self.readable(time):
            raise ReadNotValid(time, self.since, self.upper)
        return at(self.domain, self.updates, time)
