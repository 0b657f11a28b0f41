"""Reads any Structured Streaming checkpoint (and a file sink's log) into a history.

Files read (Spark writes each whole, by rename; `.crc` and temporary files are skipped):

- `metadata`: `{"id": ...}`; its absence means the directory is not a checkpoint;
- `offsets/N`: `v1`, a metadata line, then one line per source (its offsets as JSON, or
  `-` for none); or `v2`, a metadata line, then one JSON object from source name to its
  offsets' JSON text. The metadata line is a JSON object with `batchWatermarkMs`,
  `batchTimestampMs` (integers) and `conf` (strings by key), each optional;
- `commits/N`: `v1` or `v2`, then a JSON object (`nextBatchWatermarkMs`, an integer, optional);
- `SINK/_spark_metadata/N` and `N.compact`: `v1`, then one JSON object per data file (a
  `SinkFileStatus`: its `path`, `modificationTime` and `action`, `add` or `delete`).

Anything else is `CheckpointFormatError` naming the file and the line (1-based). A source's
offsets in a shape `offsets` does not know (a third-party source) are read as
`offsets {batch, source, unchecked}`: named unchecked, the batch still checked.

The history opens with `retain {batches}` (Spark's `minBatchesToRetain`, which bounds how
much of each log Spark may have purged) and, with a sink, `file_sink {}` (with
`retention_ms` when the sink has a `retention` option). A batch's first `offsets` action
carries its metadata (`watermark_ms`, `timestamp_ms`, and `conf`: every setting at the log's
first batch, then only the settings that differ from the batch before, a setting no longer
present as None); a `commit` its `next_watermark_ms`. Each sink log file is one
`sink {batch, files, compact}` action: its data files' paths (relative to the sink
directory, in the file's order, a path listed twice kept twice), with `mtimes` (their
`modificationTime`s) when a retention is given and `deleted` for `delete` entries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frontier_harness.model.vocabulary.streaming import CheckpointLog, LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.offsets import (
    InvalidOffsets,
    UnknownOffsets,
    streams,
)
from frontier_harness.properties.checks.streaming.checkpoint_log.state_files import PROVIDER, state_actions
from frontier_harness.properties.engine.errors import CheckpointFormatError
from frontier_harness.properties.engine.history import Action, History

MIN_BATCHES_TO_RETAIN = 100  # Spark's default `spark.sql.streaming.minBatchesToRetain`


def read_checkpoint(
    directory: Path,
    sink: Path | None = None,
    min_batches_to_retain: int = MIN_BATCHES_TO_RETAIN,
    retention_ms: int | None = None,
) -> History:
    """The checkpoint at `directory` (and the file sink at `sink`) as a history, batch by batch."""
    directory = Path(directory)
    _metadata(directory)
    offsets = {n: _offset_actions(n, f) for n, f in _batch_files(directory / CheckpointLog.OFFSETS)}
    commits = {n: _commit(n, f) for n, f in _batch_files(directory / CheckpointLog.COMMITS)}
    sinks = _sink_actions(Path(sink), retention_ms is not None) if sink is not None else {}
    actions = [Action(LogAction.RETAIN, {LogArg.BATCHES: min_batches_to_retain})]
    if sink is not None:
        retention: dict[str, Any] = {} if retention_ms is None else {LogArg.RETENTION_MS: retention_ms}
        actions.append(Action(LogAction.FILE_SINK, retention))
    conf = _conf_changes(offsets)
    for batch in sorted(set(offsets) | set(commits) | set(sinks)):
        actions += offsets.get(batch, []) + sinks.get(batch, []) + commits.get(batch, [])
    actions += state_actions(directory, conf.get(PROVIDER), min_batches_to_retain)
    domains = [a.args[LogArg.DOMAIN] for a in actions if LogArg.DOMAIN in a.args]
    return History(domains[0] if domains else "total", tuple(actions))


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointFormatError(path, None, f"cannot read: {exc}") from exc


def _json(path: Path, lines: list[str], number: int, what: str) -> Any:
    if len(lines) < number:
        raise CheckpointFormatError(
            path, number, f"truncated: expected {what}, the file has {len(lines)} lines"
        )
    try:
        return json.loads(lines[number - 1])
    except json.JSONDecodeError as exc:
        raise CheckpointFormatError(path, number, f"{what} is not JSON: {exc}") from exc


def _version(path: Path, lines: list[str], known: tuple) -> str:
    if not lines or lines[0] not in known:
        found = repr(lines[0]) if lines else "an empty file"
        raise CheckpointFormatError(path, 1, f"expected a version line {' or '.join(known)}, found {found}")
    return lines[0]


def _metadata(directory: Path) -> None:
    path = directory / "metadata"
    if not path.is_file():
        raise CheckpointFormatError(
            directory, None, "not a Structured Streaming checkpoint (no metadata file)"
        )
    meta = _json(path, _lines(path), 1, "the query's metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("id"), str):
        raise CheckpointFormatError(path, 1, f"expected an object with the query's id, found {meta!r}")


def _batch_files(directory: Path, compact: bool = False) -> list[tuple[int, Path]]:
    if not directory.is_dir():
        return []
    found = []
    for f in directory.iterdir():
        stem = f.name.removesuffix(".compact") if compact else f.name
        if stem.isdigit():
            found.append((int(stem), f))
    return sorted(found, key=lambda pair: (pair[0], pair[1].name))


def _conf_changes(offsets: dict[int, list[Action]]) -> dict[str, str]:
    """Each batch's `conf` replaced by what changed since the batch before (see the module); the newest
    batch's settings."""
    before: dict[str, str] | None = None
    for batch in sorted(offsets):
        first, *rest = offsets[batch]
        args = dict(first.args)
        conf = args.pop(LogArg.CONF)
        changed = conf if before is None else _changes(before, conf)
        offsets[batch] = [Action(first.name, args | ({LogArg.CONF: changed} if changed else {})), *rest]
        before = conf
    return before or {}


def _changes(before: dict[str, str], after: dict[str, str]) -> dict[str, str | None]:
    """The settings of `after` that differ from `before`'s, and None for each one `after` lacks.

    >>> _changes({"a": "1", "b": "2"}, {"a": "1", "c": "3"})
    {'c': '3', 'b': None}
    """
    found: dict[str, str | None] = {k: v for k, v in after.items() if before.get(k) != v}
    return found | {k: None for k in before if k not in after}


def _batch_metadata(path: Path, lines: list[str]) -> dict[str, Any]:
    """A batch's watermark, timestamp (when written) and pinned settings, from its metadata line."""
    meta = _json(path, lines, 2, "the batch's metadata")
    if not isinstance(meta, dict):
        raise CheckpointFormatError(path, 2, f"expected the batch's metadata as an object, found {meta!r}")
    found: dict[str, Any] = {}
    for key, arg in (("batchWatermarkMs", LogArg.WATERMARK_MS), ("batchTimestampMs", LogArg.TIMESTAMP_MS)):
        if key in meta:
            if not _is_int(meta[key]):
                raise CheckpointFormatError(path, 2, f"{key} {meta[key]!r} is not an integer")
            found[arg] = meta[key]
    conf = meta.get("conf", {})
    if not isinstance(conf, dict) or not all(isinstance(v, str) for v in conf.values()):
        raise CheckpointFormatError(path, 2, f"conf {conf!r} is not an object of strings")
    return found | {LogArg.CONF: conf}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _offset_actions(batch: int, path: Path) -> list[Action]:
    lines = _lines(path)
    version = _version(path, lines, ("v1", "v2"))
    if len(lines) < 3:
        what = "the batch's metadata line" if len(lines) < 2 else "the sources' offsets"
        raise CheckpointFormatError(path, len(lines) + 1, f"truncated: expected {what}")
    meta = _batch_metadata(path, lines)
    if version == "v1":
        named = [(str(i), line, i + 3) for i, line in enumerate(lines[2:])]
    else:
        sources = _json(path, lines, 3, "the sources' offsets")
        if not isinstance(sources, dict):
            raise CheckpointFormatError(path, 3, f"expected an object of sources, found {sources!r}")
        named = [(name, text, 3) for name, text in sorted(sources.items())]
    actions = [a for name, text, number in named for a in _source_actions(batch, path, name, text, number)]
    first, *rest = actions or [Action(LogAction.OFFSETS, {LogArg.BATCH: batch})]
    return [Action(first.name, first.args | meta), *rest]


def _source_actions(batch: int, path: Path, name: str, text: Any, number: int) -> list[Action]:
    if text == "-":
        return []
    try:
        raw = json.loads(text) if isinstance(text, str) else text
        found = streams(name, raw)
    except json.JSONDecodeError as exc:
        raise CheckpointFormatError(path, number, f"source {name}'s offsets are not JSON: {exc}") from exc
    except InvalidOffsets as exc:
        raise CheckpointFormatError(path, number, f"source {name}: {exc}") from exc
    except UnknownOffsets:
        shown = text if isinstance(text, str) else json.dumps(text)
        return [
            Action(
                LogAction.OFFSETS, {LogArg.BATCH: batch, LogArg.SOURCE: name, LogArg.UNCHECKED: shown[:200]}
            )
        ]
    return [
        Action(
            LogAction.OFFSETS,
            {LogArg.BATCH: batch, LogArg.SOURCE: stream, LogArg.DOMAIN: domain, LogArg.OFFSETS: frontier},
        )
        for stream, domain, frontier in found
    ]


def _commit(batch: int, path: Path) -> list[Action]:
    lines = _lines(path)
    _version(path, lines, ("v1", "v2"))
    meta = _json(path, lines, 2, "the commit's metadata")
    if not isinstance(meta, dict):
        raise CheckpointFormatError(path, 2, "expected a JSON object")
    args: dict[str, Any] = {LogArg.BATCH: batch}
    if "nextBatchWatermarkMs" in meta:
        if not _is_int(meta["nextBatchWatermarkMs"]):
            raise CheckpointFormatError(
                path, 2, f"nextBatchWatermarkMs {meta['nextBatchWatermarkMs']!r} is not an integer"
            )
        args[LogArg.NEXT_WATERMARK_MS] = meta["nextBatchWatermarkMs"]
    return [Action(LogAction.COMMIT, args)]


def _sink_actions(sink: Path, with_mtimes: bool) -> dict[int, list[Action]]:
    log = sink / "_spark_metadata"
    if not log.is_dir():
        raise CheckpointFormatError(sink, None, "not a Spark file sink (no _spark_metadata directory)")
    prefix = str(sink.resolve()).rstrip("/") + "/"
    moved = f"/{sink.resolve().name}/"  # a sink copied or moved since it was written
    found: dict[int, list[Action]] = {}
    for batch, path in _batch_files(log, compact=True):
        lines = _lines(path)
        _version(path, lines, ("v1",))
        entries = [_sink_entry(path, lines, number) for number in range(2, len(lines) + 1)]
        args: dict[str, Any] = {
            LogArg.BATCH: batch,
            LogArg.FILES: [_relative(e["path"], prefix, moved) for e in entries if e["action"] == "add"],
            LogArg.COMPACT: path.name.endswith(".compact"),
        }
        if with_mtimes:
            args[LogArg.MTIMES] = [e["modificationTime"] for e in entries if e["action"] == "add"]
        deleted = [_relative(e["path"], prefix, moved) for e in entries if e["action"] == "delete"]
        if deleted:
            args[LogArg.DELETED] = deleted
        found.setdefault(batch, []).append(Action(LogAction.SINK, args))
    return found


def _sink_entry(path: Path, lines: list[str], number: int) -> dict:
    """One `SinkFileStatus` line: a path, an `add` or `delete` action, an integer modificationTime."""
    entry = _json(path, lines, number, "a file entry")
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        raise CheckpointFormatError(path, number, f"expected a file entry with a path, found {entry!r}")
    if entry.setdefault("action", "add") not in ("add", "delete"):
        raise CheckpointFormatError(
            path, number, f"file entry action {entry['action']!r} is neither 'add' nor 'delete'"
        )
    mtime = entry.setdefault("modificationTime", 0)
    if not isinstance(mtime, int) or isinstance(mtime, bool):
        raise CheckpointFormatError(path, number, f"modificationTime {mtime!r} is not an integer")
    return entry


def _relative(uri: str, prefix: str, moved: str) -> str:
    """A data file's path relative to the sink directory (or a directory of its name) when inside it."""
    at = uri.find(prefix)
    if at >= 0 and uri[:at].rstrip("/") in ("", "file:"):
        return uri[at + len(prefix) :]
    at = uri.find(moved)
    return uri[at + len(moved) :] if at >= 0 else uri
