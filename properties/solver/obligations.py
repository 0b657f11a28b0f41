"""What the checker proves: the obligations and the lattice laws, each a list of z3 cases.

A `Case` is hypotheses and a goal. It is TRIVIAL when the goal holds without any
hypothesis (`¬goal` alone is unsatisfiable: it says nothing about the world or the
rules' inputs), PROVED when `hypotheses ∧ ¬goal` is unsatisfiable, REFUTED by a model
of it, and UNKNOWN otherwise (a timeout or a resource limit is never reported as proved).

The world the proofs assume is `World`, written as code a reader can check against the
model's (model/catalog.py `Feed`, model/expiration.py `Replica`); it never calls a rule:

- a replica renders its dataflows when it starts, at `start`, and runs until
  `start + offset` (after that it is expired and must restart);
- a table or an epoch source (a *clock leaf*) ticks with the wall clock. When the
  replica renders it is at some upper `seen >= 0`: its skew `seen - start` is a free,
  unbounded parameter (every lead, every lag; the +1 of minting is a lead of 1). At
  any later wall time `w` of the incarnation its upper `u` has `seen <= u <=
  w + max(0, seen - start) + skew`: it never gets further ahead than it was, give or
  take `skew` (`--skew`; 0, the default, is the bound the `inputs_upper > expiration`
  branch handles: a lead gained after the render is refuted, caught on the model by
  the frontier check). The model's `Feed` with skews that never grow is one such world;
- a load generator's, or a non-epoch source's, upper is anything (it may jump or close);
- a constant is closed (empty frontier) from the start;
- a view, index or select is the meet of its inputs' uppers;
- a materialized view with a refresh schedule is at the first refresh at or after the
  meet of its inputs (closed once none is left), a refresh time stated as `REFRESH
  EVERY` documents it, `aligned_to + k * interval` for an integer `k`, or `REFRESH AT`'s
  time (`first_refresh`), not by the encoding's `next_refresh`;
- a subscribe's upper is the meet of its inputs' and its `UP TO`.

Obligations 1, 4 and 5 are proved per kind with the inputs' bounds as hypotheses, and
the meet of any number of inputs by induction (a base case and a step), so they hold for
every catalog DAG. Obligations 2-3 take obligation 1's conclusion for the dataflow as
their hypothesis. Every time is an unbounded z3 `Int`, constrained non-negative as the
Total domain is; the lattice laws use unbounded `Int`s with the domains' own range
constraints (Partitioned: `0 <= lo <= hi <= 2**31-1`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from typing import Any

import attrs
import z3

from frontier_harness.model.domains import PARTITION_MAX
from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.encoding import (
    NONE,
    Opt,
    Rules,
    fresh,
    frontier_le,
    frontier_lt_time,
    ite,
    some,
)

SCHEDULE_SHAPES = ((), ("every",), ("at",), ("every", "every"), ("every", "at"), ("at", "at"))


@attrs.frozen
class Case:
    """One query: `hypotheses → goal`; `terms` are named terms to read back from a refuting model."""

    obligation: str
    label: str
    hypotheses: tuple[Any, ...]  # z3 booleans
    goal: Any
    terms: dict[str, Any] = attrs.field(factory=dict)  # z3 terms or `Opt`s
    template: dict[str, Any] = attrs.field(factory=dict)  # what `realize.templates_for` starts from
    assumption: str = ""
    euclid: bool = False  # name `%` by a variable as Euclid's division before solving (see `euclid`)


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


@attrs.frozen
class World:
    """The assumptions about how uppers move, as constraints (see the module docstring)."""

    skew: int = 0

    def lifetime(self, start: Any, offset: Any, wall: Any) -> list:
        """A running incarnation: started at `start`, `offset > 0`, at a wall time up to `start + offset`."""
        return [start >= 0, offset > 0, wall >= start, wall <= start + offset]

    def leaf_upper(self, kind: str, wall: Any, upper: Opt, render: Any, seen: Any) -> Any:
        """What the world allows a leaf's upper to be at wall time `wall`, having been `seen` at `render`."""
        if kind in encoding.CLOCK_KINDS:
            lead = z3.If(seen - render > 0, seen - render, 0)
            return z3.And(seen >= 0, upper.has, upper.val >= seen, upper.val <= wall + lead + self.skew)
        if kind == "constant":
            return z3.Not(upper.has)
        return z3.Implies(upper.has, upper.val >= 0)

    def meet(self, uppers: list[Opt]) -> Opt:
        """The meet of the inputs' uppers (the empty frontier for none)."""
        out = NONE
        for u in uppers:
            out = encoding.frontier_meet(encoding.FAITHFUL, out, u)
        return out

    def derived_upper(self, kind: str, met: Opt, schedule: tuple = (), up_to: Opt = NONE) -> Opt:
        """A derived object's upper from the meet of its inputs' uppers.

        An MV's first refresh at or after the meet is computed by the faithful `next_refresh`,
        which obligation 6 proves equal to the documented statement (`first_refresh`); the
        rules under test never enter the world.
        """
        if kind == "mv" and schedule:
            return ite(met.has, encoding.next_refresh(encoding.FAITHFUL, schedule, met.val), NONE)
        if kind == "subscribe":
            return encoding.frontier_meet(encoding.FAITHFUL, met, up_to)
        return met


ASSUMPTIONS = {
    "table": "a table ticks with the wall clock and never gets more than --skew further ahead "
    "than it was when the dataflow was rendered",
    "source": "an epoch source ticks with the wall clock and never gets more than --skew further ahead "
    "than it was when the dataflow was rendered",
    "load_generator": "a load generator's upper is any monotone function (it may jump)",
    "non_epoch_source": "a non-epoch source's upper is not related to wall-clock time",
    "constant": "a constant is closed from the start",
    "meet": "a derived object's upper is the meet of its inputs'",
    "mv": "a materialized view with a refresh schedule is at its first refresh (aligned_to + k*interval)",
    "subscribe": "a subscribe stops at its UP TO",
}


def _time(name: str) -> Any:
    return z3.Int(name)


def _opt_time(name: str) -> tuple[Opt, Any]:
    o = fresh(name)
    return o, z3.Implies(o.has, o.val >= 0)


def _incarnation(rules: Rules, world: World, suffix: str = "") -> tuple[Any, Any, Any, Opt, list]:
    """`start`, `offset`, a wall time, the rules' replica expiration and the world's hypotheses."""
    start, offset, wall = _time(f"start{suffix}"), _time(f"offset{suffix}"), _time(f"wall{suffix}")
    return (
        start,
        offset,
        wall,
        rules.replica_expiration(rules, start, offset),
        world.lifetime(start, offset, wall),
    )


def _label(kind: str, shape: tuple[str, ...], has_up_to: bool) -> str:
    return kind + (f" refresh {'+'.join(shape)}" if shape else "") + (" up_to" if has_up_to else "")


def _derived_variants(refresh: bool = True) -> list[tuple[str, tuple, bool]]:
    variants: list[tuple[str, tuple, bool]] = [(k, (), False) for k in ("view", "select", "index")]
    variants += [("mv", shape, False) for shape in (SCHEDULE_SHAPES if refresh else ((),))]
    return variants + [("subscribe", (), False), ("subscribe", (), True)]


def _schedule(shape: tuple[str, ...], has_up_to: bool, prefix: str = "refresh") -> tuple[tuple, Opt, list]:
    """Symbolic refresh clauses of `shape` and an `UP TO` (or none), with their validity constraints."""
    schedule = encoding.symbolic_schedule(shape, prefix)
    up_to = some(_time("up_to")) if has_up_to else NONE
    return schedule, up_to, [c.valid() for c in schedule] + ([up_to.val >= 0] if has_up_to else [])


# ---------------------------------------------------------------- 1. time dependence is sound


def time_dependence_cases(rules: Rules, world: World) -> list[Case]:
    """Per kind: the upper at any wall time of the incarnation is within the bound at its expiration."""
    name = "time-dependence"
    cases = []
    for kind in encoding.LEAF_KINDS:
        start, offset, wall, exp, hyps = _incarnation(rules, world)
        seen, (upper, upper_ok) = _time("seen"), _opt_time("upper")
        bound = encoding.leaf_bound(rules, kind, exp.val, (seen, start))
        hyps += [upper_ok, world.leaf_upper(kind, wall, upper, start, seen)]
        cases.append(
            Case(
                name,
                f"leaf {kind}",
                tuple(hyps),
                frontier_le(upper, bound),
                _terms(start=start, offset=offset, wall=wall, seen=seen, upper=upper, bound=bound),
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
    (u1, ok1), (u2, ok2) = _opt_time("upper.acc"), _opt_time("upper.next")
    (b1, okb1), (b2, okb2) = _opt_time("bound.acc"), _opt_time("bound.next")
    step_bound = rules.meet_bounds(rules, b1, b2)
    cases.append(
        Case(
            name,
            "inputs: one more input (induction step)",
            (ok1, ok2, okb1, okb2, frontier_le(u1, b1), frontier_le(u2, b2)),
            frontier_le(world.meet([u1, u2]), step_bound),
            _terms(upper_acc=u1, upper_next=u2, bound_acc=b1, bound_next=b2, bound=step_bound),
            {"kind": "meet"},
            ASSUMPTIONS["meet"],
        )
    )
    for kind, shape, has_up_to in _derived_variants():
        cases.append(_derived_case(rules, world, kind, shape, has_up_to))
    return cases


def _derived_case(rules: Rules, world: World, kind: str, shape: tuple[str, ...], has_up_to: bool) -> Case:
    (met_u, ok_u), (met_b, ok_b) = _opt_time("upper.met"), _opt_time("bound.met")
    schedule, up_to, valid = _schedule(shape, has_up_to)
    upper = world.derived_upper(kind, met_u, schedule, up_to)
    bound = encoding.kind_step(rules, kind, met_b, schedule, up_to)
    return Case(
        "time-dependence",
        _label(kind, shape, has_up_to),
        (ok_u, ok_b, frontier_le(met_u, met_b), *valid),
        frontier_le(upper, bound),
        _terms(
            upper_met=met_u,
            bound_met=met_b,
            upper=upper,
            bound=bound,
            up_to=up_to,
            **_schedule_terms(schedule),
        ),
        {"kind": "derived", "dataflow": kind, "shape": shape, "up_to": has_up_to},
        ASSUMPTIONS["mv" if shape else kind if kind == "subscribe" else "meet"],
    )


# ---------------------------------------------------------------- 2-3. the dataflow


def _dataflow_hyps(kind: str, upper: Opt, bound: Opt) -> tuple[list, Opt]:
    """Obligation 1's conclusion for the dataflow, and a subscribe stopping at its `UP TO`."""
    hyps = [frontier_le(upper, bound)]
    if kind != "subscribe":
        return hyps, NONE
    up_to, ok = _opt_time("up_to")
    return hyps + [ok, frontier_le(upper, up_to)], up_to


def _dataflow(rules: Rules, world: World, kind: str) -> tuple[list, dict, Opt, Opt, Opt, Any]:
    """A running expiring dataflow of `kind`: hypotheses, terms, upper, expiration, until and a time."""
    start, offset, wall, exp, hyps = _incarnation(rules, world)
    t = _time("time")
    (bound, ok_b), (upper, ok_u) = _opt_time("bound"), _opt_time("upper")
    more, up_to = _dataflow_hyps(kind, upper, bound)
    expiration, until = encoding.render(rules, kind, bound, up_to, exp)
    terms = _terms(
        start=start,
        offset=offset,
        wall=wall,
        time=t,
        expiration=expiration,
        until=until,
        bound=bound,
        upper=upper,
        up_to=up_to,
        replica_expiration=exp,
    )
    return [*hyps, t >= 0, ok_b, ok_u, *more], terms, upper, expiration, until, t


def visible_kept_cases(rules: Rules, world: World) -> list[Case]:
    """2. A time visible at a wall time of the incarnation is before the until after the meet."""
    cases = []
    for kind in encoding.EXPIRING_KINDS:
        hyps, terms, upper, _, until, t = _dataflow(rules, world, kind)
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


def hold_cases(rules: Rules, world: World) -> list[Case]:
    """3. The hold refuses no visible read, serves none at/after the expiration; until = expiration."""
    cases = []
    for kind in encoding.EXPIRING_KINDS:
        hyps, terms, upper, expiration, until, t = _dataflow(rules, world, kind)
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


# ---------------------------------------------------------------- 4. restart


def restart_cases(rules: Rules, world: World) -> list[Case]:
    """4. A later incarnation's bound is no earlier, derived per kind from the rules, so it re-derives what
    the earlier one dropped and holds too."""
    name = "restart"
    cases = []
    for kind in encoding.LEAF_KINDS:
        s1, s2, offset = _time("start.before"), _time("start.after"), _time("offset")
        seen1, seen2 = _time("seen.before"), _time("seen.after")
        e1, e2 = rules.replica_expiration(rules, s1, offset), rules.replica_expiration(rules, s2, offset)
        b1 = encoding.leaf_bound(rules, kind, e1.val, (seen1, s1))
        b2 = encoding.leaf_bound(rules, kind, e2.val, (seen2, s2))
        cases.append(
            Case(
                name,
                f"leaf {kind} monotone",
                (s1 >= 0, s2 > s1, offset > 0, seen1 >= 0, seen2 >= seen1),
                frontier_le(b1, b2),
                _terms(start_before=s1, start_after=s2, offset=offset, before=b1, after=b2),
                {"kind": "leaf", "leaf": kind, "restart": True},
            )
        )
    (a1, oa1), (a2, oa2), (c1, oc1), (c2, oc2) = (
        _opt_time(n) for n in ("acc.before", "acc.after", "next.before", "next.after")
    )
    cases.append(
        Case(
            name,
            "inputs: meet monotone",
            (oa1, oa2, oc1, oc2, frontier_le(a1, a2), frontier_le(c1, c2)),
            frontier_le(rules.meet_bounds(rules, a1, c1), rules.meet_bounds(rules, a2, c2)),
            _terms(acc_before=a1, acc_after=a2, next_before=c1, next_after=c2),
            {"kind": "meet"},
        )
    )
    for kind, shape, has_up_to in _derived_variants():
        (m1, o1), (m2, o2) = _opt_time("met.before"), _opt_time("met.after")
        schedule, up_to, valid = _schedule(shape, has_up_to)
        b1, b2 = (encoding.kind_step(rules, kind, m, schedule, up_to) for m in (m1, m2))
        cases.append(
            Case(
                name,
                f"{_label(kind, shape, has_up_to)} monotone",
                (o1, o2, frontier_le(m1, m2), *valid),
                frontier_le(b1, b2),
                _terms(met_before=m1, met_after=m2, before=b1, after=b2, **_schedule_terms(schedule)),
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
    s1, wall, offset, e2, hyps = _incarnation(rules, world, ".after")
    s0 = _time("start.before")
    e1 = rules.replica_expiration(rules, s0, offset)
    t = _time("time")
    (m1, om1), (m2, om2), (upper, ou) = _opt_time("met.before"), _opt_time("met.after"), _opt_time("upper")
    schedule, up_to, valid = _schedule(shape, has_up_to)
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
        f"{_label(kind, shape, has_up_to)} re-derives",
        tuple(hyps),
        goal,
        _terms(
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


# ---------------------------------------------------------------- 5. usefulness


def useful_cases(rules: Rules, world: World) -> list[Case]:
    """5. Over epoch inputs not ahead of the wall clock and without a refresh schedule, a dataflow expires one
    tick past the replica's life (`start + offset + 1`) and drops every diff from there: "never expire" fails.

    By induction as obligation 1: a clock leaf not ahead is bounded by `start + offset`; the meet of
    an input so bounded with any other is; each kind's step (no refresh) keeps it; the dataflow then
    has an `until` at most one tick past it.
    """
    name, cases = "useful", []
    for kind in encoding.CLOCK_KINDS:
        start, offset, _, exp, hyps = _incarnation(rules, world)
        seen = _time("seen")
        bound = encoding.leaf_bound(rules, kind, exp.val, (seen, start))
        cases.append(
            Case(
                name,
                f"leaf {kind} not ahead",
                (*hyps, seen >= 0, seen <= start),
                z3.And(bound.has, bound.val <= start + offset),
                _terms(start=start, offset=offset, seen=seen, bound=bound),
                {"kind": "leaf", "leaf": kind, "useful": True},
            )
        )
    life = _time("life")
    (a, oa), (c, oc) = _opt_time("bound.acc"), _opt_time("bound.next")
    met = rules.meet_bounds(rules, a, c)
    cases.append(
        Case(
            name,
            "inputs: meet with any other input",
            (oa, oc, a.has, a.val <= life),
            z3.And(met.has, met.val <= life),
            _terms(bound_acc=a, bound_next=c, bound=met, life=life),
            {"kind": "meet"},
        )
    )
    for kind, shape, has_up_to in _derived_variants(refresh=False):
        (m, om) = _opt_time("bound.met")
        schedule, up_to, valid = _schedule(shape, has_up_to)
        bound = encoding.kind_step(rules, kind, m, schedule, up_to)
        cases.append(
            Case(
                name,
                f"{_label(kind, shape, has_up_to)} keeps it",
                (om, m.has, m.val <= life, *valid),
                z3.And(bound.has, bound.val <= life),
                _terms(bound_met=m, bound=bound, life=life, up_to=up_to),
                {"kind": "derived", "dataflow": kind, "up_to": has_up_to},
            )
        )
    for kind, has_up_to in (("mv", False), ("index", False), ("subscribe", False), ("subscribe", True)):
        cases.append(_useful_dataflow_case(rules, world, kind, has_up_to))
    return cases


def _useful_dataflow_case(rules: Rules, world: World, kind: str, has_up_to: bool) -> Case:
    start, offset, _, exp, hyps = _incarnation(rules, world)
    (bound, ob) = _opt_time("bound")
    _, up_to, valid = _schedule((), has_up_to)
    expiration, until = encoding.render(rules, kind, bound, up_to, exp)
    life = start + offset
    return Case(
        "useful",
        f"{_label(kind, (), has_up_to)} drops from one tick past the replica's life",
        (*hyps, ob, bound.has, bound.val <= life, *valid),
        z3.And(until.has, until.val <= life + 1),
        _terms(start=start, offset=offset, bound=bound, expiration=expiration, until=until, up_to=up_to),
        {"kind": "dataflow", "dataflow": kind, "up_to": has_up_to, "useful": True},
    )


# ---------------------------------------------------------------- 6. refresh


def refresh_cases(rules: Rules, world: World) -> list[Case]:
    """6. The rules' next refresh is the first at or after a time as `REFRESH EVERY`/`AT` document it.

    One clause each (`EVERY` needs `%` by a variable: solved with Euclid's division named),
    then schedules of two and three clauses with each clause's first refresh left opaque:
    the earliest clause that has one, none if none has.
    """
    cases = []
    for shape in (("every",), ("at",)):
        schedule, _, valid = _schedule(shape, False)
        t = _time("time")
        stated, constraints = first_refresh(schedule, t, "stated")
        got = rules.next_refresh(rules, schedule, t)
        cases.append(
            Case(
                "refresh",
                f"{shape[0]}: the first refresh at or after a time",
                (t >= 0, *valid, *constraints),
                _same(got, stated),
                _terms(time=t, rule=got, stated=stated, **_schedule_terms(schedule)),
                {"kind": "derived", "dataflow": "mv", "shape": shape},
                euclid=True,
            )
        )
    for n in (2, 3):
        firsts = [_opt_time(f"clause.{i}") for i in range(n)]
        t = _time("time")
        got = rules.next_refresh(rules, tuple(_Opaque(f) for f, _ in firsts), t)
        earliest = reduce(_earliest, (f for f, _ in firsts), NONE)
        cases.append(
            Case(
                "refresh",
                f"{n} clauses: the earliest clause's first refresh",
                (t >= 0, *(ok for _, ok in firsts), *(z3.Implies(f.has, f.val >= t) for f, _ in firsts)),
                _same(got, earliest),
                _terms(time=t, rule=got, stated=earliest),
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


# ---------------------------------------------------------------- lattice laws


def _pair(name: str) -> tuple[tuple, list]:
    a, b = z3.Int(f"{name}.0"), z3.Int(f"{name}.1")
    return (a, b), [a >= 0, b >= 0]


def _ptime(name: str) -> tuple[tuple, list]:
    lo, hi, off = z3.Int(f"{name}.lo"), z3.Int(f"{name}.hi"), z3.Int(f"{name}.offset")
    return (lo, hi, off), [lo >= 0, lo <= hi, hi <= PARTITION_MAX, off >= 0]


def product_le(x: tuple, y: tuple) -> Any:
    """model `Product(Total, Total).le`: coordinate-wise."""
    return z3.And(x[0] <= y[0], x[1] <= y[1])


def product_join(x: tuple, y: tuple) -> tuple:
    """model `Product(Total, Total).join` (always exists)."""
    return (z3.If(x[0] >= y[0], x[0], y[0]), z3.If(x[1] >= y[1], x[1], y[1]))


def product_meet(x: tuple, y: tuple) -> tuple:
    """model `Product(Total, Total).meet`."""
    return (z3.If(x[0] <= y[0], x[0], y[0]), z3.If(x[1] <= y[1], x[1], y[1]))


def partitioned_le(a: tuple, b: tuple) -> Any:
    """model `Partitioned.le`: `a`'s interval contains `b`'s and `a.offset <= b.offset`."""
    return z3.And(a[0] <= b[0], b[1] <= a[1], a[2] <= b[2])


def partitioned_join(a: tuple, b: tuple) -> tuple[Any, tuple]:
    """model `Partitioned.join`: `(exists, time)`; the intersection with the larger offset."""
    lo, hi = z3.If(a[0] >= b[0], a[0], b[0]), z3.If(a[1] <= b[1], a[1], b[1])
    return lo <= hi, (lo, hi, z3.If(a[2] >= b[2], a[2], b[2]))


def partitioned_meet(a: tuple, b: tuple) -> tuple:
    """model `Partitioned.meet`: the smallest interval containing both, the smaller offset."""
    return (z3.If(a[0] <= b[0], a[0], b[0]), z3.If(a[1] >= b[1], a[1], b[1]), z3.If(a[2] <= b[2], a[2], b[2]))


def lattice_cases(rules: Rules, world: World) -> list[Case]:
    """`join`/`meet` of Product(Total, Total) and Partitioned are the lub/glb of their `le`."""
    (x, hx), (y, hy), (c, hc) = _pair("x"), _pair("y"), _pair("c")
    j, m = product_join(x, y), product_meet(x, y)
    le = product_le
    cases = [
        Case(
            "lattice",
            "product join is the least upper bound",
            tuple(hx + hy + hc),
            z3.And(le(x, j), le(y, j), z3.Implies(z3.And(le(x, c), le(y, c)), le(j, c))),
            {},
            {"kind": "lattice"},
        ),
        Case(
            "lattice",
            "product meet is the greatest lower bound",
            tuple(hx + hy + hc),
            z3.And(le(m, x), le(m, y), z3.Implies(z3.And(le(c, x), le(c, y)), le(c, m))),
            {},
            {"kind": "lattice"},
        ),
    ]
    (a, ha), (b, hb), (d, hd) = _ptime("a"), _ptime("b"), _ptime("c")
    exists, pj = partitioned_join(a, b)
    pm = partitioned_meet(a, b)
    ple = partitioned_le
    in_range = lambda t: z3.And(t[0] >= 0, t[0] <= t[1], t[1] <= PARTITION_MAX, t[2] >= 0)  # noqa: E731
    bounded = z3.And(ple(a, d), ple(b, d))
    cases += [
        Case(
            "lattice",
            "partitioned join is the least upper bound, absent iff none",
            tuple(ha + hb + hd),
            z3.And(
                z3.Implies(
                    exists, z3.And(in_range(pj), ple(a, pj), ple(b, pj), z3.Implies(bounded, ple(pj, d)))
                ),
                z3.Implies(z3.Not(exists), z3.Not(bounded)),
            ),
            {},
            {"kind": "lattice"},
        ),
        Case(
            "lattice",
            "partitioned meet is the greatest lower bound",
            tuple(ha + hb + hd),
            z3.And(
                in_range(pm), ple(pm, a), ple(pm, b), z3.Implies(z3.And(ple(d, a), ple(d, b)), ple(d, pm))
            ),
            {},
            {"kind": "lattice"},
        ),
    ]
    return cases


# ---------------------------------------------------------------- registry


def _terms(**named: Any) -> dict[str, Any]:
    return {k: v for k, v in named.items() if v is not None}


def _schedule_terms(schedule: Sequence[encoding.Every | encoding.At]) -> dict[str, Any]:
    out = {}
    for i, c in enumerate(schedule):
        if isinstance(c, encoding.Every):
            out[f"refresh_{i}_every"] = c.interval
            out[f"refresh_{i}_aligned_to"] = c.aligned_to
        else:
            out[f"refresh_{i}_at"] = c.at
    return out


@attrs.frozen
class Obligation:
    """A named obligation: a doc line and how to build its cases from the rules and the world."""

    name: str
    doc: str
    cases: Callable[[Rules, World], list[Case]]


OBLIGATIONS = (
    Obligation(
        "time-dependence",
        "1. time dependence is sound, per object kind, compositionally, for every skew",
        time_dependence_cases,
    ),
    Obligation(
        "nothing-visible-dropped",
        "2. a time visible before the restart is before the until",
        visible_kept_cases,
    ),
    Obligation(
        "frontier-hold",
        "3. the hold at the expiration is never reached and hides exactly what is dropped",
        hold_cases,
    ),
    Obligation(
        "restart",
        "4. a restarted incarnation re-derives what was dropped and holds too (derived per kind)",
        restart_cases,
    ),
    Obligation(
        "useful",
        "5. epoch inputs not ahead, no refresh: the dataflow drops every diff past the replica's life",
        useful_cases,
    ),
    Obligation(
        "refresh",
        "6. next_refresh is the first aligned_to + k*interval (or AT) at or after a time",
        refresh_cases,
    ),
    Obligation(
        "lattice", "join/meet of Product and Partitioned are lub/glb of le (unbounded Int)", lattice_cases
    ),
)
NAMES = tuple(o.name for o in OBLIGATIONS)


def get(name: str) -> Obligation:
    """The obligation called `name`; `KeyError` naming the known ones."""
    for o in OBLIGATIONS:
        if o.name == name:
            return o
    raise KeyError(f"unknown obligation {name!r}: known are {', '.join(NAMES)}")


# ---------------------------------------------------------------- proving


@attrs.frozen
class Verdict:
    """One case's result: "trivial", "proved", "refuted", "unknown" (with the solver's reason) or "error"."""

    case: Case
    status: str
    seconds: float
    values: dict[str, int | None] = attrs.field(factory=dict)
    reason: str = ""


def euclid(exprs: Sequence[Any]) -> tuple[list, list]:
    """`exprs` with each `x % y` by a non-constant `y` named by a fresh `m`, and the facts defining it.

    The facts are Euclid's division, `y > 0 => x == q*y + m and 0 <= m < y` (a fresh
    `q`): what `%` is for a positive divisor, as in Python. z3 gives up on `%` by a
    variable inside non-linear goals but handles the products; for `y <= 0` `m` is left
    free, which only makes a proof harder, never easier.
    """
    named: dict[str, Any] = {}
    facts: list[Any] = []

    def walk(e: Any) -> Any:
        if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_MOD and not z3.is_int_value(e.arg(1)):
            key = e.sexpr()
            if key not in named:
                x, y = walk(e.arg(0)), walk(e.arg(1))
                m, q = z3.Int(f"mod.{len(named)}"), z3.Int(f"quotient.{len(named)}")
                named[key] = m
                facts.append(z3.Implies(y > 0, z3.And(x == q * y + m, m >= 0, m < y)))
            return named[key]
        if z3.is_app(e) and e.num_args() > 0:
            return e.decl()(*[walk(c) for c in e.children()])
        return e

    return [walk(e) for e in exprs], facts


def _solver(timeout_s: float | None, rlimit: int | None) -> z3.Solver:
    solver = z3.Solver()
    if timeout_s is not None:
        solver.set("timeout", max(1, int(timeout_s * 1000)))
    if rlimit is not None:
        solver.set("rlimit", rlimit)
    return solver


def check_case(case: Case, timeout_s: float | None = None, rlimit: int | None = None) -> Verdict:
    """Proves, refutes or gives up on one case; a give-up or a solver error is never reported as proved.

    A goal that holds with no hypothesis at all is "trivial": true, but no evidence about the rules.
    """
    solver = _solver(timeout_s, rlimit)
    started = time.perf_counter()
    try:
        hypotheses, goal, facts = list(case.hypotheses), case.goal, list[Any]()
        if case.euclid:
            (*hypotheses, goal), facts = euclid([*case.hypotheses, case.goal])
        solver.add(*facts, z3.Not(goal))
        if solver.check() == z3.unsat:
            return Verdict(case, "trivial", time.perf_counter() - started)
        solver = _solver(timeout_s, rlimit)
        solver.add(*facts, *hypotheses, z3.Not(goal))
        result = solver.check()
        seconds = time.perf_counter() - started
        if result == z3.unsat:
            return Verdict(case, "proved", seconds)
        if result == z3.sat:
            return Verdict(case, "refuted", seconds, read_terms(case.terms, solver.model()))
        return Verdict(case, "unknown", seconds, reason=solver.reason_unknown() or "unknown")
    except z3.Z3Exception as exc:
        return Verdict(case, "error", time.perf_counter() - started, reason=f"solver error: {exc}")


def read_terms(terms: Mapping[str, Any], model: z3.ModelRef) -> dict[str, int | None]:
    """The named terms' values under a model (`Opt`s as `Optional[int]`)."""
    return {
        k: encoding.concrete(v, model)
        if isinstance(v, Opt)
        else model.eval(v, model_completion=True).as_long()
        for k, v in terms.items()
    }


@attrs.frozen
class Result:
    """An obligation's verdicts: refuted if any case is, else unknown/error if any is, else proved."""

    obligation: Obligation
    verdicts: tuple[Verdict, ...]
    seconds: float

    @property
    def status(self) -> str:
        """The worst verdict: refuted, error, unknown; else proved (trivial only when every case is)."""
        statuses = {v.status for v in self.verdicts}
        for status in ("refuted", "error", "unknown", "proved"):
            if status in statuses:
                return status
        return "trivial"

    def count(self, status: str) -> int:
        return sum(v.status == status for v in self.verdicts)


def prove(
    names: Sequence[str] | None = None,
    rules: Rules = encoding.FAITHFUL,
    skew: int = 0,
    timeout_s: float | None = None,
    rlimit: int | None = None,
) -> list[Result]:
    """Every case of the named obligations (all by default), each obligation's time measured."""
    world = World(skew)
    results = []
    for name in names or NAMES:
        obligation = get(name)
        started = time.perf_counter()
        verdicts = tuple(check_case(c, timeout_s, rlimit) for c in obligation.cases(rules, world))
        results.append(Result(obligation, verdicts, time.perf_counter() - started))
    return results
