"""Obligation 1: time dependence is sound, per object kind, compositionally, for every skew.

Per kind with the inputs' bounds as hypotheses, and the meet of any number of inputs by
induction (a base case and a step), so it holds for every catalog DAG.
"""

from __future__ import annotations

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import (
    Case,
    derived_variants,
    incarnation,
    int_time,
    named_terms,
    opt_time,
    schedule_clauses,
    schedule_terms,
    variant_label,
)
from frontier_harness.properties.solver.encoding import Rules, frontier_le
from frontier_harness.properties.solver.world import ASSUMPTIONS, World


def time_dependence_cases(rules: Rules, world: World) -> list[Case]:
    """Per kind: the upper at any wall time of the incarnation is within the bound at its expiration."""
    name = "time-dependence"
    cases = []
    for kind in encoding.LEAF_KINDS:
        start, offset, wall, exp, hyps = incarnation(rules, world)
        seen, (upper, upper_ok) = int_time("seen"), opt_time("upper")
        bound = encoding.leaf_bound(rules, kind, exp.val, (seen, start))
        hyps += [upper_ok, world.leaf_upper(kind, wall, upper, start, seen)]
        cases.append(
            Case(
                name,
                f"leaf {kind}",
                tuple(hyps),
                frontier_le(upper, bound),
                named_terms(start=start, offset=offset, wall=wall, seen=seen, upper=upper, bound=bound),
                {"kind": "leaf", "leaf": kind},
                ASSUMPTIONS[kind],
            )
        )
    cases.append(
        Case(
            name,
            "inputs: no input",
            (),
            frontier_le(world.meet([]), encoding.meet_inputs(rules, [])),
            {},
            {"kind": "meet"},
            ASSUMPTIONS["meet"],
        )
    )
    (u1, ok1), (u2, ok2) = opt_time("upper.acc"), opt_time("upper.next")
    (b1, okb1), (b2, okb2) = opt_time("bound.acc"), opt_time("bound.next")
    step_bound = rules.meet_bounds(rules, b1, b2)
    cases.append(
        Case(
            name,
            "inputs: one more input (induction step)",
            (ok1, ok2, okb1, okb2, frontier_le(u1, b1), frontier_le(u2, b2)),
            frontier_le(world.meet([u1, u2]), step_bound),
            named_terms(upper_acc=u1, upper_next=u2, bound_acc=b1, bound_next=b2, bound=step_bound),
            {"kind": "meet"},
            ASSUMPTIONS["meet"],
        )
    )
    for kind, shape, has_up_to in derived_variants():
        cases.append(_derived_case(rules, world, kind, shape, has_up_to))
    return cases


def _derived_case(rules: Rules, world: World, kind: str, shape: tuple[str, ...], has_up_to: bool) -> Case:
    (met_u, ok_u), (met_b, ok_b) = opt_time("upper.met"), opt_time("bound.met")
    schedule, up_to, valid = schedule_clauses(shape, has_up_to)
    upper = world.derived_upper(kind, met_u, schedule, up_to)
    bound = encoding.kind_step(rules, kind, met_b, schedule, up_to)
    return Case(
        "time-dependence",
        variant_label(kind, shape, has_up_to),
        (ok_u, ok_b, frontier_le(met_u, met_b), *valid),
        frontier_le(upper, bound),
        named_terms(
            upper_met=met_u,
            bound_met=met_b,
            upper=upper,
            bound=bound,
            up_to=up_to,
            **schedule_terms(schedule),
        ),
        {"kind": "derived", "dataflow": kind, "shape": shape, "up_to": has_up_to},
        ASSUMPTIONS["mv" if shape else kind if kind == "subscribe" else "meet"],
    )
