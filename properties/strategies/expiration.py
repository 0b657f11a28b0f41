"""Expiration histories: a catalog with maintained dataflows, its feed, restarts and reads."""

from __future__ import annotations

from properties.catalog_actions import ARITY
from properties.history import Action, History
from properties.source import Source, repeat
from properties.strategies.plans import draw_row, draw_temporal_predicates


def draw_expiration_history(source: Source, domain_name: str = "total") -> History:
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


def _draw_maintained(source: Source, name: str, pool: list[str], horizon: int) -> Action:
    kind = source.choice(("create_mv", "create_mv", "create_index", "create_subscribe"))
    if kind == "create_index":
        return Action(kind, {"name": name, "on": source.choice(pool)})
    inputs = repeat(source, lambda: source.choice(pool), 1, 3, 0.4)
    plan: dict = {
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


def _draw_feed(source: Source, horizon: int, cdc: bool) -> list[Action]:
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


def _draw_restarts_and_reads(source: Source, horizon: int, names: list[str], offset: int) -> list[Action]:
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
