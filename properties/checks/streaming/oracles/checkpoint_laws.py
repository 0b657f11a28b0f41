"""The laws `validate-checkpoint` names, restated apart from `checkpoint_log` (which they judge).

Each law is a few lines over the whole log, read as plain data: what the offset log plans,
what is committed, the sink's entries in order, the state's files and rows. The `checkpoint`
suite holds `check_log`'s broken laws equal to `broken_laws`' on every log it draws.

>>> from frontier_harness.properties.engine.history import Action, History
>>> offsets = lambda b: Action("offsets", {"batch": b, "source": "0", "domain": "total", "offsets": [b]})
>>> sorted(broken_laws(History("total", [offsets(0), offsets(1), offsets(2), Action("commit", {"batch": 0})])))
['one uncommitted batch']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from frontier_harness.model.time.domains import parse_domain
from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.engine.history import History

Log = dict[str, Any]


def _read(history: History) -> Log:
    acts = [(a.name, a.args) for a in history.actions]
    of = lambda name: [args for n, args in acts if n == name]  # noqa: E731
    planned = of(LogAction.OFFSETS)
    retain = [a[LogArg.BATCHES] for a in of(LogAction.RETAIN)]
    return {
        "retain": retain[0] if retain else 100,
        "sink": bool(of(LogAction.FILE_SINK)),
        "retention": any(LogArg.RETENTION_MS in a for a in of(LogAction.FILE_SINK)),
        "streams": [a for a in planned if LogArg.DOMAIN in a],
        "planned": sorted({a[LogArg.BATCH] for a in planned}),
        "meta": [
            a for a in planned if LogArg.WATERMARK_MS in a or LogArg.TIMESTAMP_MS in a or LogArg.CONF in a
        ],
        "commits": {a[LogArg.BATCH]: a for a in of(LogAction.COMMIT)},
        "sinks": of(LogAction.SINK),
        "state": of(LogAction.STATE),
        "operators": of(LogAction.STATE_OPERATOR),
        "rows": of(LogAction.STATE_ROWS),
    }


def _frontier(args: dict) -> tuple[Any, list]:
    domain = parse_domain(args[LogArg.DOMAIN])
    return domain, [domain.decode(e) for e in args[LogArg.OFFSETS]]


def _is_antichain(args: dict) -> bool:
    domain, elements = _frontier(args)
    return not any(i != j and domain.le(a, b) for i, a in enumerate(elements) for j, b in enumerate(elements))


def antichain(log: Log) -> bool:
    """Some stream's offsets hold two elements, one at or below the other."""
    return not all(_is_antichain(a) for a in log["streams"])


def monotone(log: Log) -> bool:
    """Per stream, a binding of the same domain at a later batch, each element beyond the previous frontier."""
    before: dict[str, dict] = {}
    for args in filter(_is_antichain, log["streams"]):
        old, before[args[LogArg.SOURCE]] = before.get(args[LogArg.SOURCE]), args
        if old is None:
            continue
        if old[LogArg.DOMAIN] != args[LogArg.DOMAIN] or args[LogArg.BATCH] <= old[LogArg.BATCH]:
            return True
        domain, was = _frontier(old)
        if not all(any(domain.le(f, g) for f in was) for g in _frontier(args)[1]):
            return True
    return False


def _consecutive(batches: list[int]) -> bool:
    return all(b == a + 1 for a, b in zip(batches, batches[1:]))


def _window(*batches: list[int]) -> int:
    return max((min(b) for b in batches if b), default=0)


LAWS: dict[str, Callable[[Log], bool]] = {
    "antichain": antichain,
    "monotone": monotone,
    "offsets no gap": lambda log: not _consecutive(log["planned"]),
    "offsets purge": lambda log: (
        bool(log["planned"])
        and log["planned"][0] > 0
        and log["planned"][-1] - log["planned"][0] < log["retain"]
    ),
    "commit after offsets": lambda log: any(
        b >= _window(log["planned"], list(log["commits"])) and b not in log["planned"] for b in log["commits"]
    ),
    "one uncommitted batch": lambda log: any(b not in log["commits"] for b in log["planned"][:-1]),
}


def _goes_back(log: Log, key: str) -> bool:
    seen = [(a[LogArg.BATCH], a[key]) for a in log["meta"] if key in a]
    newest: tuple[int, int] | None = None
    for batch, ms in seen:
        if newest is not None and batch > newest[0] and ms < newest[1]:
            return True
        newest = (batch, ms) if newest is None or batch > newest[0] else newest
    return False


def _not_as_committed(log: Log) -> bool:
    for a in log["meta"]:
        handed = log["commits"].get(a[LogArg.BATCH] - 1, {}).get(LogArg.NEXT_WATERMARK_MS)
        if LogArg.WATERMARK_MS in a and handed is not None and handed != a[LogArg.WATERMARK_MS]:
            return True
    return False


def _setting_changed(log: Log) -> bool:
    first: dict[str, str] = {}
    for a in log["meta"]:
        for key, value in a.get(LogArg.CONF, {}).items():
            if value is not None and first.setdefault(key, value) != value:
                return True
    return False


LAWS |= {
    "watermark monotone": lambda log: _goes_back(log, LogArg.WATERMARK_MS),
    "watermark as committed": _not_as_committed,
    "timestamp monotone": lambda log: _goes_back(log, LogArg.TIMESTAMP_MS),
    "pinned setting": _setting_changed,
}


def _sink_batches(log: Log) -> list[int]:
    return [s[LogArg.BATCH] for s in log["sinks"]]


def _first_entries(log: Log) -> list[dict]:
    """The sink's entries, each batch's first only (a second one is `sink once`'s, and says nothing more)."""
    first: dict[int, dict] = {}
    for s in log["sinks"]:
        first.setdefault(s[LogArg.BATCH], s)
    return [s for s in log["sinks"] if first[s[LogArg.BATCH]] is s]


def _sink_gap(log: Log) -> bool:
    newest = None
    for s in _first_entries(log):
        if newest is not None and s[LogArg.BATCH] > newest + 1 and isinstance(s.get(LogArg.FILES), list):
            return True
        newest = s[LogArg.BATCH] if newest is None else max(newest, s[LogArg.BATCH])
    return False


def _sink_purge(log: Log) -> bool:
    held = _sink_batches(log)
    if not held or min(held) == 0:
        return False
    compactions = [s[LogArg.BATCH] for s in log["sinks"] if s.get(LogArg.COMPACT)]
    return not any(min(held) <= c <= max(held) - log["retain"] for c in compactions)


def _files(log: Log) -> set[str]:
    """`file once` and `compaction complete`, read entry by entry: the files listed, and those still live."""
    broken: set[str] = set()
    listed: set[str] = set()
    live: dict[str, int] = {}
    for s in _first_entries(log):
        files = s.get(LogArg.FILES)
        if not isinstance(files, list):
            continue
        mtimes = dict(zip(files, list(s.get(LogArg.MTIMES, [])) + [0] * len(files)))
        if any(n > 1 for n in Counter(files).values()):
            broken.add("file once")
        if s.get(LogArg.COMPACT):
            oldest = min(mtimes.values(), default=None)
            expired = {p for p, m in live.items() if log["retention"] and (oldest is None or m < oldest)}
            if not set(live) <= set(mtimes) | expired:
                broken.add("compaction complete")
            if any(p in listed and p not in live for p in files):
                broken.add("file once")
            live = dict(mtimes)
        else:
            if any(p in listed for p in mtimes):
                broken.add("file once")
            live |= {p: m for p, m in mtimes.items() if p not in listed}
        listed |= set(files)
        for path in s.get(LogArg.DELETED, []):
            live.pop(path, None)
    return broken


LAWS |= {
    "sink once": lambda log: any(n > 1 for n in Counter(_sink_batches(log)).values()),
    "sink no gap": _sink_gap,
    "sink purge": _sink_purge,
    "sink after offsets": lambda log: any(
        b >= _window(log["planned"], _sink_batches(log)) and b not in log["planned"]
        for b in _sink_batches(log)
    ),
    "sink before commit": lambda log: (
        (log["sink"] or bool(log["sinks"]))
        and any(b > max(_sink_batches(log), default=-1) for b in log["commits"])
    ),
    "file once": lambda log: "file once" in _files(log),
    "compaction complete": lambda log: "compaction complete" in _files(log),
}


def _kept(log: Log) -> list[int]:
    """The committed batches among the newest `minBatchesToRetain`: their state versions must be kept."""
    newest = max(log["commits"], default=-1)
    return [b for b in sorted(log["commits"]) if b > newest - log["retain"]]


def _rebuilds(state: dict, version: int) -> bool:
    """Down from `version`: a good full copy ends it, else this version's own file (never for a zip-only store)."""
    broken_bases = {v for v, _ in state.get(LogArg.MISSING, [])}
    for v in range(version, 0, -1):
        if v in state[LogArg.BASES] and v not in broken_bases:
            return True
        if state[LogArg.FILE_KIND] == "zip" or v not in state[LogArg.VERSIONS]:
            return False
    return True


def _partitions_wrong(log: Log) -> bool:
    shuffle = None
    for a in log["meta"]:
        shuffle = a.get(LogArg.CONF, {}).get("spark.sql.shuffle.partitions", shuffle)
    for op in log["operators"]:
        if LogArg.UNCHECKED in op:
            continue
        found = sorted(
            {s[LogArg.PARTITION] for s in log["state"] if s[LogArg.OPERATOR] == op[LogArg.OPERATOR]}
        )
        counts = ([int(shuffle)] if shuffle else []) + (
            [op[LogArg.PARTITIONS]] if LogArg.PARTITIONS in op else []
        )
        if any(found != list(range(n)) for n in counts):
            return True
    return False


def _late_row(log: Log) -> bool:
    watermarks = {a[LogArg.BATCH]: a[LogArg.WATERMARK_MS] for a in log["meta"] if LogArg.WATERMARK_MS in a}
    return any(
        r.get(LogArg.OLDEST_BOUND_MS) is not None
        and r[LogArg.BATCH] in watermarks
        and r[LogArg.OLDEST_BOUND_MS] <= watermarks[r[LogArg.BATCH]]
        for r in log["rows"]
    )


LAWS |= {
    "state version made": lambda log: any(
        b + 1 not in s[LogArg.VERSIONS] for s in log["state"] for b in _kept(log)
    ),
    "state rebuildable": lambda log: any(not _rebuilds(s, b + 1) for s in log["state"] for b in _kept(log)),
    "state partitions": _partitions_wrong,
    "state evicted": _late_row,
}


def broken_laws(history: History) -> set[str]:
    """The laws the log breaks."""
    log = _read(history)
    return {law for law, broken in LAWS.items() if broken(log)}
