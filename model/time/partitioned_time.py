"""Partitioned (Kafka-like) time values: an inclusive interval of partition ids and an offset.

The value type alone, shared with spark_impl and pandas_impl; the order
(`le`, `join`, `meet`) is `frontier_harness.model.time.domains.Partitioned`'s.
"""

from __future__ import annotations

import attrs

PARTITION_MAX = 2**31 - 1


@attrs.frozen
class PartitionedTime:
    """Partitions `lo..hi` (inclusive) at `offset`; `[p, p]` is one partition.

    A range stands for partitions not yet seen, so the frontier "partition 0 up
    to offset 5, every other partition not started" is `{[0,0]@5, [1,MAX]@0}`.

    >>> PartitionedTime(0, 0, 5)
    [0,0]@5
    >>> PartitionedTime.rest(1)
    [1,MAX]@0
    """

    lo: int
    hi: int
    offset: int

    @classmethod
    def point(cls, partition: int, offset: int) -> PartitionedTime:
        return cls(partition, partition, offset)

    @classmethod
    def rest(cls, first_unseen: int) -> PartitionedTime:
        return cls(first_unseen, PARTITION_MAX, 0)

    def __repr__(self) -> str:
        hi = "MAX" if self.hi == PARTITION_MAX else self.hi
        return f"[{self.lo},{hi}]@{self.offset}"
