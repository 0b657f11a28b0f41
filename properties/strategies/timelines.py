"""Timelines histories: leaves of every timeline with data, then dataflows over random readable objects."""

from __future__ import annotations

import functools

from model.errors import TimelineError
from properties.catalog_actions import DATAFLOW_ACTIONS, build_catalog, object_from_action
from properties.history import Action, History
from properties.source import Source, repeat
from properties.strategies.plans import draw_plan, draw_row

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


def draw_timelines_history(source: Source, domain_name: str = "total") -> History:
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
            actions += repeat(source, functools.partial(_draw_insert, source, name), 0, 2, 0.5)
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


def _draw_dataflow(source: Source, name: str, readable: list[str], temporal: bool) -> Action:
    kind = source.choice(DATAFLOW_ACTIONS)
    if kind == "create_index":
        return Action(kind, {"name": name, "on": source.choice(readable)})
    plan, _ = draw_plan(source, readable, depth=2, temporal=temporal)
    return Action(kind, {"name": name, "plan": plan})
