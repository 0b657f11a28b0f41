"""Hypothesis strategies shared by the reclocking model tests: minted remaps and source updates."""

from __future__ import annotations

from hypothesis import strategies as st

from frontier_harness.model.reclocking.remap import Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import PartitionedTime


@st.composite
def observations(draw, domain):
    """Advancing source uppers with ticks (some not advancing), sometimes closing at the end."""
    frontier, offsets, tick, result = Antichain.of(domain, [domain.minimum]), {}, 0, []
    for _ in range(draw(st.integers(0, 6))):
        if domain.name == "total":
            frontier = Antichain.of(domain, [next(iter(frontier)) + draw(st.integers(0, 4))])
        elif domain.name == "partitioned":
            p = draw(st.integers(0, min(len(offsets), 2)))
            offsets[p] = offsets.get(p, 0) + draw(st.integers(0, 4))
            frontier = Antichain.of(domain, domain.live_frontier(offsets))
        else:
            points = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=3))
            frontier = frontier.join(Antichain.of(domain, points))
        tick += draw(st.integers(0, 3))
        result.append((frontier, tick))
    if draw(st.booleans()):
        result.append((Antichain(domain), tick + 1))
    return result


def remaps(domain):
    """Remaps minted from `observations`."""
    return observations(domain).map(lambda observed: Remap.minted(domain, observed))


def times(domain):
    if domain.name == "total":
        return st.integers(0, 20)
    if domain.name == "partitioned":
        return st.builds(PartitionedTime.point, st.integers(0, 3), st.integers(0, 14))
    return st.tuples(st.integers(0, 8), st.integers(0, 8))


def sources(domain, diffs=(1, 1, 2, -1)):
    """Up to 12 source updates at `times(domain)`."""
    return st.lists(
        st.builds(Update, st.sampled_from("abc"), times(domain), st.sampled_from(diffs)), max_size=12
    )
