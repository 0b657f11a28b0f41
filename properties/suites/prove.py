"""The *prove* suite: the solver's scenarios replayed on an implementation.

Scenarios are drawn by `properties.strategies.scenarios` (the solver writes the
same histories for its refutations, `properties.solver.realize`). The check runs
a scenario on an implementation (`observe_prove`: the model's `observe` below,
or Spark's in `spark_impl.expiration`) twice, with the replica's offset and with
0 (expiration disabled), and reports the first read that differs, or a diff the
expiring dataflow produced at or beyond its expiration (an expiration that drops
nothing). The property is the scenario's shape (`reads-equal`, or
`reads-equal-across-a-restart`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from model import expiration as ex
from model.catalog import Catalog, Feed, output_updates
from model.errors import ModelError, ReplicaExpired
from properties.history import History
from properties.strategies.scenarios import draw_scenario
from properties.suite import Outcome, Property, Suite, compare, observe_or_reject
from properties.suites.expiration import MAINTAINED, world

SUITE_NAME = "prove"

ONE_START, RESTARTED = (
    "reads-equal",
    "reads-equal-across-a-restart",
)  # the suite's properties, by scenario shape


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
        Outcome.implementation_rejected(obs) if isinstance(obs, ModelError) else _judge(history, obs)
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
)
