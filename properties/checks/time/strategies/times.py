"""Times and frontiers of the three domains, from small ranges so that collisions happen.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> from frontier_harness.model.time.domains import Product, Partitioned
>>> Partitioned().validate(draw_time(RandomSource(0), Partitioned())) is not None
True
"""

from __future__ import annotations

from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import PARTITION_MAX, Domain, PartitionedTime, Product, Time
from frontier_harness.properties.engine.source import Source, repeat

MAX_OFFSET = 8
MAX_PARTITION = 3
LONG_MAX = 2**63 - 1  # the largest offset (and Total time) the Spark row format holds: a `long`


def draw_time(source: Source, domain: Domain) -> Time:
    """A time of `domain`; Partitioned times are points or ranges, sometimes open-ended."""
    if domain.name == "total":
        return source.integer(0, MAX_OFFSET)
    if domain.name == "partitioned":
        lo = source.integer(0, MAX_PARTITION)
        hi = PARTITION_MAX if source.boolean(0.3) else source.integer(lo, MAX_PARTITION)
        return PartitionedTime(lo, hi, source.integer(0, MAX_OFFSET))
    assert isinstance(domain, Product), domain
    return (draw_time(source, domain.a), draw_time(source, domain.b))


def draw_frontier(source: Source, domain: Domain, max_size: int = 3) -> Antichain:
    """An antichain of up to `max_size` drawn times (dominated draws are dropped; may be empty)."""
    return Antichain.of(domain, repeat(source, lambda: draw_time(source, domain), 0, max_size, 0.7))


def draw_extreme_time(source: Source, domain: Domain) -> Time:
    """A time at the row format's limits: offset (or Total time) `LONG_MAX`, a range open to `PARTITION_MAX`.

    >>> from frontier_harness.model.time.domains import Total
    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> draw_extreme_time(RandomSource(0), Total()) == LONG_MAX
    True
    """
    if domain.name == "total":
        return LONG_MAX
    if domain.name == "partitioned":
        return PartitionedTime(source.integer(0, MAX_PARTITION), PARTITION_MAX, LONG_MAX)
    assert isinstance(domain, Product), domain
    if source.boolean():
        return (draw_extreme_time(source, domain.a), draw_time(source, domain.b))
    return (draw_time(source, domain.a), draw_extreme_time(source, domain.b))
