"""Catalog histories: plans and catalog objects as plain JSON data, and generators for three suites.

Plans are nested records `{"node": ..., fields}`:
`get{name}`, `filter{input, predicates: [[column, op, value]...]}`,
`project{input, columns}`, `union{inputs}`, `join{left, right, on: [[l, r]...]}`,
`temporal{input, predicates: [[op, column, offset]...]}`. Refresh clauses are
`{"every": i, "aligned_to": a}` or `{"at": t}`. Rows are lists of ints.

The action vocabulary (shared by the timelines, temporal and expiration suites):
`create_table{name}`, `create_source{name, kind, timeline?, epoch_ms_timeline?,
consistency_topic?}`, `create_constant{name, rows}`, `create_view|create_mv|
create_subscribe|select{name, plan, refresh?, up_to?}`, `create_index{name, on}`,
`insert{table, row, time, diff}`, `tick{source, wall, reached}` (a non-wall-clock
source reached `reached` at wall-clock `wall`), `set_offset{offset}`,
`restart{wall}`, `read{name, wall, time}` and `query{plan, until}` (temporal suite:
evaluate `plan` over what was inserted before it; `until` is a frontier, `()` none).

Decoding failures are `model.errors` exceptions, so a malformed plan makes a
history invalid rather than a failure.

>>> p = {"node": "filter", "input": {"node": "get", "name": "t"}, "predicates": [[0, ">", 1]]}
>>> plan_to_json(plan_from_json(p)) == p
True
"""

from __future__ import annotations

from typing import Any

from model.catalog import (
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
from model.collection import Update
from model.errors import InvalidPlan, TimelineError
from model.plan import Compare, Filter, Get, Join, Project, TemporalFilter, Union
from model.temporal import MzNow
from properties.history import Action, History
from properties.source import Source as Choices
from properties.source import repeat

ARITY = 2  # every table, source and constant row has two int columns
DATAFLOW_ACTIONS = ("create_view", "create_mv", "create_subscribe", "select", "create_index")

# ---------------------------------------------------------------- plan JSON


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
    a, n = action.args, action.args.get("name")
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


# ---------------------------------------------------------------- drawing plans


def draw_row(source: Choices, lo: int = 0, hi: int = 6) -> list[int]:
    return [source.integer(lo, hi) for _ in range(ARITY)]


def draw_plan(
    source: Choices, readable: list[str], depth: int = 2, temporal: bool = False
) -> tuple[dict, int]:
    """A random plan over `readable` names (each of arity `ARITY`) and its output arity."""
    kind = source.integer(0, 9) if depth > 0 else 0
    if kind <= 3:
        return {"node": "get", "name": source.choice(readable)}, ARITY
    if kind == 4:
        inner, arity = draw_plan(source, readable, depth - 1, temporal)
        preds = repeat(
            source,
            lambda: [
                source.integer(0, arity - 1),
                source.choice(("==", "!=", "<", "<=", ">", ">=")),
                source.integer(0, 6),
            ],
            1,
            2,
            0.3,
        )
        return {"node": "filter", "input": inner, "predicates": preds}, arity
    if kind == 5:
        inner, arity = draw_plan(source, readable, depth - 1, temporal)
        cols = repeat(source, lambda: source.integer(0, arity - 1), 1, 3, 0.5)
        return {"node": "project", "input": inner, "columns": cols}, len(cols)
    if kind == 6:
        left, a = draw_plan(source, readable, depth - 1, temporal)
        right, b = draw_plan(source, readable, depth - 1, temporal)
        if b != a or source.boolean(0.3):
            right = {
                "node": "project",
                "input": right,
                "columns": [source.integer(0, b - 1) for _ in range(a)],
            }
        return {"node": "union", "inputs": [left, right]}, a
    if kind == 7:
        left, a = draw_plan(source, readable, depth - 1, temporal)
        right, b = draw_plan(source, readable, depth - 1, temporal)
        on = repeat(source, lambda: [source.integer(0, a - 1), source.integer(0, b - 1)], 0, 2, 0.6)
        return {"node": "join", "left": left, "right": right, "on": on}, a + b
    inner, arity = draw_plan(source, readable, depth - 1, temporal)
    if not temporal:
        return inner, arity
    return {"node": "temporal", "input": inner, "predicates": draw_temporal_predicates(source, arity)}, arity


def draw_temporal_predicates(source: Choices, arity: int, lo: int = -3, hi: int = 6) -> list:
    return repeat(
        source,
        lambda: [source.choice(("<=", "<", ">=")), source.integer(0, arity - 1), source.integer(lo, hi)],
        1,
        3,
        0.4,
    )


# ---------------------------------------------------------------- timelines histories

SOURCE_OPTIONS = (
    ("kafka", {}),
    ("postgres", {}),
    ("load_generator", {}),
    ("cdc", {}),
    ("cdc", {"epoch_ms_timeline": True}),
    ("kafka", {"timeline": "x"}),
    ("cdc", {"timeline": "x"}),
    ("postgres", {"timeline": "y"}),
    ("kafka", {"consistency_topic": ["b", "t1"]}),
    ("kafka", {"consistency_topic": ["b", "t2"]}),
)


def draw_timelines_history(source: Choices, domain_name: str = "total") -> History:
    """Leaves of every timeline with data, then dataflows over random readable objects (many span timelines)."""
    actions = [Action("create_table", {"name": "t0"})]
    for i in range(source.integer(1, 3)):
        kind, options = source.choice(SOURCE_OPTIONS)
        actions.append(Action("create_source", {"name": f"s{i}", "kind": kind, **options}))
    if source.boolean(0.5):
        actions.append(Action("create_constant", {"name": "k", "rows": [draw_row(source)]}))
    leaves = [a.args["name"] for a in actions]
    for name in leaves:
        if name != "k":
            actions += repeat(
                source,
                lambda: Action(
                    "insert",
                    {"table": name, "row": draw_row(source), "time": source.integer(0, 5), "diff": 1},
                ),
                0,
                2,
                0.5,
            )
    readable, catalog = list(leaves), build_catalog(History(domain_name, tuple(actions)))
    for i in range(source.integer(1, 4)):
        action = _draw_dataflow(source, f"d{i}", readable, temporal=False)
        actions.append(action)
        try:  # later dataflows read only views and MVs that were created
            catalog = catalog.add(object_from_action(action))
        except TimelineError:
            continue
        if action.name in ("create_view", "create_mv"):
            readable.append(action.args["name"])
    return History(domain_name, tuple(actions))


def _draw_dataflow(source: Choices, name: str, readable: list[str], temporal: bool) -> Action:
    kind = source.choice(DATAFLOW_ACTIONS)
    if kind == "create_index":
        return Action(kind, {"name": name, "on": source.choice(readable)})
    plan, _ = draw_plan(source, readable, depth=2, temporal=temporal)
    return Action(kind, {"name": name, "plan": plan})


# ---------------------------------------------------------------- temporal histories


def draw_temporal_history(source: Choices, domain_name: str = "total") -> History:
    """Two tables, inserts and queries (plans with temporal filters, with and without `until`)."""
    actions = [Action("create_table", {"name": "a"}), Action("create_table", {"name": "b"})]

    def step() -> Action:
        if source.integer(0, 2) < 2:
            return Action(
                "insert",
                {
                    "table": source.choice(("a", "b")),
                    "row": draw_row(source, 0, 8),
                    "time": source.integer(0, 8),
                    "diff": source.choice((1, 1, -1, 2)),
                },
            )
        plan, arity = draw_plan(source, ["a", "b"], depth=2, temporal=True)
        if plan["node"] != "temporal" and source.boolean(0.7):
            plan = {"node": "temporal", "input": plan, "predicates": draw_temporal_predicates(source, arity)}
        until = (source.integer(0, 12),) if source.boolean(0.5) else ()
        return Action("query", {"plan": plan, "until": until})

    actions += repeat(source, step, 2, 14, 0.85)
    return History(domain_name, tuple(actions))


# ---------------------------------------------------------------- expiration histories


def draw_expiration_history(source: Choices, domain_name: str = "total") -> History:
    """A table, a load generator, a constant, maybe a CDC source; views, MVs (refresh), indexes, subscribes;
    data, load-generator ticks, an offset, restarts and reads at wall-clock times."""
    horizon = source.integer(4, 10)
    actions = [
        Action("create_table", {"name": "t"}),
        Action("create_source", {"name": "g", "kind": "load_generator"}),
        Action("create_constant", {"name": "k", "rows": [draw_row(source, 0, 3)]}),
    ]
    if source.boolean(0.3):
        actions.append(Action("create_source", {"name": "c", "kind": "cdc"}))
    epoch, other = ["t", "g", "k"], (["c", "k"] if len(actions) == 4 else [])
    if source.boolean(0.7):
        window = (
            [["<=", 0, source.integer(0, 8)]]
            if source.boolean(0.7)
            else draw_temporal_predicates(source, ARITY, -2, 8)
        )
        actions.append(
            Action(
                "create_view",
                {
                    "name": "v",
                    "plan": {"node": "temporal", "input": {"node": "get", "name": "t"}, "predicates": window},
                },
            )
        )
        epoch.append("v")
    maintained = []
    for i in range(source.integer(1, 3)):
        pool = other if other and source.boolean(0.2) else epoch
        action = _draw_maintained(source, f"m{i}", pool, horizon)
        actions.append(action)
        maintained.append(action.args["name"])
        if action.name == "create_mv":
            pool.append(action.args["name"])
    actions.append(Action("set_offset", {"offset": source.integer(1, 6)}))
    actions += _draw_feed(source, horizon, "c" in other)
    actions += _draw_restarts_and_reads(source, horizon, maintained, _offset(actions))
    return History(domain_name, tuple(actions))


def _offset(actions: list[Action]) -> int:
    return next(a.args["offset"] for a in actions if a.name == "set_offset")


def _draw_maintained(source: Choices, name: str, pool: list[str], horizon: int) -> Action:
    kind = source.choice(("create_mv", "create_mv", "create_index", "create_subscribe"))
    if kind == "create_index":
        return Action(kind, {"name": name, "on": source.choice(pool)})
    inputs = repeat(source, lambda: source.choice(pool), 1, 3, 0.4)
    plan = {
        "node": "union",
        "inputs": [
            {"node": "project", "input": {"node": "get", "name": n}, "columns": [0, 1]} for n in inputs
        ],
    }
    if source.boolean(0.5):
        plan = {
            "node": "temporal",
            "input": plan,
            "predicates": draw_temporal_predicates(source, ARITY, -2, 6),
        }
    args: dict = {"name": name, "plan": plan}
    if kind == "create_mv":
        refresh = source.integer(0, 3)
        if refresh == 1:
            args["refresh"] = [{"every": source.integer(1, 6), "aligned_to": source.integer(0, 6)}]
        elif refresh == 2:
            args["refresh"] = [{"at": source.integer(0, 2 * horizon)}]
    elif source.boolean(0.5):
        args["up_to"] = source.integer(0, 2 * horizon)
    return Action(kind, args)


def _draw_feed(source: Choices, horizon: int, cdc: bool) -> list[Action]:
    def insert(table: str) -> Action:
        time = source.integer(0, horizon)
        return Action(
            "insert",
            {
                "table": table,
                "row": [time + source.integer(-3, 3), source.integer(0, 3)],
                "time": time,
                "diff": source.choice((1, 1, -1, 2)),
            },
        )

    actions = repeat(source, lambda: insert("t"), 0, 6, 0.8) + repeat(source, lambda: insert("g"), 0, 3, 0.5)
    if cdc:
        actions += repeat(source, lambda: insert("c"), 0, 2, 0.5)
    wall = reached = 0
    for _ in range(source.integer(0, 3)):
        wall, reached = wall + source.integer(0, horizon // 2), reached + source.integer(0, horizon)
        actions.append(Action("tick", {"source": "g", "wall": wall, "reached": reached}))
    return actions


def _draw_restarts_and_reads(source: Choices, horizon: int, names: list[str], offset: int) -> list[Action]:
    """Restarts often enough that the replica never runs expired; reads by every maintained dataflow."""
    start = source.integer(0, 3)
    actions = [Action("restart", {"wall": start})]
    while start + offset < horizon:
        start += source.integer(1, offset + 1)
        actions.append(Action("restart", {"wall": start}))

    def read() -> Action:
        wall = source.integer(actions[0].args["wall"], horizon)
        return Action(
            "read", {"name": source.choice(names), "wall": wall, "time": source.integer(0, wall + 2)}
        )

    return actions + repeat(source, read, 1, 5, 0.7)
