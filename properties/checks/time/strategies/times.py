"""Times and frontiers of the three domains, from small ranges so that collisions happen.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> from frontier_harness.model.domains import Product, Partitioned
>>> Partitioned().validate(draw_time(RandomSource(0), Partitioned())) is not None
True
"""

from __future__ import annotations

from frontier_harness.model.antichain import Antichain
from frontier_harness.model.domains import PARTITION_MAX, Domain, PartitionedTime, Product, Time
from frontier_harness.properties.engine.source import Source, repeat

MAX_OFFSET = 8
MAX_PARTITION = 3


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
