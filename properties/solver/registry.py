"""The obligations by name, in the order `prove` runs and reports them."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from frontier_harness.properties.solver.cases import Case
from frontier_harness.properties.solver.encoding import Rules
from frontier_harness.properties.solver.lattice import lattice_cases
from frontier_harness.properties.solver.obligations.hold import hold_cases
from frontier_harness.properties.solver.obligations.refresh import refresh_cases
from frontier_harness.properties.solver.obligations.restart import restart_cases
from frontier_harness.properties.solver.obligations.time_dependence import time_dependence_cases
from frontier_harness.properties.solver.obligations.useful import useful_cases
from frontier_harness.properties.solver.obligations.visible import visible_kept_cases
from frontier_harness.properties.solver.world import World


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
