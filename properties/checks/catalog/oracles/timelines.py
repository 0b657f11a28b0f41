"""The seed's timeline rules restated for the timelines suite's oracle (`timelines.md`).

A table is `EpochMilliseconds`; a source created `WITH (timeline='x')` is `User('x')`; a CDC
source is `External(its name)` unless `epoch_ms_timeline`; a Kafka source with a consistency
topic `(broker, topic)` is `Counter(broker, topic)`; every other source is `EpochMilliseconds`;
a constant has none. Written apart from `frontier_harness.model.catalog.timeline_rules`, which the suite judges.

>>> leaf_timeline("create_source", {"name": "orders", "kind": "cdc"})
External(name='orders')
>>> leaf_timeline("create_source", {"name": "k", "kind": "kafka", "timeline": "orders"})
User(name='orders')
>>> sorted(plan_reads({"node": "join", "left": {"node": "get", "name": "a"},
...                    "right": {"node": "get", "name": "b"}, "on": []}))
['a', 'b']
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.catalog.timeline import Counter, EpochMilliseconds, External, User  # value types
from frontier_harness.model.vocabulary.catalog import (
    CHILD_FIELDS,
    CatalogAction,
    CatalogArg,
    PlanField,
    PlanNode,
    SourceKind,
)


def leaf_timeline(statement: str, args: dict[str, Any]) -> Any:
    """The timeline of the leaf a `create_table`/`create_source`/`create_constant` makes (None: none)."""
    if statement == CatalogAction.CREATE_TABLE:
        return EpochMilliseconds()
    if statement == CatalogAction.CREATE_CONSTANT:
        return None
    if args.get(CatalogArg.TIMELINE) is not None:
        return User(args[CatalogArg.TIMELINE])
    if args[CatalogArg.KIND] == SourceKind.CDC and not args.get(CatalogArg.EPOCH_MS_TIMELINE):
        return External(args[CatalogArg.NAME])
    if args.get(CatalogArg.CONSISTENCY_TOPIC) is not None:
        return Counter(*args[CatalogArg.CONSISTENCY_TOPIC])
    return EpochMilliseconds()


def plan_reads(plan: dict) -> set[str]:
    """The names a plan (plain JSON record) reads directly."""
    if plan[PlanField.NODE] == PlanNode.GET:
        return {plan[PlanField.NAME]}
    inputs = list(plan.get(PlanField.INPUTS, ())) + [plan[k] for k in CHILD_FIELDS if k in plan]
    return set().union(*(plan_reads(p) for p in inputs))
