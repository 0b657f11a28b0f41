"""The world the proofs assume: how uppers move, as z3 constraints a reader can check.

It is written against the model's (model/catalog/catalog.py `Feed`, model/catalog/expiration.py
`Replica`) and never calls a rule under test:

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
  time (`obligations.refresh.first_refresh`), not by the encoding's `next_refresh`;
- a subscribe's upper is the meet of its inputs' and its `UP TO`.

`ASSUMPTIONS` states each in a line, for the report of a case that relies on it.
"""

from __future__ import annotations

from typing import Any

import attrs
import z3

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.encoding import NONE, Opt, ite


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
