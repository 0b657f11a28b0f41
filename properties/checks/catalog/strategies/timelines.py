"""Timelines histories: leaves of every timeline with data, then dataflows over random readable objects."""

from __future__ import annotations

import functools

from frontier_harness.model.errors import TimelineError
from frontier_harness.properties.checks.catalog.actions import (
    ARITY,
    DATAFLOW_ACTIONS,
    build_catalog,
    object_from_action,
)
from frontier_harness.properties.checks.catalog.strategies.plans import draw_plan, draw_row
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

SOURCE_OPTIONS: tuple[tuple[str, dict[str, object]], ...] = (
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


def _draw_insert(source: Source, table: str) -> Action:
    """One insert of a drawn row into `table`."""
    return Action(
        "insert", {"table": table, "row": draw_row(source), "time": source.integer(0, 5), "diff": 1}
    )


def _draw_source(source: Source, name: str, before: list[Action]) -> Action:
    """A source of a drawn kind; a user timeline may be named after an earlier CDC source (`External`)."""
    kind, options = source.choice(SOURCE_OPTIONS)
    externals = [
        a.args["name"]
        for a in before
        if a.name == "create_source" and a.args["kind"] == "cdc" and set(a.args) == {"name", "kind"}
    ]
    if "timeline" in options and externals and source.boolean(0.8):
        options = {"timeline": source.choice(externals)}  # User(x) beside External(x)
    return Action("create_source", {"name": name, "kind": kind, **options})


def draw_timelines_history(source: Source, domain_name: str = "total") -> History:
    """Leaves of every timeline with data, then dataflows over random readable objects (many span timelines)."""
    actions = [Action("create_table", {"name": "t0"})]
    for i in range(source.integer(1, 3)):
        actions.append(_draw_source(source, f"s{i}", actions))
    if source.boolean(0.5):
        actions.append(Action("create_constant", {"name": "k", "rows": [draw_row(source)]}))
    leaves = [a.args["name"] for a in actions]
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
        if action.name in ("create_view", "create_mv") and arity == ARITY:  # plans assume ARITY columns
            readable.append(action.args["name"])
    return History(domain_name, tuple(actions))


def _draw_dataflow(source: Source, name: str, readable: list[str], temporal: bool) -> tuple[Action, int]:
    """A dataflow creation over `readable` names, with its output arity."""
    kind = source.choice(DATAFLOW_ACTIONS)
    if kind == "create_index":
        return Action(kind, {"name": name, "on": source.choice(readable)}), ARITY
    plan, arity = draw_plan(source, readable, depth=2, temporal=temporal)
    return Action(kind, {"name": name, "plan": plan}), arity


def _same_named_timelines(actions: list[Action]) -> list[tuple[str, str]]:
    """`(cdc source, user-timeline source)` pairs whose timelines share a name: `External(x)`, `User(x)`."""
    sources = [a.args for a in actions if a.name == "create_source"]
    return [(c["name"], u["name"]) for c in sources for u in sources if u.get("timeline") == c["name"]]


def _draw_reading_both(source: Source, name: str, pairs: list[tuple[str, str]]) -> Action:
    """A view or select over both sides of a same-named pair (two timelines: it must be rejected)."""
    external, user = source.choice(pairs)
    gets = [{"node": "get", "name": external}, {"node": "get", "name": user}]
    return Action(
        source.choice(("create_view", "select")), {"name": name, "plan": {"node": "union", "inputs": gets}}
    )
