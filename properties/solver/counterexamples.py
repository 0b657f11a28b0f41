"""A refutation as a concrete, replayable scenario: the `prove` suite and its counterexample files.

A scenario is a history (domain "total") in the action vocabulary the expiration
suite shares (properties/strategies/catalogs.py), plain data:
`create_table{name}`, `create_source{name, kind}`, `create_constant{name, rows}`,
`create_view|create_mv|create_subscribe{name, plan, refresh?, up_to?}`,
`create_index{name, on}`, `insert{table, row, time, diff}`,
`tick{source, wall, reached}`, `set_offset{offset}`, `restart{wall}` (the first
is the replica's first start) and `read{name, wall, time}`; a plan is a record
(`get{name}`, `union{inputs}`, `temporal{input, predicates: [[op, column, offset]]}`)
and a refresh clause `{"every": i, "aligned_to": a}` or `{"at": t}`. Rows have two
int columns. The solver's scenarios use only those plan nodes.

The `prove` suite's check runs the scenario on an implementation
(`observe_prove`: the model's `observe` below, or Spark's in
`spark_impl.expiration`) twice, with the replica's offset and with 0 (expiration
disabled), and reports the first read that differs, or a diff the expiring dataflow produced at or beyond its
expiration (an expiration that drops nothing). `realize` turns a refuted case
into such a scenario: it solves for one over a few small catalog templates
built around the refuted kind, with the refuted rules, then keeps the first one
whose replay shows the difference. The counterexample's property is the
scenario's shape (`reads-equal`, or `reads-equal-across-a-restart`); its message
names the refuted obligation and case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import z3

from model import expiration as ex
from model.catalog import Catalog, Feed, output_updates
from model.errors import ModelError, ReplicaExpired
from properties.counterexample import Counterexample
from properties.history import Action, History
from properties.solver import encoding as enc
from properties.solver.encoding import NONE, Rules, frontier_lt_time, some
from properties.solver.obligations import Case, Verdict, World
from properties.source import Source as ChoiceSource
from properties.suite import Outcome, Property, Suite, compare, observe_or_reject

SUITE_NAME = "prove"
LEAF_NAMES = {"table": "t", "source": "s", "load_generator": "g", "non_epoch_source": "d", "constant": "k"}
SOURCE_KINDS = {"source": "kafka", "load_generator": "load_generator", "non_epoch_source": "cdc"}
SMALL = 30  # every number a realized scenario uses is at most this
ONE_START, RESTARTED = (
    "reads-equal",
    "reads-equal-across-a-restart",
)  # the suite's properties, by scenario shape

# ---------------------------------------------------------------- scenario -> model


@attrs.frozen
class Scenario:
    """A scenario as model values."""

    catalog: Catalog
    feed: Feed
    offset: int
    starts: tuple
    reads: tuple  # (step, name, wall, time)
    dataflows: tuple


def to_world(history: History) -> Scenario:
    """The catalog, feed and replica the expiration suite's `world` decodes, plus the reads (model errors propagate)."""
    from properties.suites.expiration import (
        MAINTAINED,
        world,
    )  # lazily: the suite registry imports this module

    catalog, feed, offset, starts = world(history)
    reads = tuple(
        (step, a.args["name"], a.args["wall"], a.args["time"])
        for step, a in enumerate(history.actions)
        if a.name == "read"
    )
    dataflows = tuple(a.args["name"] for a in history.actions if a.name in MAINTAINED)
    return Scenario(catalog, feed, offset, starts, reads, dataflows)


def _read(world: Scenario, replica: ex.Replica, name: str, wall: int, time: int) -> frozenset:
    try:
        got = ex.served(world.catalog, world.feed, replica, name, wall, time)
    except ReplicaExpired:
        return frozenset({("replica expired",)})
    if got is None:
        return frozenset({("not served",)})
    return frozenset({("rows", tuple(sorted(got.items())))})


def _beyond(world: Scenario) -> frozenset:
    """Every diff an expiring dataflow produces at or after its expiration, per incarnation."""
    out = set()
    for start in world.starts:
        replica_exp = ex.replica_expiration(start, world.offset)
        for name in world.dataflows:
            flow = ex.render(world.catalog, name, replica_exp)
            if flow.expiration is None:
                continue
            for u in output_updates(world.catalog, world.feed, name, flow.until):
                if u.time >= flow.expiration:
                    out.add((name, start, flow.expiration, u.time, u.diff))
    return frozenset(out)


def observe(history: History) -> dict:
    """Each read with expiration (`read`) and without (`read without expiration`), and the diffs beyond it."""
    world = to_world(history)
    on, off = ex.Replica(world.offset, world.starts), ex.Replica(0, world.starts)
    obs: dict = {}
    for step, name, wall, time in world.reads:
        obs[(step, "read")] = _read(world, on, name, wall, time)
        obs[(step, "read without expiration")] = _read(world, off, name, wall, time)
    obs[(len(history.actions), "diffs at or beyond the expiration")] = _beyond(world)
    return obs


def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
    """The success criterion on `impl`: reads equal with and without expiration, nothing kept beyond it."""
    return [
        Outcome.rejected(obs) if isinstance(obs, ModelError) else _judge(history, obs)
        for history, obs in zip(histories, observe_or_reject(impl, "observe_prove", histories))
    ]


def _judge(history: History, obs: dict) -> Outcome:
    end = (len(history.actions), "diffs at or beyond the expiration")
    expected = {(s, "read"): v for (s, label), v in obs.items() if label == "read without expiration"}
    actual = {(s, "read"): v for (s, label), v in obs.items() if label == "read"}
    expected[end], actual[end] = frozenset(), obs[end]
    outcome = compare(expected, actual)
    return (
        outcome
        if outcome.ok
        else attrs.evolve(
            outcome, message=f"{outcome.message} (expected: expiration disabled; observed: enabled)"
        )
    )


# ---------------------------------------------------------------- templates


@attrs.frozen
class Template:
    """A small catalog shape: an expiring dataflow of `kind` over `leaves`."""

    kind: str
    leaves: tuple
    shape: tuple = ()
    up_to: bool = False
    restart: bool = False


def templates_for(case: Case) -> list[Template]:
    """Templates around the refuted kind first, then every other small one."""
    t = case.template
    restart = bool(t.get("restart")) or case.obligation == "restart"
    kinds = [t["dataflow"]] if t.get("dataflow") in enc.EXPIRING_KINDS else []
    kinds += [k for k in ("mv", "index", "subscribe") if k not in kinds]
    leaf_sets = [(t["leaf"],)] if t.get("kind") == "leaf" else []
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
    """The template's free parameters, as z3 Ints."""

    start: Any
    offset: Any
    wall: Any
    time: Any
    window: Any
    reach: dict
    schedule: tuple
    up_to: Any

    def all(self) -> list:
        extra = [
            p
            for c in self.schedule
            for p in ((c.interval, c.aligned_to) if isinstance(c, enc.Every) else (c.at,))
        ]
        return [
            self.start,
            self.offset,
            self.wall,
            self.time,
            self.window,
            *self.reach.values(),
            *extra,
            *([self.up_to] if self.up_to is not None else []),
        ]


def _unknowns(template: Template) -> Unknowns:
    reach = {
        leaf: z3.Int(f"reach.{leaf}")
        for leaf in template.leaves
        if leaf in ("load_generator", "non_epoch_source")
    }
    return Unknowns(
        z3.Int("start"),
        z3.Int("offset"),
        z3.Int("wall"),
        z3.Int("time"),
        z3.Int("window"),
        reach,
        enc.symbolic_schedule(template.shape, "refresh"),
        z3.Int("up_to") if template.up_to else None,
    )


def difference(template: Template, rules: Rules, u: Unknowns) -> Any:
    """A read at (`wall`, `time`) differs with and without expiration, or a diff is kept beyond it (approximately)."""
    world = World(0)
    exp = rules.replica_expiration(rules, u.start, u.offset)
    uppers, bounds = [], []
    for leaf in template.leaves:
        uppers.append(
            some(u.wall)
            if leaf in ("table", "source")
            else NONE
            if leaf == "constant"
            else some(u.reach[leaf])
        )
        bounds.append(enc.leaf_bound(rules, leaf, exp.val))
    met_u, up_to = world.meet(uppers), some(u.up_to) if template.up_to else NONE
    upper = world.derived_upper(template.kind, met_u, u.schedule, up_to)
    if template.kind == "index":  # an index on a view over the leaves
        bound = enc.object_bound(rules, "index", [enc.object_bound(rules, "view", bounds)])
    else:
        bound = enc.object_bound(rules, template.kind, bounds, u.schedule, up_to)
    expiration, until = enc.render(rules, template.kind, bound, up_to, exp)
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
    return z3.And(u.wall >= u.start, u.wall <= exp.val, z3.Or(refused_visible, dropped_visible, kept_beyond))


def _ranges(template: Template, u: Unknowns) -> list:
    cs = [z3.And(v >= 0, v <= SMALL) for v in u.all()]
    cs += [u.offset >= 1] + [c.valid() for c in u.schedule]
    return cs + ([u.start >= 1] if template.restart else [])


def scenario(template: Template, values: dict) -> History:
    """The history a template and solved parameters describe."""
    names = [LEAF_NAMES[leaf] for leaf in template.leaves]
    actions = [_create_leaf(leaf, name) for leaf, name in zip(template.leaves, names)]
    gets = [{"node": "get", "name": n} for n in names]
    plan = {
        "node": "temporal",
        "input": gets[0] if len(gets) == 1 else {"node": "union", "inputs": gets},
        "predicates": [["<=", 0, values["window"]]],
    }
    if template.kind == "index":
        actions.append(Action("create_view", {"name": "v", "plan": plan}))
        actions.append(Action("create_index", {"name": "x", "on": "v"}))
    elif template.kind == "mv":
        refresh = [
            {"every": c[1], "aligned_to": c[2]} if c[0] == "every" else {"at": c[1]}
            for c in values["refresh"]
        ]
        actions.append(Action("create_mv", {"name": "x", "plan": plan, "refresh": refresh or None}))
    else:
        actions.append(Action("create_subscribe", {"name": "x", "plan": plan, "up_to": values.get("up_to")}))
    actions.append(Action("set_offset", {"offset": values["offset"]}))
    for leaf, name in zip(template.leaves, names):
        if leaf != "constant":
            actions.append(Action("insert", {"table": name, "row": [0, 0], "time": 0, "diff": 1}))
        if leaf in ("load_generator", "non_epoch_source"):
            actions.append(Action("tick", {"source": name, "wall": 0, "reached": values["reach"][leaf]}))
    for start in [0, values["start"]] if template.restart else [values["start"]]:
        actions.append(Action("restart", {"wall": start}))
    actions.append(Action("read", {"name": "x", "wall": values["wall"], "time": values["time"]}))
    return History("total", tuple(actions))


def _create_leaf(leaf: str, name: str) -> Action:
    if leaf == "table":
        return Action("create_table", {"name": name})
    if leaf == "constant":
        return Action("create_constant", {"name": name, "rows": [[0, 0]]})
    return Action("create_source", {"name": name, "kind": SOURCE_KINDS[leaf]})


def _values(template: Template, u: Unknowns, model: z3.ModelRef) -> dict:
    val = lambda e: model.eval(e, model_completion=True).as_long()  # noqa: E731
    refresh = [
        ["every", val(c.interval), val(c.aligned_to)] if isinstance(c, enc.Every) else ["at", val(c.at)]
        for c in u.schedule
    ]
    return {
        "start": val(u.start),
        "offset": val(u.offset),
        "wall": val(u.wall),
        "time": val(u.time),
        "window": val(u.window),
        "reach": {k: val(v) for k, v in u.reach.items()},
        "refresh": refresh,
        "up_to": val(u.up_to) if u.up_to is not None else None,
    }


# ---------------------------------------------------------------- realize


@attrs.frozen
class Realized:
    """A refutation made concrete: the counterexample, and the outcome its replay gave."""

    counterexample: Counterexample
    outcome: Outcome


def realize(verdict: Verdict, rules: Rules, impl: Any, impl_name: str, tries: int = 3) -> Realized | None:
    """The first small scenario whose replay on `impl` shows the difference; `None` if no template gives one."""
    for template in templates_for(verdict.case):
        u = _unknowns(template)
        solver = z3.Solver()
        solver.set("timeout", 2000)
        solver.add(*_ranges(template, u), difference(template, rules, u))
        for _ in range(tries):
            if solver.check() != z3.sat:
                break
            model = solver.model()
            history = scenario(template, _values(template, u, model))
            outcome = check(impl, [history])[0]
            if not outcome.ok and not outcome.invalid:
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


# ---------------------------------------------------------------- the suite


def draw_scenario(source: ChoiceSource, domain_name: str, restart: bool = False) -> History:
    """A random template with random small parameters (the solver's scenarios, drawn instead of solved)."""
    kind = source.choice(("mv", "index", "subscribe"))
    leaves = source.choice(
        (
            ("table",),
            ("load_generator",),
            ("table", "load_generator"),
            ("constant", "table"),
            ("non_epoch_source",),
        )
    )
    shape = source.choice(((), ("every",), ("at",))) if kind == "mv" else ()
    refresh = [
        ["every", source.integer(1, 8), source.integer(0, 8)]
        if c == "every"
        else ["at", source.integer(0, 20)]
        for c in shape
    ]
    start = source.integer(1 if restart else 0, 6)
    offset = source.integer(1, 8)
    values = {
        "start": start,
        "offset": offset,
        "wall": source.integer(start, start + offset),
        "time": source.integer(0, 20),
        "window": source.integer(0, 20),
        "refresh": refresh,
        "reach": {
            leaf: source.integer(0, 25) for leaf in leaves if leaf in ("load_generator", "non_epoch_source")
        },
        "up_to": source.integer(0, 20) if kind == "subscribe" and source.boolean() else None,
    }
    return scenario(Template(kind, leaves, shape, values["up_to"] is not None, restart), values)


def events(history: History) -> list[str]:
    """The hard cases a scenario reaches: an expiration or none, a restart, a read at/after the expiration."""
    world = to_world(history)
    found = ["restart"] if len(world.starts) > 1 else []
    for start in world.starts:
        replica_exp = ex.replica_expiration(start, world.offset)
        for name in world.dataflows:
            expiration = ex.render(world.catalog, name, replica_exp).expiration
            found.append("no expiration" if expiration is None else "expiring dataflow")
            if expiration is not None and any(n == name and t >= expiration for _, n, _, t in world.reads):
                found.append("read at or beyond the expiration")
    return found


def _property(name: str, doc: str, restart: bool = False) -> Property:
    return Property(
        name=name,
        doc=doc,
        draw=lambda source, domain: draw_scenario(source, domain, restart),
        check=check,
        events=events,
    )


SUITE = Suite(
    name=SUITE_NAME,
    doc="The solver's scenarios: a read differs with and without expiration, or a diff is kept beyond it.",
    properties=(
        _property(ONE_START, "reads equal with and without expiration, and no diff kept at or beyond it"),
        _property(RESTARTED, "the same across a restart, with the expiration recomputed", restart=True),
    ),
    default_impl="spark",
    required_events=("expiring dataflow", "no expiration", "restart", "read at or beyond the expiration"),
    domains=("total",),
    spark_cost=3.0,  # plans evaluated level by level, as in the timelines suite
)
