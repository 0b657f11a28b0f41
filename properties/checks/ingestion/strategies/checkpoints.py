"""Checkpoint logs as Spark's micro-batch engine writes them: the `checkpoint` suite's histories.

A small engine: each batch logs its end offsets (growing, partitions appearing; some
batches bring no new data), then the file sink's log entry (the data files it wrote;
every `interval`-th entry a compaction `N.compact` listing every live file of the batches
before it and its own, dropping the oldest when the sink has a retention), then the
commit. A crash after the offsets or after the sink leaves the last batch uncommitted; a
restart re-runs it with the same offsets, so the log shows it once. Some logs are purged
as Spark purges them (`minBatchesToRetain` drawn small): offsets and commits below
`current - minBatchesToRetain`, sink entries below a compaction at least that old.

Some logs are then damaged as a user found real ones damaged (an entry listing a file
twice, a file under two batches, entries or a compaction deleted, a compaction dropping a
file); such a log opens with `expect {law, damage}`, the law the damage breaks, which the
suite checks is reported. Actions: see `frontier_harness.properties.checks.ingestion.checkpoint_log`.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_checkpoint_log(RandomSource(2), "partitioned")
>>> {a.name for a in h.actions} <= set(LogAction)
True
"""

from __future__ import annotations

from typing import Any

import attrs

from frontier_harness.model.time.domains import PARTITION_MAX
from frontier_harness.model.vocabulary.ingestion import CrashPoint, LogAction, LogArg
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

DAMAGES = {
    "an entry lists a file twice": "file once",
    "a file under two batches": "file once",
    "an entry deleted": "sink no gap",
    "two entries deleted": "sink no gap",
    "a compaction deleted": "sink no gap",
    "a compaction drops a file": "compaction complete",
}
DEFAULT_RETAIN = 100


def _frontier(domain_name: str, offsets: list[int]) -> list:
    if domain_name == "total":
        return [offsets[0]]
    return [[p, p, n] for p, n in enumerate(offsets)] + [[len(offsets), PARTITION_MAX, 0]]


def _grow(source: Source, domain_name: str, offsets: list[int]) -> list[int]:
    grown = [n + source.integer(0, 3) for n in offsets]
    if domain_name != "total" and len(grown) < 3 and source.boolean(0.3):
        grown.append(source.integer(0, 3))
    return grown


@attrs.define
class _Engine:
    """The logs of one query as it runs: batch -> its offsets, sink entry and commit."""

    domain_name: str
    interval: int
    retention: bool
    offsets: dict[int, Action] = attrs.field(factory=dict)
    sinks: dict[int, dict] = attrs.field(factory=dict)
    commits: set[int] = attrs.field(factory=set)
    live: dict[str, int] = attrs.field(factory=dict)  # data file -> modificationTime

    def plan(self, batch: int, offsets: list[int]) -> None:
        frontier = _frontier(self.domain_name, offsets)
        args: dict[str, Any] = {
            LogArg.BATCH: batch,
            LogArg.SOURCE: "0",
            LogArg.DOMAIN: self.domain_name,
            LogArg.OFFSETS: frontier,
        }
        self.offsets[batch] = Action(LogAction.OFFSETS, args)

    def write(self, source: Source, batch: int) -> None:
        """Batch `batch`'s sink entry: its new files, and on a compaction every live file first."""
        own = {f"part-{batch}-{k}": batch * 10 + k for k in range(source.integer(0, 2))}
        compact = (batch + 1) % self.interval == 0
        if compact and self.retention:
            oldest = sorted(self.live, key=self.live.__getitem__)
            for path in oldest[: source.integer(0, len(oldest))]:
                del self.live[path]
        listed = {**self.live, **own} if compact else own
        self.live.update(own)
        args = {LogArg.BATCH: batch, LogArg.FILES: list(listed), LogArg.COMPACT: compact}
        self.sinks[batch] = {**args, LogArg.MTIMES: list(listed.values())} if self.retention else args


def draw_checkpoint_log(source: Source, domain_name: str) -> History:
    """A lawful log (or one damaged, opening with the law the damage breaks)."""
    file_sink, purged = source.boolean(), source.boolean(0.3)
    retain = source.integer(1, 3) if purged else DEFAULT_RETAIN
    engine = _Engine(domain_name, source.integer(2, 4), file_sink and source.boolean(0.2))
    count = len(repeat(source, lambda: None, 1, 10, 0.85))
    offsets = [source.integer(0, 2)]
    for batch in range(count):
        offsets = _grow(source, domain_name, offsets)
        engine.plan(batch, offsets)
        crash = (
            source.choice((None, None, CrashPoint.AFTER_OFFSETS, CrashPoint.AFTER_SINK))
            if batch == count - 1
            else None
        )
        if file_sink and crash != CrashPoint.AFTER_OFFSETS:
            engine.write(source, batch)
        if crash is None:
            engine.commits.add(batch)
    if purged:
        _purge(source, engine, retain)
    head = [Action(LogAction.RETAIN, {LogArg.BATCHES: retain})]
    if file_sink:
        head.append(Action(LogAction.FILE_SINK, {LogArg.RETENTION_MS: 1000} if engine.retention else {}))
        damage = _damage(source, engine) if source.boolean(0.4) else None
        head += (
            [Action(LogAction.EXPECT, {LogArg.LAW: DAMAGES[damage], LogArg.DAMAGE: damage})] if damage else []
        )
    return History(domain_name, tuple(head + _in_order(engine)))


def _in_order(engine: _Engine) -> list[Action]:
    actions = []
    for batch in sorted(set(engine.offsets) | set(engine.sinks) | engine.commits):
        actions += [engine.offsets[batch]] if batch in engine.offsets else []
        actions += [Action(LogAction.SINK, engine.sinks[batch])] if batch in engine.sinks else []
        actions += [Action(LogAction.COMMIT, {LogArg.BATCH: batch})] if batch in engine.commits else []
    return actions


def _purge(source: Source, engine: _Engine, retain: int) -> None:
    """Spark's purges: offsets and commits below `current - retain`, sink entries below a compaction."""
    current = source.integer(0, max(engine.offsets))
    for batch in range(current - retain):
        engine.offsets.pop(batch, None)
        engine.commits.discard(batch)
    if not engine.sinks:
        return
    oldest = max(engine.sinks) + 1 - retain  # the oldest batch Spark keeps for the newest entry
    if engine.interval <= oldest:
        compaction = oldest - oldest % engine.interval - 1
        for batch in range(source.integer(0, compaction)):  # the cleanup may not have reached it
            del engine.sinks[batch]


def _damage(source: Source, engine: _Engine) -> str | None:
    """Damages the sink's log one way; the damage's name, or None when none applies."""
    held = sorted(engine.sinks)
    middle = held[1:-1]
    options: dict[str, Any] = {
        "an entry lists a file twice": [b for b in held if engine.sinks[b][LogArg.FILES]],
        "a file under two batches": [
            (m, n)
            for m in held
            for n in held
            if m < n and engine.sinks[m][LogArg.FILES] and _plain(engine, n)
        ],
        "an entry deleted": middle,
        "two entries deleted": [(a, b) for a in middle for b in middle if a < b],
        "a compaction deleted": [b for b in middle if engine.sinks[b][LogArg.COMPACT]],
        "a compaction drops a file": [] if engine.retention else _carried(engine, held),
    }
    kind = source.choice(sorted(DAMAGES))
    if not options[kind]:
        return None
    target = source.choice(options[kind])
    _apply(engine, kind, target)
    return kind


def _plain(engine: _Engine, batch: int) -> bool:
    return not engine.sinks[batch][LogArg.COMPACT]


def _carried(engine: _Engine, held: list[int]) -> list[tuple[int, str]]:
    """(compaction, file) pairs: a file the compaction lists that a held entry before it listed."""
    seen: set[str] = set()
    found = []
    for batch in held:
        files = engine.sinks[batch][LogArg.FILES]
        if engine.sinks[batch][LogArg.COMPACT]:
            found += [(batch, path) for path in files if path in seen]
        seen.update(files)
    return found


def _apply(engine: _Engine, kind: str, target: Any) -> None:
    sinks = engine.sinks
    if kind == "an entry lists a file twice":
        sinks[target] = _with(sinks[target], sinks[target], 0)
    elif kind == "a file under two batches":
        m, n = target
        sinks[n] = _with(sinks[n], sinks[m], -1)
    elif kind in ("an entry deleted", "a compaction deleted"):
        del sinks[target]
    elif kind == "two entries deleted":
        for batch in target:
            del sinks[batch]
    else:
        batch, path = target
        entry = sinks[batch]
        kept = [i for i, p in enumerate(entry[LogArg.FILES]) if p != path]
        sinks[batch] = {
            **entry,
            **{k: [entry[k][i] for i in kept] for k in (LogArg.FILES, LogArg.MTIMES) if k in entry},
        }


def _with(entry: dict, other: dict, index: int) -> dict:
    """`entry` listing also `other`'s file at `index` (with its modificationTime)."""
    extra = {k: entry[k] + [other[k][index]] for k in (LogArg.FILES, LogArg.MTIMES) if k in entry}
    return {**entry, **extra}
