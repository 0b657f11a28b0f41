"""The catalog action vocabulary: plans and catalog objects as plain JSON data, and their decoding.

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

from frontier_harness.model.catalog import (
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
from frontier_harness.model.collection import Update
from frontier_harness.model.errors import InvalidPlan
from frontier_harness.model.plan import Compare, Filter, Get, Join, Project, TemporalFilter, Union
from frontier_harness.model.temporal import MzNow
from frontier_harness.properties.engine.history import Action, History

ARITY = 2  # every table, source and constant row has two int columns


DATAFLOW_ACTIONS = ("create_view", "create_mv", "create_subscribe", "select", "create_index")


def plan_to_json(plan) -> dict:
    """A model plan as a nested JSON record."""
    match plan:
        case Get(name):
            return {"node": "get", "name": name}
        case Filter(input, predicates):
            return {
                "node": "filter",
                "input": plan_to_json(input),
                "predicates": [[p.column, p.op, p.value] for p in predicates],
            }
        case Project(input, columns):
            return {"node": "project", "input": plan_to_json(input), "columns": list(columns)}
        case Union(inputs):
            return {"node": "union", "inputs": [plan_to_json(p) for p in inputs]}
        case Join(left, right, on):
            return {
                "node": "join",
                "left": plan_to_json(left),
                "right": plan_to_json(right),
                "on": [list(pair) for pair in on],
            }
        case TemporalFilter(input, predicates):
            return {
                "node": "temporal",
                "input": plan_to_json(input),
                "predicates": [[p.op, p.column, p.offset] for p in predicates],
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
    node = r["node"]
    if node == "get":
        return Get(str(r["name"]))
    if node == "filter":
        return Filter(
            _decode_plan(r["input"]), tuple(Compare(int(c), op, int(v)) for c, op, v in r["predicates"])
        )
    if node == "project":
        return Project(_decode_plan(r["input"]), tuple(int(c) for c in r["columns"]))
    if node == "union":
        return Union(tuple(_decode_plan(p) for p in r["inputs"]))
    if node == "join":
        return Join(
            _decode_plan(r["left"]), _decode_plan(r["right"]), tuple((int(a), int(b)) for a, b in r["on"])
        )
    if node == "temporal":
        return TemporalFilter(
            _decode_plan(r["input"]), tuple(MzNow(op, int(c), int(o)) for op, c, o in r["predicates"])
        )
    raise InvalidPlan(r, f"unknown node {node!r}")


def refresh_from_json(clauses: list | None) -> tuple:
    """Refresh clauses from `[{"every": i, "aligned_to": a} | {"at": t}]` (None: refresh on every change)."""
    try:
        return tuple(
            RefreshAt(c["at"]) if "at" in c else RefreshEvery(c["every"], c["aligned_to"])
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
    if action.name not in ("create_table", "create_source", "create_constant", *DATAFLOW_ACTIONS):
        return None
    n = a.get("name")
    if not isinstance(n, str):
        raise InvalidPlan(a, f"{action.name} needs a name, got {n!r}")
    match action.name:
        case "create_table":
            return Table(n)
        case "create_source":
            topic = a.get("consistency_topic")
            return Source.create(
                n,
                a["kind"],
                timeline=a.get("timeline"),
                epoch_ms_timeline=bool(a.get("epoch_ms_timeline")),
                consistency_topic=None if topic is None else tuple(topic),
            )
        case "create_constant":
            return Constant(n, tuple(tuple(r) for r in a.get("rows", ())))
        case "create_view":
            return View(n, plan_from_json(a["plan"]))
        case "create_mv":
            return MaterializedView(n, plan_from_json(a["plan"]), refresh_from_json(a.get("refresh")))
        case "create_subscribe":
            return Subscribe(n, plan_from_json(a["plan"]), a.get("up_to"))
        case "select":
            return Select(n, plan_from_json(a["plan"]))
        case "create_index":
            return Index(n, a["on"])
    return None


def insert_update(action: Action) -> Update:
    """The update an `insert` action writes."""
    return Update(tuple(action.args["row"]), action.args["time"], action.args["diff"])


def build_catalog(history: History) -> Catalog:
    """The catalog every creation action of the history builds (a rejection raises, as the model does)."""
    catalog = Catalog()
    for action in history.actions:
        obj = object_from_action(action)
        if obj is not None:
            catalog = catalog.add(obj)
    return catalog
