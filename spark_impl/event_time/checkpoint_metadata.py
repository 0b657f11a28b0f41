"""What Spark recorded in a streaming query's checkpoint: the same `Recorded` dict `plan_metadata` reads
from a job's plan, read from the checkpoint alone (no code of the job that wrote it).

- `offsets/N` (the newest batch): its metadata line (`batchWatermarkMs`, and `conf`, the settings Spark
  pins and restores on a restart) and one line per source (`v1`; `v2` names them in one JSON object), each
  source's offset JSON, its `kind` read from the offset's shape (`{"logOffset": n}` a file source,
  `{"frontier": ...}` the harness's upstream log, `{topic: {partition: offset}}` Kafka) and, for a file
  source, the paths its log `sources/<i>/` names (`FileStreamSourceLog`: `v1`, then one
  `{"path", "timestamp", "batchId"}` per file);
- `commits/N`: the newest committed batch;
- the stateful operators as Spark's `state-metadata` data source lists them (id, short name, partitions),
  and each one's state schema from its schema file, the file `StateSchemaCompatibilityChecker` compares
  a restarted query's schema with: `state/<id>/0/_metadata/schema`, written by Spark's `SchemaWriter`
  (a `writeUTF` version, `v1`: the key and value schemas' JSON as two `writeUTF` strings; `v2`: each as an
  int count of `writeUTF` chunks), or `state/<id>/_stateSchema/default/*` (`v3`, JSON). A field's metadata
  keeps `spark.watermarkDelayMs`, the delay of the watermark its column derives from;
- with a session, the keys operator `id` held after the newest committed batch (`groups`, at most
  `GROUPS`, through Spark's `statestore` data source), and a window key's duration (a held window's end
  minus its start).

Nothing here starts a query. A directory with no `metadata` file is `NotACheckpoint`; a file that cannot be
parsed is `CheckpointUnreadable` naming it.

>>> import io, struct
>>> def utf(text): return struct.pack(">H", len(text)) + text.encode()
>>> key, value = '{"type":"struct","fields":[]}', '{"type":"struct","fields":[]}'
>>> raw = utf("v2") + struct.pack(">i", 1) + utf(key) + struct.pack(">i", 1) + utf(value)
>>> schema_file(raw)
({'type': 'struct', 'fields': []}, {'type': 'struct', 'fields': []})
"""

from __future__ import annotations

import json
import struct
from datetime import datetime
from pathlib import Path
from typing import Any

from frontier_harness.model.vocabulary.event_time import FieldKey, OperatorKey, Origin, Recorded, SourceKey
from frontier_harness.model.vocabulary.streaming import SourceOffsets
from frontier_harness.spark_impl.errors import CheckpointUnreadable, NotACheckpoint
from frontier_harness.spark_impl.event_time.plan_metadata import is_window
from frontier_harness.spark_impl.event_time.state_store import (
    DEFAULT_STORE,
    operators,
    read_or_raise,
    state_rows,
)

GROUPS = 20  # keys of each operator's state named at most
FILE_SOURCE, UPSTREAM, KAFKA, UNKNOWN = "file", "frontier_upstream_events", "kafka", "unknown"


def checkpoint_metadata(session: Any, checkpoint: Path | str) -> dict:
    """What Spark recorded in `checkpoint` (see the module docstring); `session` (or None) reads the
    operators and their state rows through Spark's data sources."""
    checkpoint = Path(checkpoint)
    if not (checkpoint / "metadata").is_file():
        raise NotACheckpoint(checkpoint)
    batch, meta, offsets = _newest_offsets(checkpoint)
    committed = max(_numbered(checkpoint / "commits"), default=None)
    return {
        Recorded.ORIGIN: Origin.CHECKPOINT,
        Recorded.SOURCES: [_source(checkpoint, i, text) for i, text in enumerate(offsets)],
        Recorded.OPERATORS: _operators(session, checkpoint, committed),
        Recorded.WATERMARKS: None,  # Spark journals the watermark's value, not its columns or delays
        Recorded.CONF: dict(meta.get("conf", {})),
        Recorded.WATERMARK_MS: meta.get("batchWatermarkMs", 0) if meta else None,
        Recorded.BATCH: batch,
        Recorded.COMMITTED: committed,
    }


def _numbered(directory: Path) -> list[int]:
    return sorted(int(f.name) for f in directory.iterdir() if f.name.isdigit()) if directory.is_dir() else []


def _newest_offsets(checkpoint: Path) -> tuple[int | None, dict, list[str]]:
    """The newest batch of the offset log, its metadata, and each source's offset text (`-`: none)."""
    batches = _numbered(checkpoint / "offsets")
    if not batches:
        return None, {}, []
    path = checkpoint / "offsets" / str(batches[-1])
    lines = path.read_text().splitlines()
    try:
        meta = json.loads(lines[1])
        if lines[0] == "v2":
            named = json.loads(lines[2])
            return batches[-1], meta, [named[name] for name in sorted(named)]
        if lines[0] != "v1":
            raise ValueError(f"version {lines[0]!r} is neither v1 nor v2")
    except (IndexError, ValueError, TypeError, KeyError) as exc:
        raise CheckpointUnreadable(path, f"not an offset log entry: {exc}") from exc
    return batches[-1], meta, lines[2:]


def _source(checkpoint: Path, index: int, text: Any) -> dict:
    offset = text if isinstance(text, str) else json.dumps(text)
    try:
        shape = json.loads(offset) if offset != "-" else None
    except ValueError:
        shape = None
    found: dict[str, Any] = {SourceKey.KIND: source_kind(shape), SourceKey.OFFSET: offset}
    if found[SourceKey.KIND] == FILE_SOURCE:
        found[SourceKey.FILES] = logged_files(checkpoint / "sources" / str(index))
    return found


def source_kind(offset: Any) -> str:
    """A source's kind read from its logged offset's shape.

    >>> source_kind({"logOffset": 3}), source_kind({"events": {"0": 5}}), source_kind([1])
    ('file', 'kafka', 'unknown')
    """
    if isinstance(offset, dict) and set(offset) == {"logOffset"}:
        return FILE_SOURCE
    if isinstance(offset, dict) and SourceOffsets.FRONTIER in offset:
        return UPSTREAM
    if (
        isinstance(offset, dict)
        and offset
        and all(isinstance(v, dict) and all(str(k).lstrip("-").isdigit() for k in v) for v in offset.values())
    ):
        return KAFKA
    return UNKNOWN


def logged_files(directory: Path) -> list[str]:
    """The paths a file source's log names, in the order it logged them (compacted batches included)."""
    found: list[str] = []
    if not directory.is_dir():
        return found
    entries = sorted(
        (int(f.name.removesuffix(".compact")), f)
        for f in directory.iterdir()
        if f.name.removesuffix(".compact").isdigit()
    )
    newest_compact = max((n for n, f in entries if f.name.endswith(".compact")), default=-1)
    for number, path in entries:
        if number < newest_compact:
            continue  # a compaction holds every batch up to it
        for line in path.read_text().splitlines()[1:]:
            try:
                found.append(json.loads(line)["path"])
            except (ValueError, KeyError, TypeError) as exc:
                raise CheckpointUnreadable(path, f"not a file source log entry: {exc}") from exc
    return found


def _operators(session: Any, checkpoint: Path, committed: int | None) -> list[dict]:
    if session is None or not (checkpoint / "state").is_dir():
        return []
    found = []
    for op in operators(session, checkpoint):
        key, value = state_schema(checkpoint / "state" / str(op.operator_id))
        one_store = op.store_names == (DEFAULT_STORE,)  # a join's four stores are not read
        groups = (
            held_keys(session, checkpoint, op.operator_id, committed)
            if committed is not None and one_store
            else []
        )
        found.append(
            {
                OperatorKey.ID: op.operator_id,
                OperatorKey.NAME: op.name,
                OperatorKey.PARTITIONS: op.partitions,
                OperatorKey.KEY: key,
                OperatorKey.VALUE: value,
                OperatorKey.AGGREGATES: None,
                OperatorKey.WINDOW: _held_window(key, groups),
                OperatorKey.ROWS: None,
                OperatorKey.GROUPS: groups,
            }
        )
    return found


def state_schema(directory: Path) -> tuple[list[dict] | None, list[dict] | None]:
    """An operator's recorded key and value schema as field dicts, or (None, None) when it has no schema
    file this reader knows."""
    v2 = directory / "0" / "_metadata" / "schema"
    v3 = (
        sorted((directory / "_stateSchema" / "default").glob("*"))
        if (directory / "_stateSchema").is_dir()
        else []
    )
    try:
        if v2.is_file():
            key, value = schema_file(v2.read_bytes())
        elif v3:
            families = json.loads(v3[-1].read_text())["stateStoreColFamilySchema"]
            key, value = families[0]["keySchema"], families[0]["valueSchema"]
        else:
            return None, None
    except (ValueError, KeyError, IndexError, TypeError, struct.error) as exc:
        raise CheckpointUnreadable(v2 if v2.is_file() else v3[-1], f"not a state schema file: {exc}") from exc
    return _fields(key), _fields(value)


def schema_file(raw: bytes) -> tuple[Any, Any]:
    """The key and value schemas (Spark's JSON) of a `v1` or `v2` state schema file's bytes."""
    version, at = _utf(raw, 0)
    schemas = []
    for _ in range(2):
        if version == "v1":
            text, at = _utf(raw, at)
        elif version == "v2":
            (chunks,), at = struct.unpack_from(">i", raw, at), at + 4
            text = ""
            for _ in range(chunks):
                chunk, at = _utf(raw, at)
                text += chunk
        else:
            raise ValueError(f"schema version {version!r} is neither v1 nor v2")
        schemas.append(json.loads(text))
    return schemas[0], schemas[1]


def _utf(raw: bytes, at: int) -> tuple[str, int]:
    """One `DataOutputStream.writeUTF` string (a big-endian length, then its bytes) and where it ends."""
    (length,) = struct.unpack_from(">H", raw, at)
    return raw[at + 2 : at + 2 + length].decode("utf-8"), at + 2 + length


def _fields(schema: Any) -> list[dict]:
    return [
        {
            FieldKey.NAME: f["name"],
            FieldKey.TYPE: f["type"],
            FieldKey.NULLABLE: f["nullable"],
            FieldKey.LINEAGE: None,
            FieldKey.DELAY_MS: f.get("metadata", {}).get("spark.watermarkDelayMs"),
        }
        for f in schema["fields"]
    ]


def held_keys(session: Any, checkpoint: Path, operator_id: int, batch: int) -> list[dict]:
    """The keys operator `operator_id`'s state held after `batch` (at most `GROUPS`, sorted), timestamps as
    epoch milliseconds."""
    rows = state_rows(session, checkpoint, batch, operator_id).select("key").limit(GROUPS)
    found = [_plain(row["key"].asDict(recursive=True)) for row in read_or_raise(checkpoint, rows.collect)]
    return sorted(found, key=lambda key: json.dumps(key, sort_keys=True, default=str))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return round(value.timestamp() * 1000)
    return value


def _held_window(key: list[dict] | None, groups: list[dict]) -> list[int | None] | None:
    """`[duration, None, None]` of a window key, from a held window's end minus its start (None when no
    window is held)."""
    names = [f[FieldKey.NAME] for f in key or () if is_window(f[FieldKey.TYPE])]
    for group in groups:
        window = group.get(names[0]) if names else None
        if isinstance(window, dict) and {"start", "end"} <= set(window):
            return [window["end"] - window["start"], None, None]
    return None
