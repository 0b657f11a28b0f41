"""Obligation 4: a restarted incarnation re-derives what was dropped and holds too (derived per kind).

Per kind and by induction over the inputs' meet, as obligation 1.
"""

from __future__ import annotations

import z3

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import (
    SCHEDULE_SHAPES,
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
from frontier_harness.properties.solver.encoding import Rules, frontier_le, frontier_lt_time
from frontier_harness.properties.solver.world import World


def restart_cases(rules: Rules, world: World) -> list[Case]:
    """4. A later incarnation's bound is no earlier, derived per kind from the rules, so it re-derives what
    the earlier one dropped and holds too."""
    name = "restart"
    cases = []
    for kind in encoding.LEAF_KINDS:
        s1, s2, offset = int_time("start.before"), int_time("start.after"), int_time("offset")
        seen1, seen2 = int_time("seen.before"), int_time("seen.after")
        e1, e2 = rules.replica_expiration(rules, s1, offset), rules.replica_expiration(rules, s2, offset)
        b1 = encoding.leaf_bound(rules, kind, e1.val, (seen1, s1))
        b2 = encoding.leaf_bound(rules, kind, e2.val, (seen2, s2))
        cases.append(
            Case(
                name,
                f"leaf {kind} monotone",
                (s1 >= 0, s2 > s1, offset > 0, seen1 >= 0, seen2 >= seen1),
                frontier_le(b1, b2),
                named_terms(start_before=s1, start_after=s2, offset=offset, before=b1, after=b2),
                {"kind": "leaf", "leaf": kind, "restart": True},
            )
        )
    (a1, oa1), (a2, oa2), (c1, oc1), (c2, oc2) = (
        opt_time(n) for n in ("acc.before", "acc.after", "next.before", "next.after")
    )
    cases.append(
        Case(
            name,
            "inputs: meet monotone",
            (oa1, oa2, oc1, oc2, frontier_le(a1, a2), frontier_le(c1, c2)),
            frontier_le(rules.meet_bounds(rules, a1, c1), rules.meet_bounds(rules, a2, c2)),
            named_terms(acc_before=a1, acc_after=a2, next_before=c1, next_after=c2),
            {"kind": "meet"},
        )
    )
    for kind, shape, has_up_to in derived_variants():
        (m1, o1), (m2, o2) = opt_time("met.before"), opt_time("met.after")
        schedule, up_to, valid = schedule_clauses(shape, has_up_to)
        b1, b2 = (encoding.kind_step(rules, kind, m, schedule, up_to) for m in (m1, m2))
        cases.append(
            Case(
                name,
                f"{variant_label(kind, shape, has_up_to)} monotone",
                (o1, o2, frontier_le(m1, m2), *valid),
                frontier_le(b1, b2),
                named_terms(met_before=m1, met_after=m2, before=b1, after=b2, **schedule_terms(schedule)),
                {"kind": "derived", "dataflow": kind, "shape": shape, "up_to": has_up_to},
            )
        )
    variants = [("mv", shape, False) for shape in SCHEDULE_SHAPES[:3]] + [("index", (), False)]
    variants += [("subscribe", (), False), ("subscribe", (), True)]
    return cases + [_restart_dataflow_case(rules, world, *v) for v in variants]


def _restart_dataflow_case(
    rules: Rules, world: World, kind: str, shape: tuple[str, ...], has_up_to: bool
) -> Case:
    """The new incarnation keeps every update it shows that the old one dropped, drops no more, and holds.

    Its bound and the old one's are the kind's step (by the rules) of its inputs' met bounds,
    which are no earlier after the restart (the induction hypothesis the cases above prove).
    """
    s1, wall, offset, e2, hyps = incarnation(rules, world, ".after")
    s0 = int_time("start.before")
    e1 = rules.replica_expiration(rules, s0, offset)
    t = int_time("time")
    (m1, om1), (m2, om2), (upper, ou) = opt_time("met.before"), opt_time("met.after"), opt_time("upper")
    schedule, up_to, valid = schedule_clauses(shape, has_up_to)
    b1, b2 = (encoding.kind_step(rules, kind, m, schedule, up_to) for m in (m1, m2))
    hyps += [s0 >= 0, s1 > s0, t >= 0, om1, om2, ou, frontier_le(m1, m2), frontier_le(upper, b2), *valid]
    exp1, until1 = encoding.render(rules, kind, b1, up_to, e1)
    exp2, until2 = encoding.render(rules, kind, b2, up_to, e2)
    dropped_before = z3.Not(frontier_lt_time(until1, t))
    visible = frontier_lt_time(upper, t)
    served = z3.And(visible, z3.Not(rules.refused(rules, exp2, upper, t)))
    goal = z3.And(
        z3.Implies(z3.And(dropped_before, visible), z3.And(frontier_lt_time(until2, t), served)),
        frontier_le(until1, until2),
    )
    return Case(
        "restart",
        f"{variant_label(kind, shape, has_up_to)} re-derives",
        tuple(hyps),
        goal,
        named_terms(
            start_before=s0,
            start_after=s1,
            offset=offset,
            wall=wall,
            time=t,
            until_before=until1,
            until_after=until2,
            expiration_after=exp2,
            bound_before=b1,
            bound_after=b2,
            upper=upper,
            up_to=up_to,
        ),
        {"kind": "dataflow", "dataflow": kind, "shape": shape, "up_to": has_up_to, "restart": True},
    )
