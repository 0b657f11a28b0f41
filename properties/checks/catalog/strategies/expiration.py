"""Expiration histories: a catalog with maintained dataflows, its feed, skews, restarts and reads.

Leaves: a table `t`, a load generator `g`, a constant `k`; maybe a source `s`
minted one tick ahead of the wall clock (a reclocked source, model/reclocking/remap.py),
and maybe a CDC source `c`, either in the epoch timeline (`epoch_ms_timeline`)
and ahead of or behind the wall clock, or in its own timeline and ticking.

Skews (`skew{name, wall, by}`) are drawn *within the bound* the seed's
`inputs_upper > expiration` branch handles: an input may lead or lag by any
amount, may catch up or fall back, but never gets further ahead than it was
(each `by` is at most `max(0, previous by)`; the first point is at wall 0).
`beyond_the_bound=True` also lets an input jump further ahead later, which the
frontier check must catch (never serving wrong data).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    CatalogAction,
    CatalogArg,
    PlanField,
    PlanNode,
    RefreshField,
    SourceKind,
    TemporalOp,
)
from frontier_harness.properties.checks.catalog.actions import ARITY
from frontier_harness.properties.checks.catalog.strategies.plans import draw_row, draw_temporal_predicates
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat


def draw_expiration_history(source: Source, domain_name: str = "total") -> History:
    """A catalog over skewed leaves, maintained dataflows, data, skews, ticks, restarts and reads."""
    return _draw(source, domain_name, beyond_the_bound=False)


def draw_history_beyond_the_bound(source: Source, domain_name: str = "total") -> History:
    """As `draw_expiration_history`, but an input may also get further ahead after a restart."""
    return _draw(source, domain_name, beyond_the_bound=True)


def _draw(source: Source, domain_name: str, beyond_the_bound: bool) -> History:
    horizon = source.integer(4, 10)
    actions = [
        Action(CatalogAction.CREATE_TABLE, {CatalogArg.NAME: "t"}),
        Action(
            CatalogAction.CREATE_SOURCE, {CatalogArg.NAME: "g", CatalogArg.KIND: SourceKind.LOAD_GENERATOR}
        ),
        Action(
            CatalogAction.CREATE_CONSTANT, {CatalogArg.NAME: "k", CatalogArg.ROWS: [draw_row(source, 0, 3)]}
        ),
    ]
    epoch, other, skewed = ["t", "g", "k"], [], ["t"]
    if source.boolean(0.3):
        actions.append(
            Action(CatalogAction.CREATE_SOURCE, {CatalogArg.NAME: "s", CatalogArg.KIND: SourceKind.KAFKA})
        )
        epoch.append("s")
    cdc = source.choice((None, None, "epoch", "own"))
    if cdc == "epoch":
        actions.append(
            Action(
                CatalogAction.CREATE_SOURCE,
                {CatalogArg.NAME: "c", CatalogArg.KIND: SourceKind.CDC, CatalogArg.EPOCH_MS_TIMELINE: True},
            )
        )
        epoch.append("c")
        skewed.append("c")
    elif cdc == "own":
        actions.append(
            Action(CatalogAction.CREATE_SOURCE, {CatalogArg.NAME: "c", CatalogArg.KIND: SourceKind.CDC})
        )
        other += ["c", "k"]
    if source.boolean(0.7):
        actions.append(_temporal_view(source))
        epoch.append("v")
    maintained = []
    for i in range(source.integer(1, 3)):
        pool = other if other and source.boolean(0.2) else epoch
        action = _draw_maintained(source, f"m{i}", pool, horizon, 0.8 if beyond_the_bound else 0.5)
        actions.append(action)
        maintained.append(action.args[CatalogArg.NAME])
        if action.name == CatalogAction.CREATE_MV:
            pool.append(action.args[CatalogArg.NAME])
    offset = source.integer(1, 6)
    actions.append(Action(CatalogAction.SET_OFFSET, {CatalogArg.OFFSET: offset}))
    actions += _draw_feed(source, horizon, [n for n in ("s", "c") if n in epoch or n in other])
    actions += _draw_skews(source, horizon, skewed, beyond_the_bound)
    if "s" in epoch:
        actions.append(
            Action(CatalogAction.SKEW, {CatalogArg.NAME: "s", CatalogArg.WALL: 0, CatalogArg.BY: 1})
        )  # minted: upper = wall + 1
    if cdc == "own":
        actions += _draw_ticks(source, "c", horizon)
    actions += _draw_ticks(source, "g", horizon)
    actions += _draw_restarts_and_reads(source, horizon, maintained, offset, 6 if beyond_the_bound else 4)
    return History(domain_name, tuple(actions))


def _temporal_view(source: Source) -> Action:
    window = (
        [[TemporalOp.LE, 0, source.integer(0, 8)]]
        if source.boolean(0.7)
        else draw_temporal_predicates(source, ARITY, -2, 8)
    )
    plan = {
        PlanField.NODE: PlanNode.TEMPORAL,
        PlanField.INPUT: {PlanField.NODE: PlanNode.GET, PlanField.NAME: "t"},
        PlanField.PREDICATES: window,
    }
    return Action(CatalogAction.CREATE_VIEW, {CatalogArg.NAME: "v", CatalogArg.PLAN: plan})


MV, INDEX = CatalogAction.CREATE_MV, CatalogAction.CREATE_INDEX


def _draw_maintained(source: Source, name: str, pool: list[str], horizon: int, temporal: float) -> Action:
    kind = source.choice((MV, MV, INDEX, CatalogAction.CREATE_SUBSCRIBE))
    if kind == INDEX:
        return Action(kind, {CatalogArg.NAME: name, CatalogArg.ON: source.choice(pool)})
    inputs = repeat(source, lambda: source.choice(pool), 1, 3, 0.4)
    plan: dict[str, Any] = {
        PlanField.NODE: PlanNode.UNION,
        PlanField.INPUTS: [
            {
                PlanField.NODE: PlanNode.PROJECT,
                PlanField.INPUT: {PlanField.NODE: PlanNode.GET, PlanField.NAME: n},
                PlanField.COLUMNS: [0, 1],
            }
            for n in inputs
        ],
    }
    if source.boolean(temporal):
        plan = {
            PlanField.NODE: PlanNode.TEMPORAL,
            PlanField.INPUT: plan,
            PlanField.PREDICATES: draw_temporal_predicates(source, ARITY, -2, 6),
        }
    args: dict[str, Any] = {CatalogArg.NAME: name, CatalogArg.PLAN: plan}
    if kind == MV:
        refresh = source.integer(0, 3)
        if refresh == 1:
            args[CatalogArg.REFRESH] = [
                {RefreshField.EVERY: source.integer(1, 6), RefreshField.ALIGNED_TO: source.integer(0, 6)}
            ]
        elif refresh == 2:
            args[CatalogArg.REFRESH] = [{RefreshField.AT: source.integer(0, 2 * horizon)}]
    elif source.boolean(0.5):
        args[CatalogArg.UP_TO] = source.integer(0, 2 * horizon)
    return Action(kind, args)


def _draw_feed(source: Source, horizon: int, sources: list[str]) -> list[Action]:
    def insert(table: str) -> Action:
        time = source.integer(0, horizon + 2)
        return Action(
            CatalogAction.INSERT,
            {
                CatalogArg.TABLE: table,
                CatalogArg.ROW: [time + source.integer(-3, 3), source.integer(0, 3)],
                Arg.TIME: time,
                Arg.DIFF: source.choice((1, 1, -1, 2)),
            },
        )

    actions = repeat(source, lambda: insert("t"), 0, 6, 0.8) + repeat(source, lambda: insert("g"), 0, 3, 0.5)
    for name in sources:
        actions += repeat(source, partial(insert, name), 0, 2, 0.5)
    return actions


def _draw_skews(source: Source, horizon: int, leaves: list[str], beyond_the_bound: bool) -> list[Action]:
    """Maybe a schedule per leaf, from wall 0; later points never further ahead (within the bound), or
    (beyond it) one that jumps two or more further ahead at a wall-clock time."""
    actions = []
    for name in leaves:
        if not source.boolean(0.6):
            continue
        by, wall = source.integer(-4, 4), 0
        while True:
            actions.append(
                Action(CatalogAction.SKEW, {CatalogArg.NAME: name, CatalogArg.WALL: wall, CatalogArg.BY: by})
            )
            if not source.boolean(0.3):
                break
            wall += source.integer(1, horizon)
            by = source.integer(-4, max(0, by))
        if beyond_the_bound and source.boolean(0.8):
            wall += source.integer(1, horizon)
            actions.append(
                Action(
                    CatalogAction.SKEW,
                    {
                        CatalogArg.NAME: name,
                        CatalogArg.WALL: wall,
                        CatalogArg.BY: max(0, by) + source.integer(2, 5),
                    },
                )
            )
    return actions


def _draw_ticks(source: Source, name: str, horizon: int) -> list[Action]:
    actions, wall, reached = [], 0, 0
    for _ in range(source.integer(0, 3)):
        wall, reached = wall + source.integer(0, horizon // 2), reached + source.integer(0, horizon)
        actions.append(
            Action(
                CatalogAction.TICK,
                {CatalogArg.SOURCE: name, CatalogArg.WALL: wall, CatalogArg.REACHED: reached},
            )
        )
    return actions


def _draw_restarts_and_reads(
    source: Source, horizon: int, names: list[str], offset: int, ahead: int
) -> list[Action]:
    """Restarts often enough that the replica never runs expired; reads by every maintained dataflow,
    some at the last wall-clock time an incarnation runs, some at times up to `ahead` past the wall clock."""
    at_end = 0.6 if ahead > 4 else 0.4
    start = source.integer(0, 3)
    actions = [Action(CatalogAction.RESTART, {CatalogArg.WALL: start})]
    while start + offset < horizon:
        start += source.integer(1, offset + 1)
        actions.append(Action(CatalogAction.RESTART, {CatalogArg.WALL: start}))

    starts = [a.args[CatalogArg.WALL] for a in actions]
    ends = [min(s + offset, n - 1) for s, n in zip(starts, starts[1:])] + [starts[-1] + offset]

    def read() -> Action:
        wall = source.choice(ends) if source.boolean(at_end) else source.integer(starts[0], horizon)
        time = wall + source.integer(-2, ahead) if source.boolean(0.6) else source.integer(0, wall + ahead)
        return Action(
            CatalogAction.READ,
            {CatalogArg.NAME: source.choice(names), CatalogArg.WALL: wall, Arg.TIME: max(0, time)},
        )

    return actions + repeat(source, read, 1, 8, 0.75)
