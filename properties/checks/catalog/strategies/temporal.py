"""Temporal histories: two tables, inserts, and queries with temporal filters and an `until`."""

from __future__ import annotations

from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import CatalogAction, CatalogArg, PlanField, PlanNode
from frontier_harness.properties.checks.catalog.strategies.plans import (
    draw_plan,
    draw_row,
    draw_temporal_predicates,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat


def draw_temporal_history(source: Source, domain_name: str = "total") -> History:
    """Two tables, inserts and queries (plans with temporal filters, with and without `until`)."""
    actions = [
        Action(CatalogAction.CREATE_TABLE, {CatalogArg.NAME: "a"}),
        Action(CatalogAction.CREATE_TABLE, {CatalogArg.NAME: "b"}),
    ]

    def step() -> Action:
        if source.integer(0, 2) < 2:
            return Action(
                CatalogAction.INSERT,
                {
                    CatalogArg.TABLE: source.choice(("a", "b")),
                    CatalogArg.ROW: draw_row(source, 0, 8),
                    Arg.TIME: source.integer(0, 8),
                    Arg.DIFF: source.choice((1, 1, -1, 2)),
                },
            )
        plan, arity = draw_plan(source, ["a", "b"], depth=2, temporal=True)
        if plan[PlanField.NODE] != PlanNode.TEMPORAL and source.boolean(0.7):
            predicates = draw_temporal_predicates(source, arity)
            plan = {
                PlanField.NODE: PlanNode.TEMPORAL,
                PlanField.INPUT: plan,
                PlanField.PREDICATES: predicates,
            }
        until = (source.integer(0, 12),) if source.boolean(0.5) else ()
        return Action(CatalogAction.QUERY, {CatalogArg.PLAN: plan, Arg.UNTIL: until})

    actions += repeat(source, step, 2, 14, 0.85)
    return History(domain_name, tuple(actions))
