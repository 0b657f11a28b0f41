"""Timelines histories: leaves of every timeline with data, then dataflows over random readable objects."""

from __future__ import annotations

import functools

from frontier_harness.model.errors import TimelineError
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    DATAFLOW_ACTIONS,
    CatalogAction,
    CatalogArg,
    PlanField,
    PlanNode,
    SourceKind,
)
from frontier_harness.properties.checks.catalog.actions import ARITY, build_catalog, object_from_action
from frontier_harness.properties.checks.catalog.strategies.plans import draw_plan, draw_row
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

SOURCE_OPTIONS: tuple[tuple[str, dict[str, object]], ...] = (
    (SourceKind.KAFKA, {}),
    (SourceKind.POSTGRES, {}),
    (SourceKind.LOAD_GENERATOR, {}),
    (SourceKind.CDC, {}),
    (SourceKind.CDC, {CatalogArg.EPOCH_MS_TIMELINE: True}),
    (SourceKind.KAFKA, {CatalogArg.TIMELINE: "x"}),
    (SourceKind.CDC, {CatalogArg.TIMELINE: "x"}),
    (SourceKind.POSTGRES, {CatalogArg.TIMELINE: "y"}),
    (SourceKind.KAFKA, {CatalogArg.CONSISTENCY_TOPIC: ["b", "t1"]}),
    (SourceKind.KAFKA, {CatalogArg.CONSISTENCY_TOPIC: ["b", "t2"]}),
)


def _draw_insert(source: Source, table: str) -> Action:
    """One insert of a drawn row into `table`."""
    return Action(
        CatalogAction.INSERT,
        {
            CatalogArg.TABLE: table,
            CatalogArg.ROW: draw_row(source),
            Arg.TIME: source.integer(0, 5),
            Arg.DIFF: 1,
        },
    )


def _draw_source(source: Source, name: str, before: list[Action]) -> Action:
    """A source of a drawn kind; a user timeline may be named after an earlier CDC source (`External`)."""
    kind, options = source.choice(SOURCE_OPTIONS)
    externals = [
        a.args[CatalogArg.NAME]
        for a in before
        if a.name == CatalogAction.CREATE_SOURCE
        and a.args[CatalogArg.KIND] == SourceKind.CDC
        and set(a.args) == {CatalogArg.NAME, CatalogArg.KIND}
    ]
    if CatalogArg.TIMELINE in options and externals and source.boolean(0.8):
        options = {CatalogArg.TIMELINE: source.choice(externals)}  # User(x) beside External(x)
    return Action(CatalogAction.CREATE_SOURCE, {CatalogArg.NAME: name, CatalogArg.KIND: kind, **options})


def draw_timelines_history(source: Source, domain_name: str = "total") -> History:
    """Leaves of every timeline with data, then dataflows over random readable objects (many span timelines)."""
    actions = [Action(CatalogAction.CREATE_TABLE, {CatalogArg.NAME: "t0"})]
    for i in range(source.integer(1, 3)):
        actions.append(_draw_source(source, f"s{i}", actions))
    if source.boolean(0.5):
        actions.append(
            Action(CatalogAction.CREATE_CONSTANT, {CatalogArg.NAME: "k", CatalogArg.ROWS: [draw_row(source)]})
        )
    leaves = [a.args[CatalogArg.NAME] for a in actions]
    for name in leaves:
        if name != "k":
            actions += repeat(source, functools.partial(_draw_insert, source, name), 0, 2, 0.5)
    readable, catalog = list(leaves), build_catalog(History(domain_name, tuple(actions)))
    pairs = _same_named_timelines(actions)
    for i in range(source.integer(1, 4)):
        if pairs and source.boolean(0.5):
            action, arity = _draw_reading_both(source, f"d{i}", pairs), ARITY
        else:
            action, arity = _draw_dataflow(source, f"d{i}", readable, temporal=False)
        actions.append(action)
        try:  # later dataflows read only views and MVs that were created
            catalog = catalog.add(object_from_action(action))
        except TimelineError:
            continue
        if (
            action.name in (CatalogAction.CREATE_VIEW, CatalogAction.CREATE_MV) and arity == ARITY
        ):  # plans assume ARITY columns
            readable.append(action.args[CatalogArg.NAME])
    return History(domain_name, tuple(actions))


def _draw_dataflow(source: Source, name: str, readable: list[str], temporal: bool) -> tuple[Action, int]:
    """A dataflow creation over `readable` names, with its output arity."""
    kind = source.choice(DATAFLOW_ACTIONS)
    if kind == CatalogAction.CREATE_INDEX:
        return Action(kind, {CatalogArg.NAME: name, CatalogArg.ON: source.choice(readable)}), ARITY
    plan, arity = draw_plan(source, readable, depth=2, temporal=temporal)
    return Action(kind, {CatalogArg.NAME: name, CatalogArg.PLAN: plan}), arity


def _same_named_timelines(actions: list[Action]) -> list[tuple[str, str]]:
    """`(cdc source, user-timeline source)` pairs whose timelines share a name: `External(x)`, `User(x)`."""
    sources = [a.args for a in actions if a.name == CatalogAction.CREATE_SOURCE]
    return [
        (c[CatalogArg.NAME], u[CatalogArg.NAME])
        for c in sources
        for u in sources
        if u.get(CatalogArg.TIMELINE) == c[CatalogArg.NAME]
    ]


def _draw_reading_both(source: Source, name: str, pairs: list[tuple[str, str]]) -> Action:
    """A view or select over both sides of a same-named pair (two timelines: it must be rejected)."""
    external, user = source.choice(pairs)
    gets = [
        {PlanField.NODE: PlanNode.GET, PlanField.NAME: external},
        {PlanField.NODE: PlanNode.GET, PlanField.NAME: user},
    ]
    return Action(
        source.choice((CatalogAction.CREATE_VIEW, CatalogAction.SELECT)),
        {CatalogArg.NAME: name, CatalogArg.PLAN: {PlanField.NODE: PlanNode.UNION, PlanField.INPUTS: gets}},
    )
