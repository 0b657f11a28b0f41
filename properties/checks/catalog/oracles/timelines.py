"""The seed's timeline rules restated for the timelines suite's oracle (`timelines.md`).

A table is `EpochMilliseconds`; a source created `WITH (timeline='x')` is `User('x')`; a CDC
source is `External(its name)` unless `epoch_ms_timeline`; a Kafka source with a consistency
topic `(broker, topic)` is `Counter(broker, topic)`; every other source is `EpochMilliseconds`;
a constant has none. Written apart from `frontier_harness.model.timeline_rules`, which the suite judges.

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

from frontier_harness.model.timeline import Counter, EpochMilliseconds, External, User  # value types


def leaf_timeline(statement: str, args: dict[str, Any]) -> Any:
    """The timeline of the leaf a `create_table`/`create_source`/`create_constant` makes (None: none)."""
    if statement == "create_table":
        return EpochMilliseconds()
    if statement == "create_constant":
        return None
    if args.get("timeline") is not None:
        return User(args["timeline"])
    if args["kind"] == "cdc" and not args.get("epoch_ms_timeline"):
        return External(args["name"])
    if args.get("consistency_topic") is not None:
        return Counter(*args["consistency_topic"])
    return EpochMilliseconds()


def plan_reads(plan: dict) -> set[str]:
    """The names a plan (plain JSON record) reads directly."""
    if plan["node"] == "get":
        return {plan["name"]}
    inputs = list(plan.get("inputs", ())) + [plan[k] for k in ("input", "left", "right") if k in plan]
    return set().union(*(plan_reads(p) for p in inputs))
