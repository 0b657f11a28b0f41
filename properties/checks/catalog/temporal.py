"""The *temporal* suite: plans with temporal filters, evaluated by an implementation, against the model.

Histories (`frontier_harness.properties.checks.catalog.actions.draw_temporal_history`): two tables
`a` and `b` (rows of two ints), inserts at times, and `query{plan, until}`
actions. A query evaluates its plan (filter, project, union, equi-join,
temporal filters) over everything inserted before it; `until` (a frontier: `()`
none, `(u,)`) drops the diffs temporal filters produce at or after `u`.

Observed per query: the consolidated output `(data, time, diff)` and the number
of diffs the plan produced before consolidation (the diffs processed).
Total time only (`domains=("total",)`): plans and temporal filters are Total.
"""

from __future__ import annotations

from frontier_harness.model.catalog.plan import evaluate
from frontier_harness.model.catalog.temporal import validity
from frontier_harness.model.time.collection import consolidate
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    CHILD_FIELDS,
    CatalogAction,
    CatalogArg,
    PlanField,
    PlanNode,
    TemporalLabel,
)
from frontier_harness.properties.checks.catalog.actions import insert_update, plan_from_json
from frontier_harness.properties.checks.catalog.strategies.temporal import draw_temporal_history
from frontier_harness.properties.engine.errors import BadHistory
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Reference, Suite, differential

TIME = Total()


def _until(args: dict):
    until = args.get(Arg.UNTIL) or ()
    return until[0] if until else None


def observe(history: History) -> Observation:
    """The model's observations: per query, its consolidated output and its diffs processed."""
    tables: dict[str, list] = {}
    observed: Observation = {}
    for step, action in enumerate(history.actions):
        args = action.args
        if action.name == CatalogAction.CREATE_TABLE:
            tables[args[CatalogArg.NAME]] = []
        elif action.name == CatalogAction.INSERT:
            tables.setdefault(args[CatalogArg.TABLE], []).append(insert_update(action))
        elif action.name == CatalogAction.QUERY:
            out = evaluate(plan_from_json(args[CatalogArg.PLAN]), tables, _until(args))
            consolidated = consolidate(TIME, out)
            observed[(step, TemporalLabel.OUTPUT)] = frozenset((u.data, u.time, u.diff) for u in consolidated)
            observed[(step, TemporalLabel.DIFFS)] = frozenset({(len(out),)})
        else:
            raise BadHistory(f"temporal history: unknown action {action.name!r} at step {step}")
    return observed


def _temporal_nodes(plan: dict) -> list[dict]:
    found = [plan] if plan[PlanField.NODE] == PlanNode.TEMPORAL else []
    children = plan.get(PlanField.INPUTS, []) + [plan[k] for k in CHILD_FIELDS if k in plan]
    return found + [n for c in children for n in _temporal_nodes(c)]


UNTIL_AT_START = "until exactly at an insertion's start (dropped)"
UNTIL_AT_END = "until exactly at a retraction's upper_exclusive"
ONE_TICK = "validity interval of exactly one tick"


def events(history: History) -> list[str]:
    """Hard cases: empty intervals, retractions, lower bounds that move the start, until dropping diffs, joins."""
    found: set[str] = set()
    inserted = [insert_update(a) for a in history.actions if a.name == CatalogAction.INSERT]
    for action in history.actions:
        if action.name != CatalogAction.QUERY:
            continue
        plan, until = action.args[CatalogArg.PLAN], _until(action.args)
        if plan[PlanField.NODE] == PlanNode.JOIN or f'"{PlanNode.JOIN}"' in repr(plan).replace("'", '"'):
            found.add("temporal query with a join")
        for node in _temporal_nodes(plan):
            preds = [p for p in plan_from_json(node).predicates]
            for u in inserted:
                if len(u.data) <= max(p.column for p in preds):
                    continue
                start, end = validity(u.time, u.data, preds)
                if end is not None and end <= start:
                    found.add("empty validity interval")
                if end is not None and end > start:
                    found.add("retraction at upper_exclusive")
                    if until is not None and start < until <= end:
                        found.add("until drops a retraction")
                    found |= {UNTIL_AT_END} if until == end else set()
                    found |= {ONE_TICK} if end == start + 1 else set()
                found |= {UNTIL_AT_START} if until == start else set()
                if start > u.time:
                    found.add("lower bound moves the insertion later")
    return sorted(found)


SUITE = Suite(
    name="temporal",
    doc="Plans with temporal filters (and until) evaluated by the implementation equal the model's.",
    properties=(
        Property(
            name="plans_match_model",
            doc="Every query's consolidated output and diffs processed equal the model's, with and without until.",
            draw=draw_temporal_history,
            check=differential(observe, "observe_temporal"),
            events=events,
        ),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    required_events=(
        "empty validity interval",
        "retraction at upper_exclusive",
        "until drops a retraction",
        "lower bound moves the insertion later",
        "temporal query with a join",
        UNTIL_AT_START,
        UNTIL_AT_END,
        ONE_TICK,
    ),
    domains=("total",),
)
