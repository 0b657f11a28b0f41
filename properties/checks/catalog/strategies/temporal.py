"""Temporal histories: two tables, inserts, and queries with temporal filters and an `until`."""

from __future__ import annotations

from frontier_harness.properties.checks.catalog.strategies.plans import (
    draw_plan,
    draw_row,
    draw_temporal_predicates,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat


def draw_temporal_history(source: Source, domain_name: str = "total") -> History:
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
