"""Drawing plans over readable objects: rows, relational plans, temporal predicates.

Plans are drawn as the plain JSON records of `frontier_harness.properties.checks.catalog.actions`.
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.catalog import Comparison, PlanField, PlanNode, TemporalOp
from frontier_harness.properties.checks.catalog.actions import ARITY
from frontier_harness.properties.engine.source import Source, repeat


def draw_row(source: Source, lo: int = 0, hi: int = 6) -> list[int]:
    return [source.integer(lo, hi) for _ in range(ARITY)]


def draw_plan(
    source: Source, readable: list[str], depth: int = 2, temporal: bool = False
) -> tuple[dict, int]:
    """A random plan over `readable` names (each of arity `ARITY`) and its output arity."""
    kind = source.integer(0, 9) if depth > 0 else 0
    if kind <= 3:
        return {PlanField.NODE: PlanNode.GET, PlanField.NAME: source.choice(readable)}, ARITY
    if kind == 4:
        inner, arity = draw_plan(source, readable, depth - 1, temporal)
        preds = repeat(
            source,
            lambda: [
                source.integer(0, arity - 1),
                source.choice(tuple(Comparison)),
                source.integer(0, 6),
            ],
            1,
            2,
            0.3,
        )
        return {PlanField.NODE: PlanNode.FILTER, PlanField.INPUT: inner, PlanField.PREDICATES: preds}, arity
    if kind == 5:
        inner, arity = draw_plan(source, readable, depth - 1, temporal)
        cols = repeat(source, lambda: source.integer(0, arity - 1), 1, 3, 0.5)
        return {PlanField.NODE: PlanNode.PROJECT, PlanField.INPUT: inner, PlanField.COLUMNS: cols}, len(cols)
    if kind == 6:
        left, a = draw_plan(source, readable, depth - 1, temporal)
        right, b = draw_plan(source, readable, depth - 1, temporal)
        if b != a or source.boolean(0.3):
            right = {
                PlanField.NODE: PlanNode.PROJECT,
                PlanField.INPUT: right,
                PlanField.COLUMNS: [source.integer(0, b - 1) for _ in range(a)],
            }
        return {PlanField.NODE: PlanNode.UNION, PlanField.INPUTS: [left, right]}, a
    if kind == 7:
        left, a = draw_plan(source, readable, depth - 1, temporal)
        right, b = draw_plan(source, readable, depth - 1, temporal)
        on = repeat(source, lambda: [source.integer(0, a - 1), source.integer(0, b - 1)], 0, 2, 0.6)
        return {
            PlanField.NODE: PlanNode.JOIN,
            PlanField.LEFT: left,
            PlanField.RIGHT: right,
            PlanField.ON: on,
        }, a + b
    inner, arity = draw_plan(source, readable, depth - 1, temporal)
    if not temporal:
        return inner, arity
    return {
        PlanField.NODE: PlanNode.TEMPORAL,
        PlanField.INPUT: inner,
        PlanField.PREDICATES: draw_temporal_predicates(source, arity),
    }, arity


def draw_temporal_predicates(source: Source, arity: int, lo: int = -3, hi: int = 6) -> list:
    return repeat(
        source,
        lambda: [
            source.choice((TemporalOp.LE, TemporalOp.LT, TemporalOp.GE)),
            source.integer(0, arity - 1),
            source.integer(lo, hi),
        ],
        1,
        3,
        0.4,
    )
