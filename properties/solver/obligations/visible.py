"""Obligation 2: a time visible before the restart is before the until (nothing visible is dropped).

Its hypothesis is obligation 1's conclusion for the dataflow (`cases.running_dataflow`).
"""

from __future__ import annotations

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import Case, running_dataflow
from frontier_harness.properties.solver.encoding import Rules, frontier_lt_time
from frontier_harness.properties.solver.world import World


def visible_kept_cases(rules: Rules, world: World) -> list[Case]:
    """2. A time visible at a wall time of the incarnation is before the until after the meet."""
    cases = []
    for kind in encoding.EXPIRING_KINDS:
        hyps, terms, upper, _, until, t = running_dataflow(rules, world, kind)
        cases.append(
            Case(
                "nothing-visible-dropped",
                kind,
                (*hyps, frontier_lt_time(upper, t)),
                frontier_lt_time(until, t),
                terms,
                {"kind": "dataflow", "dataflow": kind},
            )
        )
    return cases
