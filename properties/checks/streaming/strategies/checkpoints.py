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
suite checks is reported. Actions: see `frontier_harness.properties.checks.streaming.checkpoint_log`.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_checkpoint_log(RandomSource(2), "partitioned")
>>> {a.name for a in h.actions} <= set(LogAction)
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from frontier_harness.model.time.domains import PARTITION_MAX
from frontier_harness.model.vocabulary.streaming import CrashPoint, LogAction, LogArg
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
CLOCK_START = 1_700_000_000_000
SHUFFLE, POLICY = "spark.sql.shuffle.partitions", "spark.sql.streaming.multipleWatermarkPolicy"
PARTITIONS = 2
CONF = {SHUFFLE: str(PARTITIONS), POLICY: "min"}


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
    watermarks: dict[int, int] = attrs.field(factory=dict)  # batch -> its watermark
    next_watermark: int = 0

    def plan(self, source: Source, batch: int, offsets: list[int]) -> None:
        """Batch `batch`'s offsets, with its watermark (the one the batch before handed on) and clock."""
        frontier = _frontier(self.domain_name, offsets)
        self.watermarks[batch] = self.next_watermark
        args: dict[str, Any] = {
            LogArg.BATCH: batch,
            LogArg.SOURCE: "0",
            LogArg.DOMAIN: self.domain_name,
            LogArg.OFFSETS: frontier,
            LogArg.WATERMARK_MS: self.next_watermark,
            LogArg.TIMESTAMP_MS: CLOCK_START + 1000 * batch + source.integer(0, 500),
        }
        self.offsets[batch] = Action(LogAction.OFFSETS, args)
        self.next_watermark += source.choice((0, 0, 1000, 2000))

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
        engine.plan(source, batch, offsets)
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
    damage = None
    if file_sink:
        head.append(Action(LogAction.FILE_SINK, {LogArg.RETENTION_MS: 1000} if engine.retention else {}))
        damage = _damage(source, engine) if source.boolean(0.3) else None
    log = head + _in_order(engine) + (_state(source, engine, retain, purged) if source.boolean(0.5) else [])
    said: dict[str, str] = {}
    if damage is None and source.boolean(0.4):
        damage, log, said = _log_damage(source, log)
    if damage is None:
        return History(domain_name, tuple(log))
    law = DAMAGES[damage] if damage in DAMAGES else LOG_DAMAGES[damage][0]
    expect = Action(LogAction.EXPECT, {LogArg.LAW: law, LogArg.DAMAGE: damage, **said})
    return History(domain_name, tuple(log[: len(head)] + [expect] + log[len(head) :]))


def _state(source: Source, engine: _Engine, retain: int, purged: bool) -> list[Action]:
    """The state of one windowed aggregation: each partition's versions (one per committed batch, from the
    oldest Spark keeps, a full copy there when the log was purged), its operator, and each kept batch's rows.
    Now and then Spark's maintenance has deleted the versions below the newest `retain` committed batches
    (lawful: no restart loads them), a full copy left at the oldest it keeps."""
    committed = sorted(engine.commits)
    if not committed:
        return []
    kind = source.choice(("delta", "zip", "changelog"))
    versions = list(range(committed[0] + 1 if purged else 1, committed[-1] + 2))
    oldest_kept = min(b for b in committed if b > committed[-1] - retain) + 1
    cleaned = source.boolean(0.3)
    actions = []
    for partition in range(PARTITIONS):
        drawn = {v for v in versions if source.boolean(0.2)} | ({versions[0]} if purged else set())
        present = [v for v in versions if v >= oldest_kept] if cleaned else versions
        bases = (
            present
            if kind == "zip"
            else sorted((drawn & set(present)) | ({oldest_kept} if cleaned else set()))
        )
        args: dict[str, Any] = {
            LogArg.OPERATOR: 0,
            LogArg.PARTITION: partition,
            LogArg.STORE: "default",
            LogArg.FILE_KIND: kind,
            LogArg.VERSIONS: present,
            LogArg.BASES: bases,
        }
        actions.append(Action(LogAction.STATE, args))
    actions.append(
        Action(
            LogAction.STATE_OPERATOR,
            {LogArg.OPERATOR: 0, LogArg.NAME: "stateStoreSave", LogArg.PARTITIONS: PARTITIONS},
        )
    )
    for batch in [b for b in committed if b > committed[-1] - retain]:
        rows: dict[str, Any] = {
            LogArg.OPERATOR: 0,
            LogArg.STORE: "default",
            LogArg.BATCH: batch,
            LogArg.ROWS: source.integer(0, 3),
        }
        if rows[LogArg.ROWS] and source.boolean(0.8):
            above = 1 if source.boolean(0.5) else source.integer(2, 2000)  # a millisecond above: the boundary
            rows[LogArg.OLDEST_BOUND_MS] = engine.watermarks[batch] + above
        actions.append(Action(LogAction.STATE_ROWS, rows))
    return actions


def _in_order(engine: _Engine) -> list[Action]:
    """The engine's logs batch by batch; the first offsets entry carries the pinned settings."""
    actions = []
    first = min(engine.offsets, default=None)
    if first is not None:
        entry = engine.offsets[first]
        engine.offsets[first] = Action(entry.name, entry.args | {LogArg.CONF: dict(CONF)})
    for batch in sorted(set(engine.offsets) | set(engine.sinks) | engine.commits):
        actions += [engine.offsets[batch]] if batch in engine.offsets else []
        actions += [Action(LogAction.SINK, engine.sinks[batch])] if batch in engine.sinks else []
        handed: dict[str, Any] = {
            LogArg.NEXT_WATERMARK_MS: engine.watermarks.get(batch + 1, engine.next_watermark)
        }
        actions += (
            [Action(LogAction.COMMIT, {LogArg.BATCH: batch} | handed)] if batch in engine.commits else []
        )
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


# A damaged log, or with what the broken law must say besides its name (`LogArg.NAMED`: words its message
# holds; `LogArg.RESTART`: the restart line it gives, "" for none), or None when the damage does not apply.
Damaged = list[Action] | tuple[list[Action], dict[str, str]] | None
Damage = Callable[[Source, list[Action]], Damaged]
SST = "SSTs/000008-a.sst"


def _at(actions: list[Action], name: str, **where: Any) -> list[int]:
    """The indices of the `name` actions whose arguments include `where`."""
    return [
        i
        for i, a in enumerate(actions)
        if a.name == name and all(a.args.get(k) == v for k, v in where.items())
    ]


def _with_args(actions: list[Action], index: int, **changed: Any) -> list[Action]:
    a = actions[index]
    return actions[:index] + [Action(a.name, a.args | changed)] + actions[index + 1 :]


def _without(actions: list[Action], indices: list[int]) -> list[Action]:
    return [a for i, a in enumerate(actions) if i not in indices]


def _not_antichain(source: Source, actions: list[Action]) -> list[Action] | None:
    found = [i for i in _at(actions, LogAction.OFFSETS) if LogArg.DOMAIN in actions[i].args]
    if not found:
        return None
    i = source.choice(found)
    first = actions[i].args[LogArg.OFFSETS][0]
    above = [first[0], first[1], first[2] + 1] if isinstance(first, list) else first + 1
    return _with_args(actions, i, offsets=[first, above])


def _offsets_back(source: Source, actions: list[Action]) -> list[Action] | None:
    found = [i for i in _at(actions, LogAction.OFFSETS) if LogArg.DOMAIN in actions[i].args]
    later = [j for j, i in zip(found[1:], found) if actions[i].args[LogArg.OFFSETS] != _minimum(actions[i])]
    if not later:
        return None
    j = source.choice(later)
    return _with_args(actions, j, offsets=_minimum(actions[j]))


def _minimum(action: Action) -> list:
    return [0] if action.args[LogArg.DOMAIN] == "total" else [[0, PARTITION_MAX, 0]]


def _batch_deleted(source: Source, actions: list[Action]) -> list[Action] | None:
    planned = sorted({actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.OFFSETS)})
    if len(planned) < 3 or _at(actions, LogAction.SINK):
        return None
    batch = source.choice(planned[1:-1])
    return _without(
        actions, _at(actions, LogAction.OFFSETS, batch=batch) + _at(actions, LogAction.COMMIT, batch=batch)
    )


def _purged_early(source: Source, actions: list[Action]) -> list[Action] | None:
    planned = sorted({actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.OFFSETS)})
    retain = actions[_at(actions, LogAction.RETAIN)[0]].args[LogArg.BATCHES]
    if len(planned) < 2 or planned[0] != 0 or planned[-1] - planned[1] >= retain:
        return None
    first = _at(actions, LogAction.OFFSETS, batch=0)
    conf = actions[first[0]].args.get(LogArg.CONF)
    kept = _without(actions, first + _at(actions, LogAction.COMMIT, batch=0))
    return _with_args(kept, _at(kept, LogAction.OFFSETS)[0], conf=conf) if conf else kept


def _unplanned_commit(source: Source, actions: list[Action]) -> Damaged:
    planned = [actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.OFFSETS)]
    if not planned:
        return None
    batch = max(planned) + 1  # a restart plans it again, and finds its commit: Spark refuses
    restart = (
        f"restart will fail: batch {batch} is committed but offsets/{batch} is missing "
        "(Spark refuses: CONCURRENT_STREAM_LOG_UPDATE)"
    )
    return actions + [Action(LogAction.COMMIT, {LogArg.BATCH: batch})], {LogArg.RESTART: restart}


def _commit_deleted(source: Source, actions: list[Action]) -> list[Action] | None:
    planned = sorted({actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.OFFSETS)})
    found = [i for b in planned[:-1] for i in _at(actions, LogAction.COMMIT, batch=b)]
    return _without(actions, [source.choice(found)]) if found else None


def _metadata_pairs(actions: list[Action]) -> list[tuple[int, int]]:
    """(index of batch k-1's offsets, index of batch k's), for consecutive batches both holding metadata."""
    found = {
        actions[i].args[LogArg.BATCH]: i
        for i in _at(actions, LogAction.OFFSETS)
        if LogArg.TIMESTAMP_MS in actions[i].args
    }
    return [(found[b - 1], found[b]) for b in sorted(found) if b - 1 in found]


def _watermark_back(source: Source, actions: list[Action]) -> list[Action] | None:
    pairs = _metadata_pairs(actions)
    if not pairs:
        return None
    i, j = source.choice(pairs)
    back = actions[i].args[LogArg.WATERMARK_MS] - source.choice((1, 1000))  # 1 ms: the law's boundary
    before = actions[i].args[LogArg.BATCH]
    changed = _with_args(actions, j, watermark_ms=back)
    for c in _at(changed, LogAction.COMMIT, batch=before):
        changed = _with_args(changed, c, next_watermark_ms=back)
    return changed


def _handed_on_changed(source: Source, actions: list[Action]) -> list[Action] | None:
    pairs = _metadata_pairs(actions)
    found = [c for i, _ in pairs for c in _at(actions, LogAction.COMMIT, batch=actions[i].args[LogArg.BATCH])]
    if not found:
        return None
    c = source.choice(found)
    return _with_args(
        actions, c, next_watermark_ms=actions[c].args[LogArg.NEXT_WATERMARK_MS] + source.integer(1, 1000)
    )


def _clock_back(source: Source, actions: list[Action]) -> list[Action] | None:
    pairs = _metadata_pairs(actions)
    if not pairs:
        return None
    i, j = source.choice(pairs)
    back = source.choice((1, 60_000))  # 1 ms: the law's boundary; a minute: a clock set back
    return _with_args(actions, j, timestamp_ms=actions[i].args[LogArg.TIMESTAMP_MS] - back)


def _setting_changed(source: Source, actions: list[Action]) -> list[Action] | None:
    pairs = _metadata_pairs(actions)
    if not pairs:
        return None
    _, j = source.choice(pairs)
    return _with_args(actions, j, conf={POLICY: "max"})


def _kept_batches(actions: list[Action]) -> list[int]:
    return [actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.STATE_ROWS)]


def _version_deleted(source: Source, actions: list[Action]) -> Damaged:
    kept, found = _kept_batches(actions), _at(actions, LogAction.STATE)
    if not kept or not found:
        return None
    i, version = source.choice(found), source.choice(kept) + 1
    args = actions[i].args
    versions = [v for v in args[LogArg.VERSIONS] if v != version]
    file = f"state/0/{args[LogArg.PARTITION]}/{version}.{args[LogArg.FILE_KIND]}"
    damaged = _with_args(actions, i, versions=versions, bases=sorted(set(args[LogArg.BASES]) | {version}))
    return damaged, {LogArg.NAMED: f"{file} is missing", LogArg.RESTART: ""}  # a full copy there: rebuildable


def _sst_deleted(source: Source, actions: list[Action]) -> Damaged:
    kept, found = _kept_batches(actions), _at(actions, LogAction.STATE, file_kind="zip")
    if not kept or not found:
        return None
    i, batch = source.choice(found), source.choice(kept)
    partition, zipped = (
        actions[i].args[LogArg.PARTITION],
        f"state/0/{actions[i].args[LogArg.PARTITION]}/{batch + 1}.zip",
    )
    restart = f"restart will fail: state for batch {batch}, partition {partition} is missing ({zipped})"
    return _with_args(actions, i, missing=[[batch + 1, SST]]), {
        LogArg.NAMED: f"{zipped} names {SST}, which are not there",
        LogArg.RESTART: restart if batch == max(kept) else "",  # a restart loads the newest committed batch's
    }


def _newest_delta_deleted(source: Source, actions: list[Action]) -> Damaged:
    """The newest committed batch's delta (or changelog) deleted, no full copy at it: a restart cannot load it."""
    found = [i for i in _at(actions, LogAction.STATE) if actions[i].args[LogArg.FILE_KIND] != "zip"]
    if not found or not _kept_batches(actions):
        return None
    i, newest = source.choice(found), max(_kept_batches(actions))
    args, version = actions[i].args, newest + 1
    kind, base = args[LogArg.FILE_KIND], "snapshot" if args[LogArg.FILE_KIND] == "delta" else "zip"
    file = f"state/0/{args[LogArg.PARTITION]}/{version}.{kind}"
    damaged = _with_args(
        actions,
        i,
        versions=[v for v in args[LogArg.VERSIONS] if v != version],
        bases=[v for v in args[LogArg.BASES] if v != version],
    )
    return damaged, {
        LogArg.NAMED: f"{file} is missing (and no {base} at or below version {version} follows)",
        LogArg.RESTART: f"restart will fail: state for batch {newest}, partition {args[LogArg.PARTITION]} "
        f"is missing ({file})",
    }


def _partition_deleted(source: Source, actions: list[Action]) -> Damaged:
    found = _at(actions, LogAction.STATE, partition=PARTITIONS - 1)
    if not found:
        return None
    newest = max(actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.COMMIT))
    restart = f"restart will fail: state for batch {newest}, partition {PARTITIONS - 1} is missing"
    return _without(actions, found), {
        LogArg.NAMED: f"operator 0 has state partitions {list(range(PARTITIONS - 1))}",
        LogArg.RESTART: restart,  # the newest batch pins more shuffle partitions than the state has
    }


def _kept_past_watermark(source: Source, actions: list[Action]) -> Damaged:
    watermarks: dict[int, int] = {
        actions[i].args[LogArg.BATCH]: actions[i].args[LogArg.WATERMARK_MS]
        for i in _at(actions, LogAction.OFFSETS)
        if LogArg.WATERMARK_MS in actions[i].args
    }
    found = [i for i in _at(actions, LogAction.STATE_ROWS) if actions[i].args[LogArg.BATCH] in watermarks]
    if not found:
        return None
    i = source.choice(found)
    below = 0 if source.boolean(0.5) else source.integer(1, 1000)  # at the watermark: the boundary
    batch = actions[i].args[LogArg.BATCH]
    late = watermarks[batch] - below
    damaged = _with_args(actions, i, rows=max(1, actions[i].args[LogArg.ROWS]), oldest_bound_ms=late)
    return damaged, {
        LogArg.NAMED: f"after batch {batch}, operator 0 still holds an entry whose window ends (or which expires) at {late} ms"
    }


def _entry_twice(source: Source, actions: list[Action]) -> list[Action] | None:
    found = _at(actions, LogAction.SINK)
    if not found:
        return None
    i = source.choice(found)
    twice = Action(
        LogAction.SINK, {LogArg.BATCH: actions[i].args[LogArg.BATCH], LogArg.FILES: [], LogArg.COMPACT: True}
    )
    return actions[: i + 1] + [twice] + actions[i + 1 :]


def _sink_purged_early(source: Source, actions: list[Action]) -> list[Action] | None:
    found = _at(actions, LogAction.SINK)
    if len(found) < 2 or actions[found[0]].args[LogArg.BATCH] != 0:
        return None
    retain = actions[_at(actions, LogAction.RETAIN)[0]].args[LogArg.BATCHES]
    entries = [actions[i].args for i in found]
    newest = max(e[LogArg.BATCH] for e in entries)
    if any(e[LogArg.COMPACT] and 1 <= e[LogArg.BATCH] <= newest - retain for e in entries):
        return None  # a compaction old enough: Spark may delete the entries below it, so this is lawful
    return _without(actions, [found[0]])


def _unplanned_sink(source: Source, actions: list[Action]) -> list[Action] | None:
    planned = [actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.OFFSETS)]
    if not planned or not _at(actions, LogAction.SINK):
        return None
    entry: dict[str, Any] = {
        LogArg.BATCH: max(planned) + 1,
        LogArg.FILES: ["part-unplanned"],
        LogArg.COMPACT: False,
    }
    return actions + [Action(LogAction.SINK, entry)]


def _newest_sink_deleted(source: Source, actions: list[Action]) -> list[Action] | None:
    committed = [actions[i].args[LogArg.BATCH] for i in _at(actions, LogAction.COMMIT)]
    newest = max(committed, default=None)
    found = [
        i
        for i in _at(actions, LogAction.SINK)
        if newest is not None and actions[i].args[LogArg.BATCH] >= newest
    ]
    return _without(actions, found) if found else None


# damage -> (the law it breaks, how it is done to a log's actions: None when it does not apply)
LOG_DAMAGES: dict[str, tuple[str, Damage]] = {
    "a frontier with one element below another": ("antichain", _not_antichain),
    "offsets going back": ("monotone", _offsets_back),
    "a middle batch's offsets and commit deleted": ("offsets no gap", _batch_deleted),
    "the first batch purged too soon": ("offsets purge", _purged_early),
    "a commit of an unplanned batch": ("commit after offsets", _unplanned_commit),
    "a commit deleted": ("one uncommitted batch", _commit_deleted),
    "the watermark set back": ("watermark monotone", _watermark_back),
    "a handed-on watermark changed": ("watermark as committed", _handed_on_changed),
    "the batch clock set back": ("timestamp monotone", _clock_back),
    "a pinned setting changed": ("pinned setting", _setting_changed),
    "a state delta deleted under a snapshot": ("state version made", _version_deleted),
    "an SST file of a state zip deleted": ("state rebuildable", _sst_deleted),
    "the newest state delta deleted, no full copy at it": ("state rebuildable", _newest_delta_deleted),
    "a state partition deleted": ("state partitions", _partition_deleted),
    "a state entry kept past the watermark": ("state evicted", _kept_past_watermark),
    "a sink entry written twice": ("sink once", _entry_twice),
    "the first sink entry purged too soon": ("sink purge", _sink_purged_early),
    "a sink entry of an unplanned batch": ("sink after offsets", _unplanned_sink),
    "the newest sink entry deleted": ("sink before commit", _newest_sink_deleted),
}


def _log_damage(source: Source, actions: list[Action]) -> tuple[str | None, list[Action], dict[str, str]]:
    """One damage drawn from `LOG_DAMAGES` applied to the log, and what the broken law must say beyond its
    name; (None, the log, {}) when it does not apply."""
    kind = source.choice(sorted(LOG_DAMAGES))
    damaged = LOG_DAMAGES[kind][1](source, actions)
    if damaged is None:
        return None, actions, {}
    return (kind, *damaged) if isinstance(damaged, tuple) else (kind, damaged, {})
