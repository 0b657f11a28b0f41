"""The laws a checkpoint history obeys (see `frontier_harness.properties.checks.streaming.checkpoint_log` for its actions).

The offset and commit logs:

- `antichain`: each stream's offsets are a frontier (no element below another);
- `monotone`: per stream, the remap the offset log is (batch `N` binds its offsets at
  IntoTime `N + 1`) never goes back: each batch's frontier is beyond the previous one's in
  the model's frontier order (`Antichain.le`, the rule `Remap.mint` enforces), and batches
  bind in order, each once;
- `offsets no gap`: the offset log holds every batch from its first to its last;
- `offsets purge`: a log that starts after batch 0 still holds `minBatchesToRetain` batches
  before its newest (Spark purges `offsets/N` below `current - minBatchesToRetain`);
- `commit after offsets`: a batch is committed only once its offsets are logged;
- `one uncommitted batch`: every planned batch but the last is committed (Spark purges the
  commit log after the offset log, with the same threshold, so it never starts later);
- `watermark monotone`, `watermark as committed`, `timestamp monotone`, `pinned setting`:
  the batches' frontier, clock and settings (`batch_metadata`);
- `state version made`, `state rebuildable`, `state partitions`: the state store's files, and
  `state evicted`: its rows (`state_laws`).

A file sink's log (`_spark_metadata`), read as a history of file additions:

- `sink once`: the log holds each batch once (not both `N` and `N.compact`);
- `sink no gap`: the log holds every batch from its first to its last;
- `sink purge`: a log that starts after batch 0 starts at or below a compaction it holds,
  and that compaction is `minBatchesToRetain` batches older than its newest batch (Spark
  deletes only entries below such a compaction);
- `sink after offsets`: the log holds only batches whose offsets are logged;
- `sink before commit`: every committed batch is in the log;
- `file once`: each data file (path) is listed by exactly one batch: never twice in one
  entry, never by two batches, never again after a compaction or deletion removed it;
- `compaction complete`: a compaction `N.compact` lists exactly the live files of every
  batch before it plus its own: none dropped, except, when the sink has a `retention`,
  files older than every file it keeps.

Data files in the sink directory that no entry lists are allowed (a write that never
committed). A `sink` action whose `files` is a count, not a list of paths, is a sink
observed through the rows it holds (the `streaming` suite's trials), where a batch that
wrote nothing has no entry: only `sink once`, `sink after offsets` and `sink before
commit` apply to it. Logs Spark has purged start at a later batch; the offset and commit laws
look only at batches from the first one each log still holds.

>>> from frontier_harness.properties.engine.history import Action, History
>>> log = lambda *acts: History("total", [Action(n, a) for n, a in acts])
>>> offsets = lambda b, n: ("offsets", {"batch": b, "source": "0", "domain": "total", "offsets": [n]})
>>> check_log(log(offsets(0, 5), ("commit", {"batch": 0}), offsets(1, 9)))
[]
>>> [b.law for b in check_log(log(offsets(0, 5), ("commit", {"batch": 0}), offsets(1, 3)))]
['monotone']
>>> sink = lambda b, files, compact=False: ("sink", {"batch": b, "files": files, "compact": compact})
>>> batch0 = [offsets(0, 1), sink(0, ["a"]), ("commit", {"batch": 0})]
>>> broken = check_log(log(("file_sink", {}), *batch0, offsets(1, 2), sink(1, ["b", "a"])))
>>> [b.message for b in broken]
['file a is listed by batch 0 and again by batch 1']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import attrs

from frontier_harness.model.errors import ModelError
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import parse_domain
from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.batch_metadata import (
    SHUFFLE_PARTITIONS,
    BatchMetadata,
)
from frontier_harness.properties.checks.streaming.checkpoint_log.broken import Broken
from frontier_harness.properties.checks.streaming.checkpoint_log.state_laws import (
    eviction_law,
    partition_laws,
    state_laws,
)
from frontier_harness.properties.engine.history import Action, History

MIN_BATCHES_TO_RETAIN = 100


@attrs.frozen
class _Bound:
    """A stream's newest binding: its domain, the batch, and the frontier it bound."""

    domain_name: str
    batch: int
    frontier: Antichain


@attrs.frozen
class LogVerdict:
    """Every broken law of a log, by step, and the notes that are no violation (a setting first present
    in a later batch, state whose files were not read)."""

    broken: list[Broken]
    notes: list[str]


def check_log(history: History) -> list[Broken]:
    """Every broken law, by step; `[]` when the log is lawful."""
    return judge_log(history).broken


def judge_log(history: History) -> LogVerdict:
    """Every broken law, by step, and the notes."""
    found: list[Broken] = []
    streams: dict[str, _Bound] = {}
    planned: dict[int, int] = {}
    committed: dict[int, int] = {}
    sink, metadata = _SinkLog(), BatchMetadata()
    state: list[tuple[int, Action]] = []  # judged once the whole log is read
    retain, has_sink, newest = MIN_BATCHES_TO_RETAIN, False, -1
    for step, action in enumerate(history.actions):
        batch = action.args.get(LogArg.BATCH, -1)
        if action.name == LogAction.RETAIN:
            retain = action.args[LogArg.BATCHES]
        elif action.name == LogAction.FILE_SINK:
            has_sink, sink.retention = True, LogArg.RETENTION_MS in action.args
        elif action.name == LogAction.OFFSETS:
            if batch not in planned and planned and batch > newest + 1:
                found.append(_gap(step, "offsets no gap", "the offset log", newest, batch))
            planned.setdefault(batch, step)
            newest = max(newest, batch)
            if LogArg.SOURCE in action.args and LogArg.UNCHECKED not in action.args:
                found += _bind(streams, step, action.args)
            found += metadata.offsets(step, action.args)
        elif action.name == LogAction.COMMIT:
            committed[batch] = step
            metadata.commit(action.args)
        elif action.name == LogAction.SINK:
            found += sink.add(step, action.args)
        elif action.name in STATE_ACTIONS:
            state.append((step, action))
    found += _state(state, sorted(committed), retain, metadata)
    found += _commits(planned, committed)
    if sink.batches or has_sink:
        found += _sink(planned, committed, sink.batches)
        found += sink.purge(retain)
    found += _purge(planned, retain, len(history.actions) - 1)
    unchecked = [
        f"state of operator {a.args[LogArg.OPERATOR]} unchecked: {a.args[LogArg.UNCHECKED]}"
        for a in history.actions
        if a.name == LogAction.STATE_OPERATOR and LogArg.UNCHECKED in a.args
    ]
    return LogVerdict(sorted(found, key=lambda b: b.step), metadata.notes + unchecked)


STATE_ACTIONS = (LogAction.STATE, LogAction.STATE_OPERATOR, LogAction.STATE_ROWS)


def _state(
    state: list[tuple[int, Action]], committed: list[int], retain: int, metadata: BatchMetadata
) -> list[Broken]:
    """The state's laws, against the whole commit log and every batch's watermark and settings."""
    found: list[Broken] = []
    partitions: dict[int, list[int]] = {}  # operator -> its state partitions read
    for step, action in state:
        args = action.args
        if action.name == LogAction.STATE:
            found += state_laws(step, args, committed, retain)
            partitions.setdefault(args[LogArg.OPERATOR], []).append(args[LogArg.PARTITION])
        elif action.name == LogAction.STATE_ROWS:
            found += eviction_law(step, args, metadata.watermarks)
        elif LogArg.UNCHECKED not in args:
            pinned = metadata.latest.get(SHUFFLE_PARTITIONS)
            found += partition_laws(step, args, partitions.get(args[LogArg.OPERATOR], []), pinned, committed)
    return found


def _gap(step: int, law: str, where: str, before: int, after: int, files: str = "") -> Broken:
    missing = f"batch {before + 1}" if after == before + 2 else f"batches {before + 1} to {after - 1}"
    files = f": {files}{before + 1} or {before + 1}.compact" if files and after == before + 2 else ""
    message = f"{where} has no entry for {missing}{files} (it holds batch {before} and batch {after})"
    return Broken(step, law, message)


def _bind(streams: dict, step: int, args: dict) -> list[Broken]:
    """One stream's binding against its previous one (linear in the log, unlike minting a `Remap`)."""
    name, batch = args[LogArg.SOURCE], args[LogArg.BATCH]
    try:
        domain = parse_domain(args[LogArg.DOMAIN])
        frontier = Antichain.checked(domain, [domain.decode(e) for e in args[LogArg.OFFSETS]])
    except ModelError as exc:
        return [Broken(step, "antichain", f"stream {name} at batch {batch}: {exc}")]
    known = streams.get(name)
    streams[name] = _Bound(args[LogArg.DOMAIN], batch, frontier)
    if known is None:
        return []
    if known.domain_name != args[LogArg.DOMAIN] or batch <= known.batch:
        what = (
            f"is {args['domain']}, was {known.domain_name}" if batch > known.batch else "binds out of order"
        )
        return [
            Broken(step, "monotone", f"stream {name} at batch {batch} {what} (after batch {known.batch})")
        ]
    if not known.frontier.le(frontier):
        message = (
            f"offsets of stream {name} go back: batch {batch} binds {frontier!r}, "
            f"batch {known.batch} bound {known.frontier!r}"
        )
        return [Broken(step, "monotone", message)]
    return []


def _window(*logs: Iterable[int]) -> int:
    """The first batch every non-empty log still holds."""
    return max((min(log) for log in logs if log), default=0)


def _purge(planned: dict, retain: int, last_step: int) -> list[Broken]:
    """A purged offset log keeps `retain` batches below its newest."""
    if not planned or min(planned) == 0 or max(planned) - min(planned) >= retain:
        return []
    first, newest = min(planned), max(planned)
    message = (
        f"the offset log starts at batch {first}, but Spark purges offsets/N only below its newest "
        f"batch ({newest}) minus minBatchesToRetain ({retain})"
    )
    return [Broken(last_step, "offsets purge", message)]


def _commits(planned: dict, committed: dict) -> list[Broken]:
    found = []
    start, last = _window(planned, committed), max(planned, default=None)
    for batch, step in committed.items():
        if batch >= start and batch not in planned:
            message = f"batch {batch} is committed but has no offsets"
            found.append(Broken(step, "commit after offsets", message, _restart_after(batch, last)))
    for batch, step in planned.items():  # Spark purges commits after offsets: never more of them
        if batch != last and batch not in committed:
            found.append(
                Broken(
                    step,
                    "one uncommitted batch",
                    f"batch {batch} was never committed, yet batch {last} was planned",
                )
            )
    return found


def _restart_after(batch: int, last: int | None) -> str:
    """The restart line of a commit without offsets: a restart plans the batch after the newest offsets
    and finds its commit already there (measured on PySpark 4.3, `tests/test_checkpoint_stateful.py`);
    a commit without offsets below the newest is never read again.

    >>> _restart_after(2, 4), _restart_after(5, 4)[:46]
    ('', 'restart will fail: batch 5 is committed but of')
    """
    if batch != (-1 if last is None else last) + 1:
        return ""
    return (
        f"restart will fail: batch {batch} is committed but offsets/{batch} is missing "
        "(Spark refuses: CONCURRENT_STREAM_LOG_UPDATE)"
    )


def _sink(planned: dict, committed: dict, sinks: dict) -> list[Broken]:
    found = []
    start = _window(planned, sinks)
    for batch, step in sinks.items():
        if batch >= start and batch not in planned:
            found.append(
                Broken(
                    step,
                    "sink after offsets",
                    f"the sink holds batch {batch}, which has no offsets (no offsets/{batch})",
                )
            )
    newest = max(sinks, default=-1)
    for batch, step in committed.items():
        if batch > newest:
            missing = f"no _spark_metadata/{batch} or {batch}.compact"
            message = f"batch {batch} is committed but not in the sink's log ({missing})"
            found.append(Broken(step, "sink before commit", message))
    return found


@attrs.define
class _SinkLog:
    """The sink's log read so far: its batches, and every data file by the batch that listed it."""

    retention: bool = False
    batches: dict[int, int] = attrs.field(factory=dict)  # batch -> step of its entry
    compactions: list[int] = attrs.field(factory=list)
    listed: dict[str, int] = attrs.field(factory=dict)  # path -> the batch that first listed it
    live: dict[str, int] = attrs.field(factory=dict)  # path -> modificationTime, files not removed
    last_step: int = -1
    newest: int = -1

    def add(self, step: int, args: dict) -> list[Broken]:
        """The laws on one log entry, given the entries before it."""
        batch, files = args[LogArg.BATCH], args.get(LogArg.FILES, [])
        self.last_step = step
        if batch in self.batches:
            return [
                Broken(
                    step,
                    "sink once",
                    f"the sink's log holds batch {batch} twice (_spark_metadata/{batch} and {batch}.compact)",
                )
            ]
        found = []
        if self.batches and batch > self.newest + 1 and isinstance(files, list):
            found.append(_gap(step, "sink no gap", "the sink's log", self.newest, batch, "_spark_metadata/"))
        self.batches[batch], self.newest = step, max(self.newest, batch)
        if args.get(LogArg.COMPACT):
            self.compactions.append(batch)
        if not isinstance(files, list):  # a count: a sink observed by its rows (see `check_log`)
            return found
        known = list(args.get(LogArg.MTIMES, []))
        mtimes = dict(zip(files, known + [0] * (len(files) - len(known))))
        found += self._twice_in_entry(step, batch, files, args.get(LogArg.COMPACT, False))
        if args.get(LogArg.COMPACT):
            found += self._compaction(step, batch, mtimes)
        else:
            found += self._additions(step, batch, mtimes)
        for path in args.get(LogArg.DELETED, []):
            self.live.pop(path, None)
        return found

    def _twice_in_entry(self, step: int, batch: int, files: list, compact: bool) -> list[Broken]:
        name = f"{batch}.compact" if compact else str(batch)
        return [
            Broken(step, "file once", f"_spark_metadata/{name} lists file {path} {n} times")
            for path, n in Counter(files).items()
            if n > 1
        ]

    def _additions(self, step: int, batch: int, mtimes: dict) -> list[Broken]:
        found = []
        for path, mtime in mtimes.items():
            if path in self.listed:
                message = f"file {path} is listed by batch {self.listed[path]} and again by batch {batch}"
                found.append(Broken(step, "file once", message))
                continue
            self.listed[path], self.live[path] = batch, mtime
        return found

    def _compaction(self, step: int, batch: int, mtimes: dict) -> list[Broken]:
        found = []
        dropped = {p: m for p, m in self.live.items() if p not in mtimes}
        oldest_kept = min(mtimes.values(), default=None)
        for path, mtime in dropped.items():
            if self.retention and (oldest_kept is None or mtime < oldest_kept):
                continue  # expired by the sink's retention: the oldest files go first
            message = (
                f"{batch}.compact does not list file {path}, which batch {self.listed[path]} wrote "
                "(a compaction lists every file of the batches before it)"
            )
            found.append(Broken(step, "compaction complete", message))
        for path in mtimes:
            if path in self.listed and path not in self.live:
                message = (
                    f"{batch}.compact lists file {path} again, which batch {self.listed[path]} listed "
                    "and the log had removed"
                )
                found.append(Broken(step, "file once", message))
            self.listed.setdefault(path, batch)
        self.live = dict(mtimes)
        return found

    def purge(self, retain: int) -> list[Broken]:
        """A log starting after batch 0 starts at or below a compaction `retain` batches old."""
        if not self.batches or min(self.batches) == 0:
            return []
        first, newest = min(self.batches), max(self.batches)
        if any(first <= c <= newest - retain for c in self.compactions):
            return []
        message = (
            f"the sink's log starts at batch {first}, but Spark deletes _spark_metadata entries only below "
            f"a compaction at least minBatchesToRetain ({retain}) batches before its newest ({newest}); "
            f"it holds compactions {sorted(self.compactions) or 'none'}"
        )
        return [Broken(self.last_step, "sink purge", message)]
