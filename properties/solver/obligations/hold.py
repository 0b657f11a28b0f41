"""Obligation 3: the hold at the expiration is never reached and hides exactly what is dropped.

Its hypothesis is obligation 1's conclusion for the dataflow (`cases.running_dataflow`).
"""

from __future__ import annotations

import z3

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import Case, running_dataflow
from frontier_harness.properties.solver.encoding import Rules, frontier_lt_time
from frontier_harness.properties.solver.world import World


def hold_cases(rules: Rules, world: World) -> list[Case]:
    """3. The hold refuses no visible read, serves none at/after the expiration; until = expiration."""
    cases = []
    for kind in encoding.EXPIRING_KINDS:
        hyps, terms, upper, expiration, until, t = running_dataflow(rules, world, kind)
        visible = frontier_lt_time(upper, t)
        served = z3.And(visible, z3.Not(rules.refused(rules, expiration, upper, t)))
        goal = z3.And(
            z3.Implies(visible, served),
            z3.Implies(z3.And(served, expiration.has), t < expiration.val),
            z3.Implies(expiration.has, z3.And(until.has, until.val == expiration.val)),
        )
        cases.append(
            Case("frontier-hold", kind, tuple(hyps), goal, terms, {"kind": "dataflow", "dataflow": kind})
        )
    return cases
