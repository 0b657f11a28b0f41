"""The catalog action vocabulary: plans and catalog objects as plain JSON data, and their decoding.

Every word below (action names, argument keys, plan nodes and fields, refresh clause keys) is
named once in `frontier_harness.model.vocabulary.catalog`, which implementations import too.

Plans are nested records `{"node": ..., fields}`:
`get{name}`, `filter{input, predicates: [[column, op, value]...]}`,
`project{input, columns}`, `union{inputs}`, `join{left, right, on: [[l, r]...]}`,
`temporal{input, predicates: [[op, column, offset]...]}`. Refresh clauses are
`{"every": i, "aligned_to": a}` or `{"at": t}`. Rows are lists of ints.

The action vocabulary (shared by the timelines, temporal, expiration and prove suites):
`create_table{name}`, `create_source{name, kind, timeline?, epoch_ms_timeline?,
consistency_topic?}`, `create_constant{name, rows}`, `create_view|create_mv|
create_subscribe|select{name, plan, refresh?, up_to?}`, `create_index{name, on}`,
`insert{table, row, time, diff}`, `tick{source, wall, reached}` (a non-wall-clock
source reached `reached` at wall-clock `wall`), `set_offset{offset}`,
`restart{wall}`, `read{name, wall, time}` and `query{plan, until}` (temporal suite:
evaluate `plan` over what was inserted before it; `until` is a frontier, `()` none).

Decoding failures are `frontier_harness.model.errors` exceptions naming the value.

>>> p = {"node": "filter", "input": {"node": "get", "name": "t"}, "predicates": [[0, ">", 1]]}
>>> plan_to_json(plan_from_json(p)) == p
True
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.catalog.catalog import (
    Catalog,
    Constant,
    Index,
    MaterializedView,
    RefreshAt,
    RefreshEvery,
    Select,
    Source,
    Subscribe,
    Table,
    View,
)
from frontier_harness.model.catalog.plan import Compare, Filter, Get, Join, Project, TemporalFilter, Union
from frontier_harness.model.catalog.temporal import MzNow
from frontier_harness.model.errors import InvalidPlan
from frontier_harness.model.time.collection import Update
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    DATAFLOW_ACTIONS,
    LEAF_ACTIONS,
    CatalogAction,
    CatalogArg,
    PlanField,
    PlanNode,
    RefreshField,
)
from frontier_harness.properties.engine.history import Action, History

ARITY = 2  # every table, source and constant row has two int columns


def plan_to_json(plan) -> dict:
    """A model plan as a nested JSON record."""
    match plan:
        case Get(name):
            return {PlanField.NODE: PlanNode.GET, PlanField.NAME: name}
        case Filter(input, predicates):
            return {
                PlanField.NODE: PlanNode.FILTER,
                PlanField.INPUT: plan_to_json(input),
                PlanField.PREDICATES: [[p.column, p.op, p.value] for p in predicates],
            }
        case Project(input, columns):
            return {
                PlanField.NODE: PlanNode.PROJECT,
                PlanField.INPUT: plan_to_json(input),
                PlanField.COLUMNS: list(columns),
            }
        case Union(inputs):
            return {PlanField.NODE: PlanNode.UNION, PlanField.INPUTS: [plan_to_json(p) for p in inputs]}
        case Join(left, right, on):
            return {
                PlanField.NODE: PlanNode.JOIN,
                PlanField.LEFT: plan_to_json(left),
                PlanField.RIGHT: plan_to_json(right),
                PlanField.ON: [list(pair) for pair in on],
            }
        case TemporalFilter(input, predicates):
            return {
                PlanField.NODE: PlanNode.TEMPORAL,
                PlanField.INPUT: plan_to_json(input),
                PlanField.PREDICATES: [[p.op, p.column, p.offset] for p in predicates],
            }
    raise InvalidPlan(plan, "not a plan node")


def plan_from_json(record: Any):
    """The model plan a JSON record describes; `InvalidPlan` naming the record if malformed."""
    try:
        return _decode_plan(record)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InvalidPlan):
            raise
        raise InvalidPlan(record, f"malformed plan record ({exc})") from exc


def _decode_plan(r: dict):
    node = r[PlanField.NODE]
    if node == PlanNode.GET:
        return Get(str(r[PlanField.NAME]))
    if node == PlanNode.FILTER:
        return Filter(
            _decode_plan(r[PlanField.INPUT]),
            tuple(Compare(int(c), op, int(v)) for c, op, v in r[PlanField.PREDICATES]),
        )
    if node == PlanNode.PROJECT:
        return Project(_decode_plan(r[PlanField.INPUT]), tuple(int(c) for c in r[PlanField.COLUMNS]))
    if node == PlanNode.UNION:
        return Union(tuple(_decode_plan(p) for p in r[PlanField.INPUTS]))
    if node == PlanNode.JOIN:
        return Join(
            _decode_plan(r[PlanField.LEFT]),
            _decode_plan(r[PlanField.RIGHT]),
            tuple((int(a), int(b)) for a, b in r[PlanField.ON]),
        )
    if node == PlanNode.TEMPORAL:
        return TemporalFilter(
            _decode_plan(r[PlanField.INPUT]),
            tuple(MzNow(op, int(c), int(o)) for op, c, o in r[PlanField.PREDICATES]),
        )
    raise InvalidPlan(r, f"unknown node {node!r}")


def refresh_from_json(clauses: list | None) -> tuple:
    """Refresh clauses from `[{"every": i, "aligned_to": a} | {"at": t}]` (None: refresh on every change)."""
    try:
        return tuple(
            RefreshAt(c[RefreshField.AT])
            if RefreshField.AT in c
            else RefreshEvery(c[RefreshField.EVERY], c[RefreshField.ALIGNED_TO])
            for c in clauses or ()
        )
    except (KeyError, TypeError) as exc:
        raise InvalidPlan(clauses, f"malformed refresh clauses ({exc})") from exc


def object_from_action(action: Action):
    """The catalog object a `create_*`/`select` action creates (None for other actions).

    >>> object_from_action(Action("create_index", {"name": "i", "on": "t"}))
    Index(name='i', on='t')
    """
    a = action.args
    if action.name not in (*LEAF_ACTIONS, *DATAFLOW_ACTIONS):
        return None
    n = a.get(CatalogArg.NAME)
    if not isinstance(n, str):
        raise InvalidPlan(a, f"{action.name} needs a name, got {n!r}")
    match action.name:
        case CatalogAction.CREATE_TABLE:
            return Table(n)
        case CatalogAction.CREATE_SOURCE:
            topic = a.get(CatalogArg.CONSISTENCY_TOPIC)
            return Source.create(
                n,
                a[CatalogArg.KIND],
                timeline=a.get(CatalogArg.TIMELINE),
                epoch_ms_timeline=bool(a.get(CatalogArg.EPOCH_MS_TIMELINE)),
                consistency_topic=None if topic is None else tuple(topic),
            )
        case CatalogAction.CREATE_CONSTANT:
            return Constant(n, tuple(tuple(r) for r in a.get(CatalogArg.ROWS, ())))
        case CatalogAction.CREATE_VIEW:
            return View(n, plan_from_json(a[CatalogArg.PLAN]))
        case CatalogAction.CREATE_MV:
            plan, refresh = plan_from_json(a[CatalogArg.PLAN]), refresh_from_json(a.get(CatalogArg.REFRESH))
            return MaterializedView(n, plan, refresh)
        case CatalogAction.CREATE_SUBSCRIBE:
            return Subscribe(n, plan_from_json(a[CatalogArg.PLAN]), a.get(CatalogArg.UP_TO))
        case CatalogAction.SELECT:
            return Select(n, plan_from_json(a[CatalogArg.PLAN]))
        case CatalogAction.CREATE_INDEX:
            return Index(n, a[CatalogArg.ON])
    return None


def insert_update(action: Action) -> Update:
    """The update an `insert` action writes."""
    a = action.args
    return Update(tuple(a[CatalogArg.ROW]), a[Arg.TIME], a[Arg.DIFF])


def build_catalog(history: History) -> Catalog:
    """The catalog every creation action of the history builds (a rejection raises, as the model does)."""
    catalog = Catalog()
    for action in history.actions:
        obj = object_from_action(action)
        if obj is not None:
            catalog = catalog.add(obj)
    return catalog
