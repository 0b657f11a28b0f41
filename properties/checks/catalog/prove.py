"""The *prove* suite: the solver's scenarios replayed on an implementation.

Scenarios are drawn by `frontier_harness.properties.checks.catalog.strategies.scenarios` (the solver writes the
same histories for its refutations, `frontier_harness.properties.solver.realize`). The check runs
a scenario on an implementation (`observe_prove`: the model's `observe` below,
or Spark's in `frontier_harness.spark_impl.catalog.expiration`) twice, with the replica's offset and with
0 (expiration disabled), and reports the first read that differs, a diff the
expiring dataflow produced at or beyond its own expiration (an expiration that
drops nothing), or a diff it kept past one tick after the replica's life where the
seed drops it (`frontier_harness.properties.checks.catalog.oracles.expiration`: a "never expire" implementation).
The property is the scenario's shape (`reads-equal`, or `reads-equal-across-a-restart`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from frontier_harness.model.catalog.catalog import Catalog, Feed, output_updates
from frontier_harness.model.catalog.expiration import Replica, render, replica_expiration, seen_at, served
from frontier_harness.model.errors import ModelError, ReplicaExpired
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    MAINTAINED_ACTIONS,
    CatalogAction,
    CatalogArg,
    ProveLabel,
    ReadResult,
)
from frontier_harness.properties.checks.catalog.expiration import rejection, world
from frontier_harness.properties.checks.catalog.oracles import expiration as oracle
from frontier_harness.properties.checks.catalog.strategies.scenarios import draw_scenario
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Observation
from frontier_harness.properties.engine.suite import (
    Outcome,
    Property,
    Reference,
    Suite,
    compare,
    observe_or_reject,
)

SUITE_NAME = "prove"

ONE_START, RESTARTED = (
    "reads-equal",
    "reads-equal-across-a-restart",
)  # the suite's properties, by scenario shape
BEYOND, LATE = ProveLabel.BEYOND, ProveLabel.LATE
Kept = tuple[str, int, int, int, int]  # a diff kept: (dataflow, start, bound, time, diff)


@attrs.frozen
class Scenario:
    """A scenario as model values."""

    catalog: Catalog
    feed: Feed
    offset: int
    starts: tuple[int, ...]
    reads: tuple[tuple[int, str, int, int], ...]  # (step, name, wall, time)
    dataflows: tuple[str, ...]


def to_world(history: History) -> Scenario:
    """The catalog, feed and replica the expiration suite's `world` decodes, and the reads."""

    catalog, feed, offset, starts = world(history)
    reads = tuple(
        (step, a.args[CatalogArg.NAME], a.args[CatalogArg.WALL], a.args[Arg.TIME])
        for step, a in enumerate(history.actions)
        if a.name == CatalogAction.READ
    )
    dataflows = tuple(a.args[CatalogArg.NAME] for a in history.actions if a.name in MAINTAINED_ACTIONS)
    return Scenario(catalog, feed, offset, starts, reads, dataflows)


def _read(world: Scenario, replica: Replica, name: str, wall: int, time: int) -> frozenset[tuple[Any, ...]]:
    try:
        got = served(world.catalog, world.feed, replica, name, wall, time)
    except ReplicaExpired:
        return frozenset({(ReadResult.REPLICA_EXPIRED,)})
    if got is None:
        return frozenset({(ReadResult.NOT_SERVED,)})
    return frozenset({(ReadResult.ROWS, tuple(sorted(got.items())))})


def _kept(world: Scenario) -> tuple[frozenset[Kept], frozenset[Kept]]:
    """Per incarnation and expiring dataflow, the diffs kept at or beyond its expiration, and past the
    replica's life (`start + offset + 1`), as `(name, start, bound, time, diff)`."""
    beyond: set[Kept] = set()
    late: set[Kept] = set()
    for start in world.starts:
        replica_exp = replica_expiration(start, world.offset)
        seen, life = seen_at(world.catalog, world.feed, start), start + world.offset + 1
        for name in world.dataflows:
            flow = render(world.catalog, name, replica_exp, seen)
            for u in output_updates(world.catalog, world.feed, name, flow.until):
                if flow.expiration is not None and u.time >= flow.expiration:
                    beyond.add((name, start, flow.expiration, u.time, u.diff))
                if u.time >= life:
                    late.add((name, start, life, u.time, u.diff))
    return frozenset(beyond), frozenset(late)


def observe(history: History) -> Observation:
    """Each read with expiration (`read`) and without (`read without expiration`), and the diffs kept."""
    world = to_world(history)
    on, off = Replica(world.offset, world.starts), Replica(0, world.starts)
    obs: Observation = {}
    for step, name, wall, time in world.reads:
        obs[(step, ProveLabel.READ)] = _read(world, on, name, wall, time)
        obs[(step, ProveLabel.READ_WITHOUT)] = _read(world, off, name, wall, time)
    end = len(history.actions)
    obs[(end, BEYOND)], obs[(end, LATE)] = _kept(world)
    return obs


def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
    """The success criterion on `impl`: reads equal with and without expiration, nothing kept beyond it,
    nothing kept where the seed drops it."""
    return [
        rejection(history, obs, observe) if isinstance(obs, ModelError) else _judge(history, obs)
        for history, obs in zip(histories, observe_or_reject(impl, "observe_prove", histories))
    ]


def _judge(history: History, obs: Observation) -> Outcome:
    end = len(history.actions)
    expected: Observation = {
        (s, ProveLabel.READ): v for (s, label), v in obs.items() if label == ProveLabel.READ_WITHOUT
    }
    actual: Observation = {
        (s, ProveLabel.READ): v for (s, label), v in obs.items() if label == ProveLabel.READ
    }
    expected[(end, BEYOND)], actual[(end, BEYOND)] = frozenset(), obs[(end, BEYOND)]
    expected[(end, LATE)] = frozenset(d for d in obs[(end, LATE)] if not _dropped_by_the_seed(history, d))
    actual[(end, LATE)] = obs[(end, LATE)]
    outcome = compare(expected, actual)
    return (
        outcome
        if outcome.ok
        else attrs.evolve(
            outcome,
            message=f"{outcome.message} (expected: expiration disabled, and the seed's drops; "
            "observed: enabled)",
        )
    )


def _dropped_by_the_seed(history: History, kept: Kept) -> bool:
    name, start, _, time, _ = kept
    drop = oracle.must_drop_from(history, name, start)
    return drop is not None and time >= drop


def events(history: History) -> list[str]:
    """The hard cases a scenario reaches (by the seed's rule restated, not the model): an expiration or none,
    a restart, a read at/after the expiration, an input ahead of the wall clock."""
    world = to_world(history)
    found = ["restart"] if len(world.starts) > 1 else []
    for start in world.starts:
        for name in world.dataflows:
            expiration = oracle.expiration_at(history, name, start)
            found.append("no expiration" if expiration is None else "expiring dataflow")
            if expiration is not None and any(n == name and t >= expiration for _, n, _, t in world.reads):
                found.append("read at or beyond the expiration")
            if expiration is not None and expiration > start + world.offset + 1:
                found.append("input ahead of the wall clock")
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
    reference=Reference.INTRINSIC,  # reads with and without expiration; the seed's drops
    required_events=(
        "expiring dataflow",
        "no expiration",
        "restart",
        "read at or beyond the expiration",
        "input ahead of the wall clock",
    ),
    domains=("total",),
)
