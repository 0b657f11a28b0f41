"""The model's expiration rules over z3 terms: a separate encoding, held equal to the model by Hypothesis.

The model's rules (model/catalog/expiration.py, `next_refresh` and the refresh clauses of
model/catalog/catalog.py) branch on `None` and call `min`, which cannot run on symbolic
values; so each rule is re-stated here, one function per model function, and
tests/test_solver.py checks on generated concrete inputs that every one of them
(and their composition over generated catalogs) equals the model.

`Optional[int]` is an `Opt`: a pair `(has, val)` of a z3 Bool and an unbounded z3
Int; `has = False` is `None` (no bound, the empty frontier) and `val` is then
irrelevant. Times are unbounded mathematical integers (`z3.Int`), constrained to
be non-negative where the model's domain is.

The rules live in a `Rules` record so a planted bug replaces exactly one, as a
monkeypatch replaces one module function of the model. Like the model's module
functions, a rule finds the rules it calls through the record it is given
(`meet_bounds` calls `rules.frontier_meet`), so replacing one affects its callers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

import attrs
import z3

from frontier_harness.model.catalog.catalog import (
    Constant,
    Index,
    MaterializedView,
    RefreshEvery,
    Select,
    Source,
    Subscribe,
    Table,
    View,
)
from frontier_harness.model.catalog.timeline_rules import is_epoch

# ---------------------------------------------------------------- Optional[int]


@attrs.frozen
class Opt:
    """An `Optional[int]` over z3: `has` (a Bool) and `val` (an Int, meaningful only when `has`)."""

    has: Any
    val: Any


def ival(v: Any) -> Any:
    """A Python int as a z3 Int constant; z3 terms pass through."""
    return z3.IntVal(v) if isinstance(v, int) else v


def some(v: Any) -> Opt:
    """`v` (an int or z3 Int term) as a present value."""
    return Opt(z3.BoolVal(True), ival(v))


NONE = Opt(z3.BoolVal(False), z3.IntVal(0))


def lift(v: int | None) -> Opt:
    """A concrete `Optional[int]` as an `Opt` of constants."""
    return NONE if v is None else some(v)


def fresh(name: str) -> Opt:
    """An unconstrained `Optional[int]` variable called `name`."""
    return Opt(z3.Bool(f"{name}?"), z3.Int(name))


def ite(cond: Any, a: Opt, b: Opt) -> Opt:
    """`a if cond else b`."""
    return Opt(z3.If(cond, a.has, b.has), z3.If(cond, a.val, b.val))


def concrete(opt: Opt, model: z3.ModelRef | None = None) -> int | None:
    """The `Optional[int]` an `Opt` denotes, for ground terms or under a z3 model."""
    evaluate = (lambda e: model.eval(e, model_completion=True)) if model is not None else z3.simplify
    return evaluate(opt.val).as_long() if z3.is_true(evaluate(opt.has)) else None


def frontier_le(a: Opt, b: Opt) -> Any:
    """`{a} <= {b}` as Total frontiers, `None` the empty frontier (the top): the model's `Antichain.le`."""
    return z3.Or(z3.Not(b.has), z3.And(a.has, a.val <= b.val))


def frontier_lt_time(a: Opt, t: Any) -> Any:
    """Whether time `t` is strictly before frontier `{a}` (always, for the empty frontier)."""
    return z3.Or(z3.Not(a.has), t < a.val)


def _min_present(a: Opt, b: Opt) -> Opt:
    """The smaller present value; `None` only if both are (as `min(..., default=None)` over present ones)."""
    return ite(z3.Not(a.has), b, ite(z3.Not(b.has), a, some(z3.If(a.val <= b.val, a.val, b.val))))


# ---------------------------------------------------------------- refresh clauses


@attrs.frozen
class Every:
    """`RefreshEvery(interval, aligned_to)` over z3 terms."""

    interval: Any
    aligned_to: Any

    def valid(self) -> Any:
        return z3.And(self.interval > 0, self.aligned_to >= 0)

    def round_up(self, t: Any) -> Opt:
        # z3's integer `%` with a positive divisor is non-negative, like Python's.
        return some(t + (self.aligned_to - t) % self.interval)


@attrs.frozen
class At:
    """`RefreshAt(at)` over z3 terms."""

    at: Any

    def valid(self) -> Any:
        return self.at >= 0

    def round_up(self, t: Any) -> Opt:
        return ite(self.at >= t, some(self.at), NONE)


def clause(obj: Any) -> Every | At:
    """A model refresh clause as constants."""
    if isinstance(obj, RefreshEvery):
        return Every(ival(obj.interval), ival(obj.aligned_to))
    return At(ival(obj.at))


def symbolic_schedule(shape: Sequence[str], prefix: str) -> tuple[Every | At, ...]:
    """A schedule of clauses of the given kinds (`"every"`, `"at"`) with fresh parameters."""
    made: list[Every | At] = []
    for i, kind in enumerate(shape):
        name = f"{prefix}.{i}"
        made.append(
            Every(z3.Int(f"{name}.interval"), z3.Int(f"{name}.aligned_to"))
            if kind == "every"
            else At(z3.Int(f"{name}.at"))
        )
    return tuple(made)


# ---------------------------------------------------------------- the rules, one per model function


def replica_expiration(rules: Rules, start: Any, offset: Any) -> Opt:
    """model: `None if offset == 0 else start + offset`."""
    return ite(offset == 0, NONE, some(start + offset))


def frontier_meet(rules: Rules, a: Opt, b: Opt) -> Opt:
    """model: `b` if `a is None`, `a` if `b is None`, else `min(a, b)`."""
    return ite(z3.Not(a.has), b, ite(z3.Not(b.has), a, some(z3.If(a.val <= b.val, a.val, b.val))))


def meet_bounds(rules: Rules, a: Opt, b: Opt) -> Opt:
    """model: `frontier_meet(a, b)`."""
    return rules.frontier_meet(rules, a, b)


def source_bound(rules: Rules, load_generator: Any, epoch: Any, wall: Any) -> Opt:
    """model: `wall if epoch and kind != "load_generator" else None`."""
    return ite(z3.And(epoch, z3.Not(load_generator)), some(wall), NONE)


def carried_to(rules: Rules, upper: Any, render: Any, expiration: Any) -> Any:
    """model: `upper + (expiration - render)`."""
    return upper + (expiration - render)


def inputs_bound(rules: Rules, inputs_upper: Any, expiration: Any) -> Any:
    """model: `inputs_upper if inputs_upper > expiration else expiration` (the seed's branch)."""
    return z3.If(inputs_upper > expiration, inputs_upper, expiration)


def next_refresh(rules: Rules, schedule: Sequence, t: Any) -> Opt:
    """model/catalog/catalog.py: the least `round_up` of the clauses that have one; `None` if none has."""
    return reduce(_min_present, (c.round_up(t) for c in schedule), NONE)


def round_up_to_refresh(rules: Rules, schedule: Sequence, bound: Opt) -> Opt:
    """model: `bound` for an empty schedule or no bound, else `next_refresh(schedule, bound)`."""
    if not schedule:
        return bound
    return ite(z3.Not(bound.has), NONE, rules.next_refresh(rules, schedule, bound.val))


def subscribe_bound(rules: Rules, bound: Opt, up_to: Opt) -> Opt:
    """model: `meet_bounds(bound, up_to)`."""
    return rules.meet_bounds(rules, bound, up_to)


def step_one_tick(rules: Rules, t: Any) -> Any:
    """model: `t + 1`."""
    return t + 1


def dataflow_expiration(rules: Rules, bound: Opt, until: Opt) -> Opt:
    """model: `None` without a bound or when `until <= step_one_tick(bound)`, else that step."""
    e = rules.step_one_tick(rules, bound.val)
    return ite(z3.Or(z3.Not(bound.has), z3.And(until.has, until.val <= e)), NONE, some(e))


def meet_until(rules: Rules, until: Opt, expiration: Opt) -> Opt:
    """model: `frontier_meet(until, expiration)`."""
    return rules.frontier_meet(rules, until, expiration)


def refused(rules: Rules, expiration: Opt, upper: Opt, t: Any) -> Any:
    """model `check_not_expired` raises: an expiration, and the upper reached it or `t` is at/after it."""
    return z3.And(expiration.has, z3.Or(frontier_le(some(expiration.val), upper), t >= expiration.val))


@attrs.frozen
class Rules:
    """One encoding per model rule; `attrs.evolve(FAITHFUL, rule=...)` plants a bug in one."""

    replica_expiration: Callable = replica_expiration
    frontier_meet: Callable = frontier_meet
    meet_bounds: Callable = meet_bounds
    source_bound: Callable = source_bound
    carried_to: Callable = carried_to
    inputs_bound: Callable = inputs_bound
    next_refresh: Callable = next_refresh
    round_up_to_refresh: Callable = round_up_to_refresh
    subscribe_bound: Callable = subscribe_bound
    step_one_tick: Callable = step_one_tick
    dataflow_expiration: Callable = dataflow_expiration
    meet_until: Callable = meet_until
    refused: Callable = refused


FAITHFUL = Rules()

# ---------------------------------------------------------------- catalog walking, per kind

LEAF_KINDS = ("table", "source", "load_generator", "non_epoch_source", "constant")
DERIVED_KINDS = ("view", "select", "index", "mv", "subscribe")
EXPIRING_KINDS = ("mv", "index", "subscribe")


def meet_inputs(rules: Rules, bounds: Sequence[Opt]) -> Opt:
    """model: `reduce(meet_bounds, bounds, None)`."""
    return reduce(lambda a, b: rules.meet_bounds(rules, a, b), bounds, NONE)


CLOCK_KINDS = ("table", "source")  # the leaves that follow the wall clock (model `follows_wall_clock`)


def leaf_bound(rules: Rules, kind: str, wall: Any, seen: tuple[Any, Any] | None = None) -> Opt:
    """model `leaf_bound`: a table the wall time, a source by `source_bound`, a constant none; a clock
    leaf `seen` at `(upper, render)` is carried to `wall` by the seed's branch."""
    if kind == "table":
        bound = some(wall)
    elif kind == "constant":
        return NONE
    else:
        lg, epoch = kind == "load_generator", kind != "non_epoch_source"
        bound = rules.source_bound(rules, z3.BoolVal(lg), z3.BoolVal(epoch), wall)
    if seen is None or kind not in CLOCK_KINDS:
        return bound
    upper, render = seen
    ahead = rules.inputs_bound(rules, rules.carried_to(rules, upper, render, bound.val), bound.val)
    return ite(bound.has, some(ahead), bound)


def kind_step(rules: Rules, kind: str, met: Opt, schedule: Sequence = (), up_to: Opt = NONE) -> Opt:
    """model `object_bound` after the meet of the inputs: an MV rounds up, a subscribe meets `UP TO`."""
    if kind == "mv":
        return rules.round_up_to_refresh(rules, tuple(schedule), met)
    if kind == "subscribe":
        return rules.subscribe_bound(rules, met, up_to)
    return met


def object_bound(
    rules: Rules, kind: str, input_bounds: Sequence[Opt], schedule: Sequence = (), up_to: Opt = NONE
) -> Opt:
    """model `object_bound`: `kind_step` of `meet_inputs`."""
    return kind_step(rules, kind, meet_inputs(rules, input_bounds), schedule, up_to)


def render(
    rules: Rules, kind: str, bound_at_expiration: Opt, up_to: Opt, replica_exp: Opt
) -> tuple[Opt, Opt]:
    """model `render`: `(expiration, until after the meet)`; the bound is the dependence at `replica_exp`."""
    until = up_to if kind == "subscribe" else NONE
    expiration = NONE
    if kind in EXPIRING_KINDS:
        expiration = ite(replica_exp.has, rules.dataflow_expiration(rules, bound_at_expiration, until), NONE)
    return expiration, rules.meet_until(rules, until, expiration)


def kind_of(obj: Any) -> str:
    """The kind name of a model catalog object."""
    if isinstance(obj, Source):
        if obj.kind == "load_generator":
            return "load_generator"
        return "source" if is_epoch(obj.timeline) else "non_epoch_source"
    kinds = {
        Table: "table",
        Constant: "constant",
        View: "view",
        Select: "select",
        Index: "index",
        MaterializedView: "mv",
        Subscribe: "subscribe",
    }
    return kinds[type(obj)]


def schedule_of(obj: Any) -> tuple[Every | At, ...]:
    """An MV's refresh schedule as constant clauses (empty for every other object)."""
    return tuple(clause(c) for c in obj.refresh) if isinstance(obj, MaterializedView) else ()


def up_to_of(obj: Any) -> Opt:
    """A subscribe's `UP TO` (none for every other object)."""
    return lift(obj.up_to) if isinstance(obj, Subscribe) else NONE


def time_dependence(rules: Rules, catalog: Any, name: str, wall: Any, seen: Any = None) -> Opt:
    """model `time_dependence` over a concrete catalog with this encoding's rules (`seen`: a model `Seen`)."""
    obj = catalog.get(name)
    kind = kind_of(obj)
    if not obj.inputs:
        upper = None if seen is None else seen.uppers.get(name)
        return leaf_bound(rules, kind, ival(wall), None if upper is None else (ival(upper), ival(seen.at)))
    bounds = [time_dependence(rules, catalog, i, wall, seen) for i in obj.inputs]
    return object_bound(rules, kind, bounds, schedule_of(obj), up_to_of(obj))
