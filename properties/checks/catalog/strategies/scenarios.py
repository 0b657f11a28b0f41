"""Expiration scenarios: small catalogs built from a template, drawn or solved for.

A scenario is a history (domain "total") in the action vocabulary the expiration
suite shares (`frontier_harness.model.vocabulary.catalog`), plain data:
`create_table{name}`, `create_source{name, kind}`, `create_constant{name, rows}`,
`create_view|create_mv|create_subscribe{name, plan, refresh?, up_to?}`,
`create_index{name, on}`, `insert{table, row, time, diff}`,
`tick{source, wall, reached}`, `skew{name, wall, by}` (a table or epoch source runs
`by` ahead of the wall clock from `wall` on), `set_offset{offset}`, `restart{wall}` (the first
is the replica's first start) and `read{name, wall, time}`; a plan is a record
(`get{name}`, `union{inputs}`, `temporal{input, predicates: [[op, column, offset]]}`)
and a refresh clause `{"every": i, "aligned_to": a}` or `{"at": t}`. Rows have two
int columns. A `Template` fixes the shape (the expiring dataflow's kind, its
leaves, its refresh clauses); `scenario` fills in the numbers, which
`draw_scenario` draws and the solver (`frontier_harness.properties.solver.realize`) solves for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    CatalogAction,
    CatalogArg,
    ObjectKind,
    PlanField,
    PlanNode,
    RefreshField,
    SourceKind,
    TemporalOp,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source

LEAF_NAMES = {"table": "t", "source": "s", "load_generator": "g", "non_epoch_source": "d", "constant": "k"}

SOURCE_KINDS = {
    "source": SourceKind.KAFKA,
    "load_generator": SourceKind.LOAD_GENERATOR,
    "non_epoch_source": SourceKind.CDC,
}


@attrs.frozen
class Template:
    """A small catalog shape: an expiring dataflow of `kind` over `leaves`."""

    kind: str
    leaves: tuple[str, ...]
    shape: tuple[str, ...] = ()
    up_to: bool = False
    restart: bool = False


def scenario(template: Template, values: Mapping[str, Any]) -> History:
    """The history a template and solved parameters describe."""
    names = [LEAF_NAMES[leaf] for leaf in template.leaves]
    actions = [_create_leaf(leaf, name) for leaf, name in zip(template.leaves, names)]
    gets = [{PlanField.NODE: PlanNode.GET, PlanField.NAME: n} for n in names]
    plan = {
        PlanField.NODE: PlanNode.TEMPORAL,
        PlanField.INPUT: gets[0]
        if len(gets) == 1
        else {PlanField.NODE: PlanNode.UNION, PlanField.INPUTS: gets},
        PlanField.PREDICATES: [[TemporalOp.LE, 0, values["window"]]],
    }
    if template.kind == ObjectKind.INDEX:
        actions.append(Action(CatalogAction.CREATE_VIEW, {CatalogArg.NAME: "v", CatalogArg.PLAN: plan}))
        actions.append(Action(CatalogAction.CREATE_INDEX, {CatalogArg.NAME: "x", CatalogArg.ON: "v"}))
    elif template.kind == ObjectKind.MV:
        refresh = [
            {RefreshField.EVERY: c[1], RefreshField.ALIGNED_TO: c[2]}
            if c[0] == RefreshField.EVERY
            else {RefreshField.AT: c[1]}
            for c in values["refresh"]
        ]
        actions.append(
            Action(
                CatalogAction.CREATE_MV,
                {CatalogArg.NAME: "x", CatalogArg.PLAN: plan, CatalogArg.REFRESH: refresh or None},
            )
        )
    else:
        actions.append(
            Action(
                CatalogAction.CREATE_SUBSCRIBE,
                {CatalogArg.NAME: "x", CatalogArg.PLAN: plan, CatalogArg.UP_TO: values.get("up_to")},
            )
        )
    actions.append(Action(CatalogAction.SET_OFFSET, {CatalogArg.OFFSET: values["offset"]}))
    for leaf, name in zip(template.leaves, names):
        if leaf != "constant":
            actions.append(
                Action(
                    CatalogAction.INSERT,
                    {CatalogArg.TABLE: name, CatalogArg.ROW: [0, 0], Arg.TIME: 0, Arg.DIFF: 1},
                )
            )
        if leaf in ("load_generator", "non_epoch_source"):
            actions.append(
                Action(
                    CatalogAction.TICK,
                    {CatalogArg.SOURCE: name, CatalogArg.WALL: 0, CatalogArg.REACHED: values["reach"][leaf]},
                )
            )
        actions += _skews(name, values.get("skews", {}).get(leaf))
    starts = [0, values["start"]] if template.restart else [values["start"]]
    actions += [Action(CatalogAction.RESTART, {CatalogArg.WALL: start}) for start in starts]
    actions.append(
        Action(
            CatalogAction.READ,
            {CatalogArg.NAME: "x", CatalogArg.WALL: values["wall"], Arg.TIME: values["time"]},
        )
    )
    return History("total", tuple(actions))


def _skews(name: str, skew: list[int] | None) -> list[Action]:
    """A clock leaf's `[lead, jump, later]`: `lead` from wall 0, `later` from `jump` on (when it differs)."""
    if skew is None or skew == [0, skew[1], 0]:
        return []
    lead, jump, later = skew
    points = [(0, lead)] + ([(jump, later)] if later != lead else [])
    return [
        Action(CatalogAction.SKEW, {CatalogArg.NAME: name, CatalogArg.WALL: w, CatalogArg.BY: by})
        for w, by in points
    ]


def _create_leaf(leaf: str, name: str) -> Action:
    if leaf == "table":
        return Action(CatalogAction.CREATE_TABLE, {CatalogArg.NAME: name})
    if leaf == "constant":
        return Action(CatalogAction.CREATE_CONSTANT, {CatalogArg.NAME: name, CatalogArg.ROWS: [[0, 0]]})
    return Action(CatalogAction.CREATE_SOURCE, {CatalogArg.NAME: name, CatalogArg.KIND: SOURCE_KINDS[leaf]})


def draw_scenario(source: Source, domain_name: str, restart: bool = False) -> History:
    """A random template with random small parameters (the solver's scenarios, drawn instead of solved)."""
    kind = source.choice((ObjectKind.MV, ObjectKind.INDEX, ObjectKind.SUBSCRIBE))
    leaves = source.choice(
        (
            ("table",),
            ("source",),
            ("load_generator",),
            ("table", "load_generator"),
            ("constant", "table"),
            ("table", "source"),
            ("non_epoch_source",),
        )
    )
    every, at = RefreshField.EVERY, RefreshField.AT
    shape = source.choice(((), (every,), (at,))) if kind == ObjectKind.MV else ()
    refresh = [
        [every, source.integer(1, 8), source.integer(0, 8)] if c == every else [at, source.integer(0, 20)]
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
        "skews": {leaf: _draw_skew(source) for leaf in leaves if leaf in ("table", "source")},
        "up_to": source.integer(0, 20) if kind == ObjectKind.SUBSCRIBE and source.boolean() else None,
    }
    return scenario(Template(kind, leaves, shape, values["up_to"] is not None, restart), values)


def _draw_skew(source: Source) -> list[int]:
    """A clock leaf's `[lead, jump, later]` within the bound: it never gets further ahead than it was."""
    lead = source.integer(-3, 3)
    return [lead, source.integer(1, 12), source.integer(-3, max(0, lead))]
