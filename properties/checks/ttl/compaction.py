"""The *ttl_compaction* suite: an implementation's TTL compaction equals the model's `compact_runs`.

Histories (`frontier_harness.properties.checks.ttl.strategies.store.draw_compaction_history`): rows of a few
sorted runs, then compactions `compact(now, last)` of all of them. Each
compaction's output rows are observed: newest version per key, values expired
at `now` (`expire_ts <= now`) turned into tombstones that keep `create_ts`,
tombstones dropped iff the output is the last run. The Spark side checks a whole
batch in one job (`frontier_harness.spark_impl.ttl.compaction_observer`).
"""

from __future__ import annotations

from frontier_harness.model.ttl.row import Row
from frontier_harness.model.ttl.store import compact_runs
from frontier_harness.model.vocabulary.ttl import (
    CompactAt,
    CompactionAction,
    CompactionArg,
    CompactionLabel,
    SstRow,
    compaction_steps,
)
from frontier_harness.properties.checks.ttl.strategies.store import draw_compaction_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Reference, Suite, differential


def runs_of(history: History) -> list[list[Row]]:
    """The history's runs as model rows, newest run first."""
    runs: dict[int, list[Row]] = {}
    for row in (s for s in compaction_steps(history) if isinstance(s, SstRow)):
        runs.setdefault(row.run or 0, []).append(Row(*row.as_tuple()))
    return [runs[k] for k in sorted(runs)]


def as_tuples(rows) -> frozenset:
    """Output rows as plain tuples `(key, value, seq, create_ts, expire_ts)`."""
    return frozenset(
        (r.key.decode(), None if r.value is None else r.value.decode(), r.seq, r.create_ts, r.expire_ts)
        for r in rows
    )


def observe(history: History) -> Observation:
    """The model's output rows of every compaction."""
    runs = runs_of(history)
    return {
        (step.step, CompactionLabel.OUTPUT): as_tuples(compact_runs(runs, step.now, step.last))
        for step in compaction_steps(history)
        if isinstance(step, CompactAt)
    }


ONE_AFTER = "value expiring one tick after now (kept)"
ALONE = "expired value with no older version"


def events(history: History) -> list[str]:
    """Hard cases: the boundary, an expired version over an older one, tombstones kept and dropped."""
    found: set[str] = set()
    rows = [r for run in runs_of(history) for r in run]
    for a in history.actions:
        if a.name != CompactionAction.COMPACT:
            continue
        now, last = a.args[CompactionArg.NOW], a.args[CompactionArg.LAST]
        newest: dict[bytes, Row] = {}
        for r in rows:
            if r.key not in newest or newest[r.key].seq < r.seq:
                newest[r.key] = r
        for r in newest.values():
            older_value = any(o.key == r.key and o.seq < r.seq and o.value is not None for o in rows)
            if r.value is not None and r.expire_ts == now:
                found.add("value expiring exactly at now")
            if r.value is not None and r.expire_ts == now + 1:
                found.add(ONE_AFTER)
            if r.value is not None and r.expire_ts <= now and not older_value:
                found.add(ALONE)
            if r.value is not None and r.expire_ts <= now and older_value and not last:
                found.add("expired value over an older version, non-last run")
            if r.value is None and older_value:
                found.add(
                    "tombstone over an older version, last run"
                    if last
                    else "tombstone over an older version, non-last run"
                )
    return sorted(found)


SUITE = Suite(
    name="ttl_compaction",
    doc="TTL compaction (newest per key, TTL filter, tombstone rules) equals the model's compact_runs.",
    properties=(
        Property(
            name="compaction_matches_model",
            doc="Every compaction's output rows equal the model's.",
            draw=draw_compaction_history,
            check=differential(observe, "observe_ttl_compaction"),
            events=events,
        ),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    required_events=(
        "value expiring exactly at now",
        "expired value over an older version, non-last run",
        "tombstone over an older version, non-last run",
        "tombstone over an older version, last run",
        ONE_AFTER,
        ALONE,
    ),
    domains=("total",),
)
