"""Checkpoint logs as Spark's micro-batch engine writes them: the `checkpoint` suite's histories.

A small engine: each batch logs its end offsets (growing, partitions appearing; some
batches bring no new data), then the sink's log entry, then the commit. A crash after
the offsets or after the sink leaves the last batch uncommitted; a restart re-runs it
with the same offsets, so the log shows it once. Some logs start late, as after Spark
purged old batches. Actions: see `frontier_harness.properties.checks.ingestion.checkpoint_log`.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_checkpoint_log(RandomSource(2), "partitioned")
>>> {a.name for a in h.actions} <= {"file_sink", "offsets", "sink", "commit"}
True
"""

from __future__ import annotations

from frontier_harness.model.domains import PARTITION_MAX
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat


def _frontier(domain_name: str, offsets: list[int]) -> list:
    if domain_name == "total":
        return [offsets[0]]
    return [[p, p, n] for p, n in enumerate(offsets)] + [[len(offsets), PARTITION_MAX, 0]]


def _grow(source: Source, domain_name: str, offsets: list[int]) -> list[int]:
    grown = [n + source.integer(0, 3) for n in offsets]
    if domain_name != "total" and len(grown) < 3 and source.boolean(0.3):
        grown.append(source.integer(0, 3))
    return grown


def draw_checkpoint_log(source: Source, domain_name: str) -> History:
    """A lawful log: batches in order, each committed after its sink entry, the last perhaps not."""
    file_sink = source.boolean()
    actions = [Action("file_sink", {})] if file_sink else []
    first = source.choice((0, 0, 100))
    offsets = [source.integer(0, 2)]
    batches = repeat(source, lambda: None, 1, 8, 0.8)
    for i, batch in enumerate(range(first, first + len(batches))):
        offsets = _grow(source, domain_name, offsets)
        frontier = _frontier(domain_name, offsets)
        actions.append(
            Action("offsets", {"batch": batch, "source": "0", "domain": domain_name, "offsets": frontier})
        )
        crash = source.choice((None, None, "after_offsets", "after_sink")) if i == len(batches) - 1 else None
        if file_sink and crash != "after_offsets":
            actions.append(Action("sink", {"batch": batch, "files": source.integer(0, 2)}))
        if crash is None:
            actions.append(Action("commit", {"batch": batch}))
    return History(domain_name, tuple(actions))
