"""The tiny suite: the implementation's latest time at or before a bound, against the rule restated.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> draw(RandomSource(1), "total").actions[-1].name
'read'
"""

from __future__ import annotations

from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat
from frontier_harness.properties.engine.suite import Property, Suite, differential

from .impl import as_set, times_and_bound


def draw(source: Source, domain: str) -> History:
    """A few small times added, then a read at a small bound (equal times and bounds are common)."""
    adds = repeat(source, lambda: Action("add", {"time": source.integer(0, 4)}), 0, 6)
    return History(domain, (*adds, Action("read", {"bound": source.integer(0, 4)})))


def oracle(history: History) -> dict:
    """The rule, written again: the largest time not after the bound."""
    times, bound = times_and_bound(history)
    return {(len(history.actions), "latest"): as_set(max((t for t in times if t <= bound), default=None))}


SUITE = Suite(
    name="tiny",
    doc="latest time at or before a bound",
    properties=(Property("latest_matches_rule", "the rule", draw, differential(oracle, "observe_tiny")),),
    default_impl=f"{__package__}.impl:factory",
    domains=("total",),
)
