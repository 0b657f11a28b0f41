"""The *collections* suite: an implementation's update collections against the model's.

Histories of updates, reads and compactions (`frontier_harness.properties.checks.time.strategies.collections`);
every read and the final consolidated collection must equal the model's.
"""

from __future__ import annotations

from frontier_harness.model.antichain import Antichain
from frontier_harness.model.collection import Update, advance_collection, at, consolidate
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.errors import BadHistory
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Suite, differential


def observe(history: History) -> Observation:
    """The model's observations: contents at each read, and the final consolidated collection."""
    domain, updates, observed = history.time_domain, list[Update](), dict[tuple[int, str], frozenset]()
    for step, action in enumerate(history.actions):
        args = action.args
        if action.name == "update":
            updates.append(Update(args["data"], args["time"], args["diff"]))
        elif action.name == "read":
            observed[(step, "read")] = frozenset(at(domain, updates, args["time"]).items())
        elif action.name == "compact":
            updates = advance_collection(domain, updates, Antichain.checked(domain, args["since"]))
        else:
            raise BadHistory(f"collections history: unknown action {action.name!r} at step {step}")
    final = consolidate(domain, updates)
    observed[(len(history.actions), "final")] = frozenset((u.data, u.time, u.diff) for u in final)
    return observed


def events(history: History) -> list[str]:
    """Hard cases this history reaches."""
    domain, found = history.time_domain, set()
    updates = [a for a in history.actions if a.name == "update"]
    raw = sum(1 for _ in updates)
    merged = consolidate(domain, (Update(a.args["data"], a.args["time"], a.args["diff"]) for a in updates))
    if len(merged) < raw:
        found.add("updates merge or cancel in consolidation")
    times = [a.args["time"] for a in updates]
    if any(not domain.le(s, t) and not domain.le(t, s) for s in times for t in times):
        found.add("incomparable update times")
    names = [a.name for a in history.actions]
    if "compact" in names and "read" in names[names.index("compact") :]:
        found.add("read after compaction")
    for a in history.actions:
        if a.name == "compact":
            frontier = Antichain.of(domain, a.args["since"])
            if frontier.is_empty():
                found.add("compaction to the empty frontier")
            if any(frontier.domain.join(t, f) is None for t in times for f in frontier):
                found.add("time with no join against a frontier element")
    return sorted(found)


SUITE = Suite(
    name="collections",
    doc="Update collections (consolidate, contents at a time, compaction) against the model.",
    properties=(
        Property(
            name="observations_match_model",
            doc="Every read and the final consolidated collection equal the model's.",
            draw=draw_collection_history,
            check=differential(observe, "observe_collections"),
            events=events,
        ),
    ),
    default_impl="spark",
    required_events=(
        "updates merge or cancel in consolidation",
        "incomparable update times",
        "read after compaction",
        "compaction to the empty frontier",
        "time with no join against a frontier element",
    ),
    event_domains={
        "incomparable update times": ("product(total,total)", "partitioned"),
        "time with no join against a frontier element": ("partitioned",),
    },
)
