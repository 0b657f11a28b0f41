"""What the checker proves: the issue's obligations and the lattice laws, each a list of z3 cases.

A `Case` is hypotheses and a goal; it is PROVED when `hypotheses ∧ ¬goal` is
unsatisfiable, REFUTED by a model of it, and UNKNOWN otherwise (a timeout or a
resource limit is never reported as proved).

The world the proofs assume is `World`, written as code a reader can check:

- a table or an epoch source is complete up to at most the wall-clock time plus
  `skew` (its upper is a time `<= w + skew`); the model's `Feed` is the case
  `skew = 0`, upper exactly `w`;
- a load generator's, or a non-epoch source's, upper is anything (any monotone
  function may jump arbitrarily far, and may close);
- a constant is closed (empty frontier) from the start;
- a view, index or select is the meet of its inputs' uppers;
- a materialized view with a refresh schedule jumps to the next refresh at or
  after the meet of its inputs (closed once no refresh is left);
- a subscribe's upper is the meet of its inputs' and its `UP TO`.

Obligation 1 is proved per kind with the inputs' bounds as hypotheses, and the
meet of any number of inputs by induction (a base case and a step), so it holds
for every catalog DAG. Obligations 2-4 take obligation 1's conclusion for the
dataflow as their hypothesis. Every time is an unbounded z3 `Int`, constrained
non-negative as the Total domain is; the lattice laws use unbounded `Int`s with
the domains' own range constraints (Partitioned: `0 <= lo <= hi <= 2**31-1`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import z3

from model.domains import PARTITION_MAX
from properties.solver import encoding as enc
from properties.solver.encoding import NONE, Opt, Rules, fresh, frontier_le, frontier_lt_time, ite, some

SCHEDULE_SHAPES = ((), ("every",), ("at",), ("every", "every"), ("every", "at"), ("at", "at"))


@attrs.frozen
class Case:
    """One query: `hypotheses → goal`; `terms` are named terms to read back from a refuting model."""

    obligation: str
    label: str
    hypotheses: tuple
    goal: Any
    terms: dict = attrs.field(factory=dict)
    template: dict = attrs.field(factory=dict)
    assumption: str = ""


@attrs.frozen
class World:
    """The assumptions about how uppers move, as constraints (see the module docstring)."""

    skew: int = 0

    def leaf_upper(self, kind: str, wall: Any, upper: Opt) -> Any:
        """What the world allows a leaf's upper to be at wall-clock time `wall`."""
        if kind in ("table", "source"):
            return z3.And(upper.has, upper.val >= 0, upper.val <= wall + self.skew)
        if kind == "constant":
            return z3.Not(upper.has)
        return z3.Implies(upper.has, upper.val >= 0)

    def meet(self, uppers: list[Opt]) -> Opt:
        """The meet of the inputs' uppers (the empty frontier for none)."""
        out = NONE
        for u in uppers:
            out = enc.frontier_meet(enc.FAITHFUL, out, u)
        return out

    def derived_upper(self, kind: str, met: Opt, schedule: tuple = (), up_to: Opt = NONE) -> Opt:
        """A derived object's upper from the meet of its inputs' uppers."""
        if kind == "mv" and schedule:
            return ite(met.has, enc.next_refresh(enc.FAITHFUL, schedule, met.val), NONE)
        if kind == "subscribe":
            return enc.frontier_meet(enc.FAITHFUL, met, up_to)
        return met


ASSUMPTIONS = {
    "table": "a table's upper at wall-clock time w is at most w + skew",
    "source": "an epoch source's upper at wall-clock time w is at most w + skew",
    "load_generator": "a load generator's upper is any monotone function (it may jump)",
    "non_epoch_source": "a non-epoch source's upper is not related to wall-clock time",
    "constant": "a constant is closed from the start",
    "meet": "a derived object's upper is the meet of its inputs'",
    "mv": "a materialized view with a refresh schedule jumps to its next refresh",
    "subscribe": "a subscribe stops at its UP TO",
}


def _time(name: str) -> Any:
    return z3.Int(name)


def _opt_time(name: str) -> tuple[Opt, Any]:
    o = fresh(name)
    return o, z3.Implies(o.has, o.val >= 0)


def _replica(rules: Rules) -> tuple[Any, Any, Opt, list]:
    """A running replica: `start >= 0`, `offset > 0`, its expiration, and their constraints."""
    start, offset = _time("start"), _time("offset")
    exp = rules.replica_expiration(rules, start, offset)
    return start, offset, exp, [start >= 0, offset > 0]


# ---------------------------------------------------------------- 1. time dependence is sound


def time_dependence_cases(rules: Rules, world: World) -> list[Case]:
    """Per kind: the upper at any wall time up to the replica expiration is within the bound at it."""
    name = "time-dependence"
    cases = []
    for kind in enc.LEAF_KINDS:
        start, _, exp, hyps = _replica(rules)
        wall, (upper, upper_ok) = _time("wall"), _opt_time("upper")
        bound = enc.leaf_bound(rules, kind, exp.val)
        hyps += [wall >= start, wall <= exp.val, upper_ok, world.leaf_upper(kind, wall, upper)]
        cases.append(
            Case(
                name,
                f"leaf {kind}",
                tuple(hyps),
                frontier_le(upper, bound),
                _terms(start=start, wall=wall, expiration=exp, upper=upper, bound=bound),
                {"kind": "leaf", "leaf": kind},
                ASSUMPTIONS[kind],
            )
        )
    cases.append(
        Case(
            name,
            "inputs: no input",
            (),
            frontier_le(world.meet([]), enc.meet_inputs(rules, [])),
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


def _derived_variants() -> list[tuple[str, tuple, bool]]:
    variants: list[tuple[str, tuple, bool]] = [(k, (), False) for k in ("view", "select", "index")]
    variants += [("mv", shape, False) for shape in SCHEDULE_SHAPES]
    return variants + [("subscribe", (), False), ("subscribe", (), True)]


def _derived_case(rules: Rules, world: World, kind: str, shape: tuple, has_up_to: bool) -> Case:
    (met_u, ok_u), (met_b, ok_b) = _opt_time("upper.met"), _opt_time("bound.met")
    schedule = enc.symbolic_schedule(shape, "refresh")
    up_to = some(_time("up_to")) if has_up_to else NONE
    hyps = [ok_u, ok_b, frontier_le(met_u, met_b), *(c.valid() for c in schedule)]
    hyps += [up_to.val >= 0] if has_up_to else []
    upper = world.derived_upper(kind, met_u, schedule, up_to)
    bound = enc.kind_step(rules, kind, met_b, schedule, up_to)
    label = kind + (f" refresh {'+'.join(shape)}" if shape else "") + (" up_to" if has_up_to else "")
    return Case(
        "time-dependence",
        label,
        tuple(hyps),
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


# ---------------------------------------------------------------- 2-4. the dataflow


def visible_kept_cases(rules: Rules, world: World) -> list[Case]:
    """2. A time visible at a wall time before the restart is before the until after the meet."""
    cases = []
    for kind in enc.EXPIRING_KINDS:
        start, _, exp, hyps = _replica(rules)
        wall, t = _time("wall"), _time("time")
        (bound, ok_b), (upper, ok_u) = _opt_time("bound"), _opt_time("upper")
        more, up_to = _dataflow_hyps(kind, upper, bound)
        expiration, until = enc.render(rules, kind, bound, up_to, exp)
        hyps += [wall >= start, wall <= exp.val, t >= 0, ok_b, ok_u, *more, frontier_lt_time(upper, t)]
        cases.append(
            Case(
                "nothing-visible-dropped",
                kind,
                tuple(hyps),
                frontier_lt_time(until, t),
                _terms(
                    start=start,
                    wall=wall,
                    time=t,
                    expiration=expiration,
                    until=until,
                    bound=bound,
                    upper=upper,
                    up_to=up_to,
                    replica_expiration=exp,
                ),
                {"kind": "dataflow", "dataflow": kind},
            )
        )
    return cases


def _dataflow_hyps(kind: str, upper: Opt, bound: Opt) -> tuple[list, Opt]:
    """Obligation 1's conclusion for the dataflow, and a subscribe stopping at its `UP TO`."""
    hyps = [frontier_le(upper, bound)]
    if kind != "subscribe":
        return hyps, NONE
    up_to, ok = _opt_time("up_to")
    return hyps + [ok, frontier_le(upper, up_to)], up_to


def hold_cases(rules: Rules, world: World) -> list[Case]:
    """3. The hold never refuses a visible read, no read at/after the expiration is served, and the until is the expiration."""
    cases = []
    for kind in enc.EXPIRING_KINDS:
        start, _, exp, hyps = _replica(rules)
        wall, t = _time("wall"), _time("time")
        (bound, ok_b), (upper, ok_u) = _opt_time("bound"), _opt_time("upper")
        more, up_to = _dataflow_hyps(kind, upper, bound)
        expiration, until = enc.render(rules, kind, bound, up_to, exp)
        visible = frontier_lt_time(upper, t)
        served = z3.And(visible, z3.Not(rules.refused(rules, expiration, upper, t)))
        goal = z3.And(
            z3.Implies(visible, served),
            z3.Implies(z3.And(served, expiration.has), t < expiration.val),
            z3.Implies(expiration.has, z3.And(until.has, until.val == expiration.val)),
        )
        hyps += [wall >= start, wall <= exp.val, t >= 0, ok_b, ok_u, *more]
        cases.append(
            Case(
                "frontier-hold",
                kind,
                tuple(hyps),
                goal,
                _terms(
                    start=start,
                    wall=wall,
                    time=t,
                    expiration=expiration,
                    until=until,
                    bound=bound,
                    upper=upper,
                    up_to=up_to,
                    replica_expiration=exp,
                ),
                {"kind": "dataflow", "dataflow": kind},
            )
        )
    return cases


def restart_cases(rules: Rules, world: World) -> list[Case]:
    """4. A later incarnation's bound is no earlier (per kind), so it re-derives what was dropped and also holds."""
    name = "restart"
    cases = []
    for kind in enc.LEAF_KINDS:
        e1, e2 = _time("expiration.before"), _time("expiration.after")
        b1, b2 = enc.leaf_bound(rules, kind, e1), enc.leaf_bound(rules, kind, e2)
        cases.append(
            Case(
                name,
                f"leaf {kind} monotone",
                (e1 >= 0, e1 <= e2),
                frontier_le(b1, b2),
                _terms(before=b1, after=b2),
                {"kind": "leaf", "leaf": kind},
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
        schedule = enc.symbolic_schedule(shape, "refresh")
        up_to = some(_time("up_to")) if has_up_to else NONE
        hyps = [o1, o2, frontier_le(m1, m2), *(c.valid() for c in schedule)] + (
            [up_to.val >= 0] if has_up_to else []
        )
        b1, b2 = (enc.kind_step(rules, kind, m, schedule, up_to) for m in (m1, m2))
        label = kind + (f" refresh {'+'.join(shape)}" if shape else "") + (" up_to" if has_up_to else "")
        cases.append(
            Case(
                name,
                f"{label} monotone",
                tuple(hyps),
                frontier_le(b1, b2),
                _terms(met_before=m1, met_after=m2, before=b1, after=b2, **_schedule_terms(schedule)),
                {"kind": "derived", "dataflow": kind, "shape": shape, "up_to": has_up_to},
            )
        )
    return cases + [_restart_dataflow_case(rules, kind) for kind in enc.EXPIRING_KINDS]


def _restart_dataflow_case(rules: Rules, kind: str) -> Case:
    """The new incarnation keeps every update it shows that the old one dropped, drops no more, and holds."""
    s1, s2, offset = _time("start.before"), _time("start.after"), _time("offset")
    e1, e2 = rules.replica_expiration(rules, s1, offset), rules.replica_expiration(rules, s2, offset)
    wall, t = _time("wall"), _time("time")
    (b1, ob1), (b2, ob2), (upper, ou) = (
        _opt_time("bound.before"),
        _opt_time("bound.after"),
        _opt_time("upper"),
    )
    more, up_to = _dataflow_hyps(kind, upper, b2)
    exp1, until1 = enc.render(rules, kind, b1, up_to, e1)
    exp2, until2 = enc.render(rules, kind, b2, up_to, e2)
    hyps = [
        s1 >= 0,
        s2 > s1,
        offset > 0,
        wall >= s2,
        wall <= e2.val,
        t >= 0,
        ob1,
        ob2,
        ou,
        frontier_le(b1, b2),
        *more,
    ]  # bounds monotone: the per-kind cases above
    dropped_before = z3.Not(frontier_lt_time(until1, t))
    visible = frontier_lt_time(upper, t)
    served = z3.And(visible, z3.Not(rules.refused(rules, exp2, upper, t)))
    goal = z3.And(
        z3.Implies(z3.And(dropped_before, visible), z3.And(frontier_lt_time(until2, t), served)),
        frontier_le(until1, until2),
    )
    return Case(
        "restart",
        f"{kind} re-derives",
        tuple(hyps),
        goal,
        _terms(
            start_before=s1,
            start_after=s2,
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
        {"kind": "dataflow", "dataflow": kind, "restart": True},
    )


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


def _terms(**named: Any) -> dict:
    return {k: v for k, v in named.items() if v is not None}


def _schedule_terms(schedule: tuple) -> dict:
    out = {}
    for i, c in enumerate(schedule):
        if isinstance(c, enc.Every):
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
        "1. time dependence is sound, per object kind, compositionally",
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
        "restart", "4. a restarted incarnation re-derives what was dropped and holds too", restart_cases
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
    """One case's result: `status` is "proved", "refuted", "unknown" (with the solver's reason) or "error"."""

    case: Case
    status: str
    seconds: float
    values: dict = attrs.field(factory=dict)
    reason: str = ""


def check_case(case: Case, timeout_s: float | None = None, rlimit: int | None = None) -> Verdict:
    """Proves, refutes or gives up on one case; a give-up or a solver error is never reported as proved."""
    solver = z3.Solver()
    if timeout_s is not None:
        solver.set("timeout", max(1, int(timeout_s * 1000)))
    if rlimit is not None:
        solver.set("rlimit", rlimit)
    started = time.perf_counter()
    try:
        solver.add(*case.hypotheses)
        solver.add(z3.Not(case.goal))
        result = solver.check()
        seconds = time.perf_counter() - started
        if result == z3.unsat:
            return Verdict(case, "proved", seconds)
        if result == z3.sat:
            return Verdict(case, "refuted", seconds, read_terms(case.terms, solver.model()))
        return Verdict(case, "unknown", seconds, reason=solver.reason_unknown() or "unknown")
    except z3.Z3Exception as exc:
        return Verdict(case, "error", time.perf_counter() - started, reason=f"solver error: {exc}")


def read_terms(terms: dict, model: z3.ModelRef) -> dict:
    """The named terms' values under a model (`Opt`s as `Optional[int]`)."""
    return {
        k: enc.concrete(v, model) if isinstance(v, Opt) else model.eval(v, model_completion=True).as_long()
        for k, v in terms.items()
    }


@attrs.frozen
class Result:
    """An obligation's verdicts: refuted if any case is, else unknown/error if any is, else proved."""

    obligation: Obligation
    verdicts: tuple
    seconds: float

    @property
    def status(self) -> str:
        statuses = {v.status for v in self.verdicts}
        for status in ("refuted", "error", "unknown"):
            if status in statuses:
                return status
        return "proved"


def prove(
    names: Sequence[str] | None = None,
    rules: Rules = enc.FAITHFUL,
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
