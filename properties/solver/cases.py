"""A `Case` (one query: hypotheses and a goal) and the pieces every obligation builds its cases from.

Every time is an unbounded z3 `Int`, constrained non-negative as the Total domain is;
an optional time (a frontier of at most one element) is an `Opt`. The helpers name
the terms a refuting model is read back through (`named_terms`), so a counterexample
shows the same names as the case that produced it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import z3

from frontier_harness.model.vocabulary.catalog import ObjectKind, RefreshField
from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.encoding import NONE, Opt, Rules, fresh, frontier_le, some
from frontier_harness.properties.solver.world import World

EVERY, AT = RefreshField.EVERY, RefreshField.AT
SCHEDULE_SHAPES = ((), (EVERY,), (AT,), (EVERY, EVERY), (EVERY, AT), (AT, AT))


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
    euclid: bool = False  # name `%` by a variable as Euclid's division before solving (see `check.euclid`)


def int_time(name: str) -> Any:
    """A time named `name`: an unbounded z3 `Int` (the case states `>= 0` where it needs it)."""
    return z3.Int(name)


def opt_time(name: str) -> tuple[Opt, Any]:
    """A free optional time named `name` and the fact that, if present, it is non-negative."""
    o = fresh(name)
    return o, z3.Implies(o.has, o.val >= 0)


def incarnation(rules: Rules, world: World, suffix: str = "") -> tuple[Any, Any, Any, Opt, list]:
    """`start`, `offset`, a wall time, the rules' replica expiration and the world's hypotheses."""
    start, offset, wall = int_time(f"start{suffix}"), int_time(f"offset{suffix}"), int_time(f"wall{suffix}")
    return (
        start,
        offset,
        wall,
        rules.replica_expiration(rules, start, offset),
        world.lifetime(start, offset, wall),
    )


def variant_label(kind: str, shape: tuple[str, ...], has_up_to: bool) -> str:
    """A case's label for a derived kind, its refresh shape and whether it has an `UP TO`."""
    return kind + (f" refresh {'+'.join(shape)}" if shape else "") + (" up_to" if has_up_to else "")


def derived_variants(refresh: bool = True) -> list[tuple[str, tuple, bool]]:
    """Every derived kind as `(kind, refresh shape, has UP TO)`; MVs without a schedule only if not `refresh`."""
    variants: list[tuple[str, tuple, bool]] = [
        (k, (), False) for k in (ObjectKind.VIEW, ObjectKind.SELECT, ObjectKind.INDEX)
    ]
    variants += [(ObjectKind.MV, shape, False) for shape in (SCHEDULE_SHAPES if refresh else ((),))]
    return variants + [(ObjectKind.SUBSCRIBE, (), False), (ObjectKind.SUBSCRIBE, (), True)]


def schedule_clauses(
    shape: tuple[str, ...], has_up_to: bool, prefix: str = "refresh"
) -> tuple[tuple, Opt, list]:
    """Symbolic refresh clauses of `shape` and an `UP TO` (or none), with their validity constraints."""
    schedule = encoding.symbolic_schedule(shape, prefix)
    up_to = some(int_time("up_to")) if has_up_to else NONE
    return schedule, up_to, [c.valid() for c in schedule] + ([up_to.val >= 0] if has_up_to else [])


def _dataflow_hyps(kind: str, upper: Opt, bound: Opt) -> tuple[list, Opt]:
    """Obligation 1's conclusion for the dataflow, and a subscribe stopping at its `UP TO`."""
    hyps = [frontier_le(upper, bound)]
    if kind != ObjectKind.SUBSCRIBE:
        return hyps, NONE
    up_to, ok = opt_time("up_to")
    return hyps + [ok, frontier_le(upper, up_to)], up_to


def running_dataflow(rules: Rules, world: World, kind: str) -> tuple[list, dict, Opt, Opt, Opt, Any]:
    """A running expiring dataflow of `kind`: hypotheses, terms, upper, expiration, until and a time."""
    start, offset, wall, exp, hyps = incarnation(rules, world)
    t = int_time("time")
    (bound, ok_b), (upper, ok_u) = opt_time("bound"), opt_time("upper")
    more, up_to = _dataflow_hyps(kind, upper, bound)
    expiration, until = encoding.render(rules, kind, bound, up_to, exp)
    terms = named_terms(
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


def named_terms(**named: Any) -> dict[str, Any]:
    """The terms to read back from a refuting model, by name; absent ones (None) left out."""
    return {k: v for k, v in named.items() if v is not None}


def schedule_terms(schedule: Sequence[encoding.Every | encoding.At]) -> dict[str, Any]:
    """A symbolic schedule's parameters as named terms, `refresh_<i>_every`, `_aligned_to` or `_at`."""
    out = {}
    for i, c in enumerate(schedule):
        if isinstance(c, encoding.Every):
            out[f"refresh_{i}_every"] = c.interval
            out[f"refresh_{i}_aligned_to"] = c.aligned_to
        else:
            out[f"refresh_{i}_at"] = c.at
    return out
