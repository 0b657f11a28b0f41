"""Obligation 6: `next_refresh` is the first `aligned_to + k*interval` (or `AT`) at or after a time.

`first_refresh` states the clauses as the documentation does; the world uses the
faithful `next_refresh`, which this obligation proves equal to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from typing import Any

import attrs
import z3

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import (
    Case,
    int_time,
    named_terms,
    opt_time,
    schedule_clauses,
    schedule_terms,
)
from frontier_harness.properties.solver.encoding import NONE, Opt, Rules, ite, some
from frontier_harness.properties.solver.world import World


def first_refresh(schedule: Sequence, t: Any, prefix: str) -> tuple[Opt, list]:
    """The first refresh at or after `t`, as the documentation states the clauses, with its constraints.

    `REFRESH EVERY interval ALIGNED TO a` refreshes at `a + k * interval` for every integer
    `k`: the first at or after `t` is the one with `t <= a + k * interval < t + interval`
    (a fresh `k`, which exists and is unique). `REFRESH AT at` refreshes once, at `at`. The
    earliest of the clauses' first refreshes; none if no clause has one.
    """
    firsts, constraints = [], []
    for i, c in enumerate(schedule):
        if isinstance(c, encoding.Every):
            r = c.aligned_to + z3.Int(f"{prefix}.{i}.k") * c.interval
            constraints += [r >= t, r < t + c.interval]
            firsts.append(some(r))
        else:
            firsts.append(ite(c.at >= t, some(c.at), NONE))
    return reduce(_earliest, firsts, NONE), constraints


def _earliest(a: Opt, b: Opt) -> Opt:
    return ite(z3.Not(a.has), b, ite(z3.Not(b.has), a, some(z3.If(a.val <= b.val, a.val, b.val))))


def refresh_cases(rules: Rules, world: World) -> list[Case]:
    """6. The rules' next refresh is the first at or after a time as `REFRESH EVERY`/`AT` document it.

    One clause each (`EVERY` needs `%` by a variable: solved with Euclid's division named),
    then schedules of two and three clauses with each clause's first refresh left opaque:
    the earliest clause that has one, none if none has.
    """
    cases = []
    for shape in (("every",), ("at",)):
        schedule, _, valid = schedule_clauses(shape, False)
        t = int_time("time")
        stated, constraints = first_refresh(schedule, t, "stated")
        got = rules.next_refresh(rules, schedule, t)
        cases.append(
            Case(
                "refresh",
                f"{shape[0]}: the first refresh at or after a time",
                (t >= 0, *valid, *constraints),
                _same(got, stated),
                named_terms(time=t, rule=got, stated=stated, **schedule_terms(schedule)),
                {"kind": "derived", "dataflow": "mv", "shape": shape},
                euclid=True,
            )
        )
    for n in (2, 3):
        firsts = [opt_time(f"clause.{i}") for i in range(n)]
        t = int_time("time")
        got = rules.next_refresh(rules, tuple(_Opaque(f) for f, _ in firsts), t)
        earliest = reduce(_earliest, (f for f, _ in firsts), NONE)
        cases.append(
            Case(
                "refresh",
                f"{n} clauses: the earliest clause's first refresh",
                (t >= 0, *(ok for _, ok in firsts), *(z3.Implies(f.has, f.val >= t) for f, _ in firsts)),
                _same(got, earliest),
                named_terms(time=t, rule=got, stated=earliest),
                {"kind": "derived", "dataflow": "mv", "shape": ("every",) * n},
            )
        )
    return cases


@attrs.frozen
class _Opaque:
    """A refresh clause whose first refresh at or after the case's time is the free `first`."""

    first: Opt

    def round_up(self, t: Any) -> Opt:
        return self.first


def _same(a: Opt, b: Opt) -> Any:
    return z3.And(a.has == b.has, z3.Implies(a.has, a.val == b.val))
