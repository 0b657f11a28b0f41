"""The lattice laws: `join`/`meet` of Product(Total, Total) and Partitioned are the lub/glb of `le`.

The model's orders are restated over unbounded z3 `Int`s with the domains' own range
constraints (Partitioned: `0 <= lo <= hi <= 2**31-1`); a Hypothesis test
(tests/test_solver.py) holds each restatement equal to model/time/domains.py on concrete times.
"""

from __future__ import annotations

from typing import Any

import z3

from frontier_harness.model.time.domains import PARTITION_MAX
from frontier_harness.properties.solver.cases import Case
from frontier_harness.properties.solver.encoding import Rules
from frontier_harness.properties.solver.world import World


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
