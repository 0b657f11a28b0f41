"""A refutation made concrete: solve for a small scenario that shows it, and check it replays.

`realize` walks small catalog templates around the refuted kind, solves (with
the refuted rules) for the template's numbers such that a read differs with and
without expiration, or a diff is kept beyond it, and keeps the first scenario
whose replay on the implementation shows the difference. The result is a
counterexample file of the `prove` suite, which `frontier-harness replay`
re-runs on any implementation.
"""

from __future__ import annotations

from typing import Any

import attrs
import z3

from frontier_harness.properties.checks.catalog.prove import ONE_START, RESTARTED, SUITE_NAME, check
from frontier_harness.properties.checks.catalog.strategies.scenarios import Template, scenario
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome
from frontier_harness.properties.solver.cases import Case
from frontier_harness.properties.solver.check import Verdict
from frontier_harness.properties.solver.encoding import (
    CLOCK_KINDS,
    EXPIRING_KINDS,
    NONE,
    At,
    Every,
    Rules,
    frontier_lt_time,
    leaf_bound,
    object_bound,
    render,
    some,
    symbolic_schedule,
)
from frontier_harness.properties.solver.world import World

SMALL = 30  # every number a realized scenario uses is at most this


def templates_for(case: Case) -> list[Template]:
    """Templates around the refuted kind first, then every other small one."""
    t = case.template
    restart = bool(t.get("restart")) or case.obligation == "restart"
    kinds = [t["dataflow"]] if t.get("dataflow") in EXPIRING_KINDS else []
    kinds += [k for k in ("mv", "index", "subscribe") if k not in kinds]
    leaf_sets: list[tuple[str, ...]] = [(t["leaf"],)] if t.get("kind") == "leaf" else []
    leaf_sets += [
        ls
        for ls in (
            ("table",),
            ("load_generator",),
            ("table", "load_generator"),
            ("source",),
            ("constant", "table"),
            ("non_epoch_source",),
        )
        if ls not in leaf_sets
    ]
    shapes = [tuple(t["shape"])] if t.get("shape") else []
    shapes += [s for s in ((), ("every",), ("at",)) if s not in shapes]
    out = []
    for kind in kinds:
        for leaves in leaf_sets:
            for shape in shapes if kind == "mv" else [()]:
                for up_to in (
                    (t.get("up_to", False), not t.get("up_to", False)) if kind == "subscribe" else (False,)
                ):
                    if leaves == ("constant",) and len(leaves) == 1:
                        continue
                    out.append(Template(kind, leaves, shape, up_to, restart))
    return out


@attrs.frozen
class Unknowns:
    """The template's free parameters as z3 Ints (a clock leaf's skew: `lead` from 0, `later` from `jump`)."""

    start: Any
    offset: Any
    wall: Any
    time: Any
    window: Any
    reach: dict[str, Any]
    skews: dict[str, tuple[Any, Any, Any]]
    schedule: tuple[Every | At, ...]
    up_to: Any

    def all(self) -> list[Any]:
        extra = [
            p
            for c in self.schedule
            for p in ((c.interval, c.aligned_to) if isinstance(c, Every) else (c.at,))
        ]
        return [
            self.start,
            self.offset,
            self.wall,
            self.time,
            self.window,
            *self.reach.values(),
            *(v for skew in self.skews.values() for v in skew),
            *extra,
            *([self.up_to] if self.up_to is not None else []),
        ]


def _unknowns(template: Template) -> Unknowns:
    reach = {
        leaf: z3.Int(f"reach.{leaf}")
        for leaf in template.leaves
        if leaf in ("load_generator", "non_epoch_source")
    }
    skews = {
        leaf: tuple(z3.Int(f"skew.{leaf}.{p}") for p in ("lead", "jump", "later"))
        for leaf in template.leaves
        if leaf in CLOCK_KINDS
    }
    return Unknowns(
        z3.Int("start"),
        z3.Int("offset"),
        z3.Int("wall"),
        z3.Int("time"),
        z3.Int("window"),
        reach,
        skews,
        symbolic_schedule(template.shape, "refresh"),
        z3.Int("up_to") if template.up_to else None,
    )


def _max(*xs: Any) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = z3.If(x > out, x, out)
    return out


def skewed(skew: tuple, wall: Any) -> Any:
    """The model's upper of a clock leaf with skew `lead` from wall 0, `later` from `jump` (`jump >= 1`)."""
    lead, jump, later = skew
    return z3.If(wall < jump, _max(0, wall + lead), _max(0, jump - 1 + lead, wall + later))


def difference(template: Template, rules: Rules, u: Unknowns) -> Any:
    """A read at (`wall`, `time`) differs with and without expiration, a diff is kept beyond the expiration
    or where the seed drops it, or the replica is expired by the rules while it runs (approximately)."""
    world = World(0)
    exp = rules.replica_expiration(rules, u.start, u.offset)
    uppers, bounds, seen = [], [], []
    for leaf in template.leaves:
        if leaf in CLOCK_KINDS:
            at_render = skewed(u.skews[leaf], u.start)
            uppers.append(some(skewed(u.skews[leaf], u.wall)))
            bounds.append(leaf_bound(rules, leaf, exp.val, (at_render, u.start)))
            seen.append(at_render - u.start)
        else:
            uppers.append(NONE if leaf == "constant" else some(u.reach[leaf]))
            bounds.append(leaf_bound(rules, leaf, exp.val))
    met_u, up_to = world.meet(uppers), some(u.up_to) if template.up_to else NONE
    upper = world.derived_upper(template.kind, met_u, u.schedule, up_to)
    if template.kind == "index":  # an index on a view over the leaves
        bound = object_bound(rules, "index", [object_bound(rules, "view", bounds)])
    else:
        bound = object_bound(rules, template.kind, bounds, u.schedule, up_to)
    expiration, until = render(rules, template.kind, bound, up_to, exp)
    until_off = up_to if template.kind == "subscribe" else NONE
    retraction = u.window + 1
    visible = frontier_lt_time(upper, u.time)
    served = z3.And(visible, z3.Not(rules.refused(rules, expiration, upper, u.time)))
    refused_visible = z3.And(visible, z3.Not(served))
    dropped_visible = z3.And(
        served,
        u.time >= retraction,
        z3.Not(frontier_lt_time(until, retraction)),
        frontier_lt_time(until_off, retraction),
    )
    kept_beyond = z3.And(expiration.has, retraction >= expiration.val, frontier_lt_time(until, retraction))
    expired_early = z3.And(exp.has, u.wall > exp.val)
    kept_late = z3.BoolVal(False)
    if seen and template.shape == () and set(template.leaves) <= {*CLOCK_KINDS, "constant"}:
        drop = u.start + u.offset + _max(0, _min(*seen)) + 1
        late = z3.And(retraction >= drop, frontier_lt_time(until, retraction))
        kept_late = z3.And(late, retraction < u.up_to) if template.up_to else late
    return z3.And(
        u.wall >= u.start,
        u.wall <= u.start + u.offset,
        z3.Or(refused_visible, dropped_visible, kept_beyond, expired_early, kept_late),
    )


def _min(*xs: Any) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = z3.If(x < out, x, out)
    return out


def _ranges(template: Template, u: Unknowns, skew: int) -> list:
    signed = {v for lead, _, later in u.skews.values() for v in (lead, later)}
    cs = [z3.And(v >= (-SMALL if v in signed else 0), v <= SMALL) for v in u.all()]
    cs += [u.offset >= 1] + [c.valid() for c in u.schedule]
    for lead, jump, later in u.skews.values():  # in the prover's world: never more than `skew` further ahead
        cs += [jump >= 1, later <= _max(0, lead) + skew]
    return cs + ([u.start >= 1] if template.restart else [])


def _values(template: Template, u: Unknowns, model: z3.ModelRef) -> dict:
    val = lambda e: model.eval(e, model_completion=True).as_long()  # noqa: E731
    refresh = [
        ["every", val(c.interval), val(c.aligned_to)] if isinstance(c, Every) else ["at", val(c.at)]
        for c in u.schedule
    ]
    return {
        "start": val(u.start),
        "offset": val(u.offset),
        "wall": val(u.wall),
        "time": val(u.time),
        "window": val(u.window),
        "reach": {k: val(v) for k, v in u.reach.items()},
        "skews": {k: [val(v) for v in skew] for k, skew in u.skews.items()},
        "refresh": refresh,
        "up_to": val(u.up_to) if u.up_to is not None else None,
    }


@attrs.frozen
class Realized:
    """A refutation made concrete: the counterexample, and the outcome its replay gave."""

    counterexample: Counterexample
    outcome: Outcome


def realize(
    verdict: Verdict, rules: Rules, impl: Any, impl_name: str, tries: int = 3, skew: int = 0
) -> Realized | None:
    """The first small scenario whose replay on `impl` shows the difference; `None` if no template gives one.

    Scenarios stay in the world the prover assumed: no input gets more than `skew` further ahead.
    """
    for template in templates_for(verdict.case):
        u = _unknowns(template)
        solver = z3.Solver()
        solver.set("timeout", 2000)
        solver.add(*_ranges(template, u, skew), difference(template, rules, u))
        for _ in range(tries):
            if solver.check() != z3.sat:
                break
            model = solver.model()
            history = scenario(template, _values(template, u, model))
            outcome = check(impl, [history])[0]
            if not outcome.ok and not outcome.rejected:
                return Realized(_counterexample(verdict, history, impl_name, outcome), outcome)
            solver.add(z3.Or([v != model.eval(v, model_completion=True) for v in u.all()]))
    return None


def _counterexample(verdict: Verdict, history: History, impl_name: str, outcome: Outcome) -> Counterexample:
    case = verdict.case
    values = ", ".join(f"{k}={v}" for k, v in verdict.values.items())
    return Counterexample(
        suite=SUITE_NAME,
        property=RESTARTED if _restarts(history) else ONE_START,
        history=history,
        impl=impl_name,
        message=f"{case.obligation} [{case.label}] refuted ({values}); replay: {outcome.message}",
        step=outcome.step,
        lane="solver",
        model_said=outcome.expected,
        impl_said=outcome.actual,
    )


def _restarts(history: History) -> bool:
    return sum(a.name == "restart" for a in history.actions) > 1
