"""Obligation 5: over epoch inputs not ahead and no refresh, a dataflow drops every diff past the replica's life.

Per kind and by induction over the inputs' meet, as obligation 1: "never expire" fails it.
"""

from __future__ import annotations

import z3

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import (
    Case,
    derived_variants,
    incarnation,
    int_time,
    named_terms,
    opt_time,
    schedule_clauses,
    variant_label,
)
from frontier_harness.properties.solver.encoding import Rules
from frontier_harness.properties.solver.world import World


def useful_cases(rules: Rules, world: World) -> list[Case]:
    """5. Over epoch inputs not ahead of the wall clock and without a refresh schedule, a dataflow expires one
    tick past the replica's life (`start + offset + 1`) and drops every diff from there: "never expire" fails.

    By induction as obligation 1: a clock leaf not ahead is bounded by `start + offset`; the meet of
    an input so bounded with any other is; each kind's step (no refresh) keeps it; the dataflow then
    has an `until` at most one tick past it.
    """
    name, cases = "useful", []
    for kind in encoding.CLOCK_KINDS:
        start, offset, _, exp, hyps = incarnation(rules, world)
        seen = int_time("seen")
        bound = encoding.leaf_bound(rules, kind, exp.val, (seen, start))
        cases.append(
            Case(
                name,
                f"leaf {kind} not ahead",
                (*hyps, seen >= 0, seen <= start),
                z3.And(bound.has, bound.val <= start + offset),
                named_terms(start=start, offset=offset, seen=seen, bound=bound),
                {"kind": "leaf", "leaf": kind, "useful": True},
            )
        )
    life = int_time("life")
    (a, oa), (c, oc) = opt_time("bound.acc"), opt_time("bound.next")
    met = rules.meet_bounds(rules, a, c)
    cases.append(
        Case(
            name,
            "inputs: meet with any other input",
            (oa, oc, a.has, a.val <= life),
            z3.And(met.has, met.val <= life),
            named_terms(bound_acc=a, bound_next=c, bound=met, life=life),
            {"kind": "meet"},
        )
    )
    for kind, shape, has_up_to in derived_variants(refresh=False):
        (m, om) = opt_time("bound.met")
        schedule, up_to, valid = schedule_clauses(shape, has_up_to)
        bound = encoding.kind_step(rules, kind, m, schedule, up_to)
        cases.append(
            Case(
                name,
                f"{variant_label(kind, shape, has_up_to)} keeps it",
                (om, m.has, m.val <= life, *valid),
                z3.And(bound.has, bound.val <= life),
                named_terms(bound_met=m, bound=bound, life=life, up_to=up_to),
                {"kind": "derived", "dataflow": kind, "up_to": has_up_to},
            )
        )
    for kind, has_up_to in (("mv", False), ("index", False), ("subscribe", False), ("subscribe", True)):
        cases.append(_useful_dataflow_case(rules, world, kind, has_up_to))
    return cases


def _useful_dataflow_case(rules: Rules, world: World, kind: str, has_up_to: bool) -> Case:
    start, offset, _, exp, hyps = incarnation(rules, world)
    (bound, ob) = opt_time("bound")
    _, up_to, valid = schedule_clauses((), has_up_to)
    expiration, until = encoding.render(rules, kind, bound, up_to, exp)
    life = start + offset
    return Case(
        "useful",
        f"{variant_label(kind, (), has_up_to)} drops from one tick past the replica's life",
        (*hyps, ob, bound.has, bound.val <= life, *valid),
        z3.And(until.has, until.val <= life + 1),
        named_terms(start=start, offset=offset, bound=bound, expiration=expiration, until=until, up_to=up_to),
        {"kind": "dataflow", "dataflow": kind, "up_to": has_up_to, "useful": True},
    )
