"""The upstream service: an append-only log that accepts offset commits and may compact.

Two shapes share one value class. A *partitioned* log (Kafka-like) has dense
partitions `0..n-1`; record `o` of partition `p` is at FromTime
`PartitionedTime.point(p, o)` and the log's upper is `live_frontier` of the
next offsets. An *LSN* log (Postgres-like) has one partition; record `o` is at
Total FromTime `o`. A commit records an offset frontier; `compact` deletes every
record not beyond the committed frontier. Reading from a frontier that still
needs a deleted record is a typed error (`CompactedRead`), never an empty read.

>>> from frontier_harness.model.time.domains import Total
>>> log = Upstream.empty(Total()).produce(0, "a").produce(0, "b")
>>> log.upper(), [r.data for r in log.read(Antichain.of(Total(), [1]))]
({2}, ['b'])
"""

from __future__ import annotations

import attrs

from frontier_harness.model.errors import CompactedRead, UnknownPartition
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import Domain, Partitioned, PartitionedTime, Time


@attrs.frozen
class Upstream:
    """Records per partition, the committed offset frontier, and per-partition compaction points.

    `start[p]` is the first offset of partition `p` still stored (records before it
    were compacted). Choice: commits are accepted as given, even going back (Kafka
    allows it); compaction never goes back, so `start` only grows.

    >>> from frontier_harness.model.time.domains import Partitioned
    >>> Upstream.empty(Partitioned()).produce(0, "a").upper()
    {[0,0]@1, [1,MAX]@0}
    """

    domain: Domain
    partitions: tuple[tuple[str, ...], ...] = ()
    start: tuple[int, ...] = ()
    committed: Antichain | None = None

    @classmethod
    def empty(cls, domain: Domain) -> Upstream:
        """A log with nothing produced; an LSN (Total) log has its one partition from the start.

        >>> from frontier_harness.model.time.domains import Total
        >>> Upstream.empty(Total()).partitions
        ((),)
        """
        parts = ((),) if domain.name == "total" else ()
        return cls(domain, parts, (0,) * len(parts), Antichain.of(domain, [domain.minimum]))

    def time_of(self, partition: int, offset: int) -> Time:
        """The FromTime of record `offset` of `partition`.

        >>> from frontier_harness.model.time.domains import Partitioned
        >>> Upstream.empty(Partitioned()).time_of(2, 7)
        [2,2]@7
        """
        return offset if self.domain.name == "total" else PartitionedTime.point(partition, offset)

    def produce(self, partition: int, data: str) -> Upstream:
        """Appends record `data` to `partition` (a partitioned log may add partition `n`).

        >>> from frontier_harness.model.time.domains import Total
        >>> Upstream.empty(Total()).produce(1, "a")
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.UnknownPartition: unknown partition 1: the log has partitions 0..0 and may add 1
        """
        n = len(self.partitions)
        grows = self.domain.name != "total" and partition == n
        if not isinstance(partition, int) or not (0 <= partition < n or grows):
            raise UnknownPartition(partition, n)
        parts, start = (
            (self.partitions + ((),), self.start + (0,)) if grows else (self.partitions, self.start)
        )
        updated = parts[:partition] + (parts[partition] + (data,),) + parts[partition + 1 :]
        return attrs.evolve(self, partitions=updated, start=start)

    def upper(self) -> Antichain:
        """The source upper: every record is not beyond it; the next record of each partition is.

        >>> from frontier_harness.model.time.domains import Total
        >>> Upstream.empty(Total()).upper()
        {0}
        """
        if isinstance(self.domain, Partitioned):
            offsets = {p: len(records) for p, records in enumerate(self.partitions)}
            return Antichain.of(self.domain, self.domain.live_frontier(offsets))
        return Antichain.of(self.domain, [len(self.partitions[0])])

    def records(self) -> list[Update]:
        """Every record ever produced (deleted ones too), as updates `(data, from_time, +1)`.

        >>> from frontier_harness.model.time.domains import Total
        >>> Upstream.empty(Total()).produce(0, "a").records()
        [Update(data='a', time=0, diff=1)]
        """
        return [
            Update(data, self.time_of(p, o), 1)
            for p, part in enumerate(self.partitions)
            for o, data in enumerate(part)
        ]

    def read(self, frontier: Antichain) -> list[Update]:
        """The stored records beyond `frontier`; `CompactedRead` if one it needs was deleted.

        >>> from frontier_harness.model.time.domains import Total
        >>> log = Upstream.empty(Total()).produce(0, "a").produce(0, "b").commit(Antichain.of(Total(), [1])).compact()
        >>> log.read(Antichain.of(Total(), [0]))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.CompactedRead: cannot read from {0}: partition 0 needs offset 0 but the upstream compacted everything before offset 1
        """
        for p, first in enumerate(self.start):
            needed = needed_offset(self.domain, frontier, p)
            if needed is not None and needed < first:
                raise CompactedRead(frontier, p, needed, first)
        return [u for u in self.records() if frontier.less_equal(u.time)]

    def commit(self, frontier: Antichain) -> Upstream:
        """Records `frontier` as the committed offset frontier (validated as an antichain).

        >>> from frontier_harness.model.time.domains import Total
        >>> Upstream.empty(Total()).commit(Antichain.of(Total(), [3])).committed
        {3}
        """
        return attrs.evolve(self, committed=Antichain.checked(self.domain, frontier))

    def compact(self) -> Upstream:
        """Deletes every record not beyond the committed frontier: `start[p]` moves up, never back.

        >>> from frontier_harness.model.time.domains import Total
        >>> Upstream.empty(Total()).produce(0, "a").commit(Antichain.of(Total(), [5])).compact().start
        (1,)
        """
        if self.committed is None:
            return self
        start = []
        for p, (first, part) in enumerate(zip(self.start, self.partitions)):
            kept = next(
                (o for o in range(len(part)) if self.committed.less_equal(self.time_of(p, o))), len(part)
            )
            start.append(max(first, kept))
        return attrs.evolve(self, start=tuple(start))


def needed_offset(domain: Domain, frontier: Antichain, partition: int) -> int | None:
    """The first offset of `partition` a reader at `frontier` still needs; None if it needs none.

    The smallest offset of a frontier element covering the partition (an LSN log's
    one partition is covered by every element).

    >>> from frontier_harness.model.time.domains import Partitioned
    >>> needed_offset(Partitioned(), Antichain.of(Partitioned(), Partitioned().live_frontier({0: 4})), 1)
    0
    """
    if domain.name == "total":
        covering = list(frontier)
    else:
        covering = [e.offset for e in frontier if e.lo <= partition <= e.hi]
    return min(covering, default=None)
