"""Reads a checkpoint's `state/` directory (files only, no Spark) into `state` and `state_operator` actions.

Measured on what PySpark 4.3 writes (`tests/test_checkpoint_state.py`): `state/<operator>/`
holds `_metadata/metadata` (`v1`, then `{"operatorInfo": {"operatorName": ...},
"stateStoreInfo": [{"storeName", "numPartitions"}, ...]}`) and one directory per partition,
`state/<operator>/<partition>/`; a store other than `default` (a join's four) is a
directory inside the partition's. Store version `V` is the state after batch `V - 1`:

- the HDFS-backed provider writes `V.delta` for every version and, in its maintenance,
  `V.snapshot` now and then: version `V` is rebuilt from the newest snapshot at or below
  it (or from nothing, version 0) and the delta of every version after that;
- the RocksDB provider writes `V.zip` (the store's metadata, whose `sstFiles` name files
  kept once in the partition's `SSTs/`) for every version, or, with changelog
  checkpointing, `V.changelog` for every version and a zip now and then: the same rule
  with zips as snapshots and changelogs as deltas. Under checkpoint format v2 the names
  are `V_<id>.zip` and `V_<id>.changelog`.

So a partition is read as the versions whose own file is present (`versions`: deltas,
changelogs, or zips when the operator has no changelog), the versions with a full copy
(`bases`: snapshots or zips), and the SST files a zip names that are absent (`missing`).
A delta, snapshot or changelog compressed with LZ4 (Spark's default codec) is a stream of
`LZ4Block` frames closed by an empty one: a file whose frames stop short is truncated.
A zip that cannot be opened, or one whose `metadata` cannot be read, is truncated too;
both are `CheckpointFormatError` (exit 2) naming the file. Only the files of the newest
`minBatchesToRetain` versions are opened (those Spark keeps, and a restart reads): a
checkpoint of a long-running query holds more. An operator of a provider this
reader does not know is one `state_operator {operator, unchecked}`: listed as unchecked.

>>> _version_of("12.delta"), _version_of("3_4f2a-9c.zip"), _version_of(".3.delta.crc")
((12, 'delta'), (3, 'zip'), None)
"""

from __future__ import annotations

import json
import os
import re
import struct
import zipfile
from pathlib import Path
from typing import Any

from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.engine.errors import CheckpointFormatError
from frontier_harness.properties.engine.history import Action

PROVIDER = "spark.sql.streaming.stateStore.providerClass"
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
DEFAULT_STORE = "default"
_NAME = re.compile(r"^(\d+)(?:_[0-9A-Za-z-]+)?\.(delta|snapshot|zip|changelog)$")
_LZ4 = b"LZ4Block"
_LZ4_HEADER = struct.Struct("<8sBiii")  # magic, token, compressed length, original length, checksum
_NOT_STORES = ("SSTs", "_metadata")


def state_actions(checkpoint: Path, provider: str | None, checked: int = 100) -> list[Action]:
    """Per operator: a `state` action per partition and store, then its `state_operator` action; the
    contents of the newest `checked` versions' files (Spark's `minBatchesToRetain`) are checked."""
    state = checkpoint / "state"
    actions: list[Action] = []
    for operator, directory in _numbered(state):
        if provider not in (HDFS, ROCKSDB):
            reason = (
                f"state store provider {provider or '(none in the offset log)'} is not one this reader knows"
            )
            actions.append(
                Action(LogAction.STATE_OPERATOR, {LogArg.OPERATOR: operator, LogArg.UNCHECKED: reason})
            )
            continue
        stores = [
            (partition, store, path)
            for partition, partition_dir in _numbered(directory)
            for store, path in _stores(partition_dir)
        ]
        names = {path: os.listdir(path) for _, _, path in stores}
        changelog = any(n.endswith(".changelog") for found in names.values() for n in found)
        kind = ("changelog" if changelog else "zip") if provider == ROCKSDB else "delta"
        actions += [_partition(operator, p, s, path, names[path], kind, checked) for p, s, path in stores]
        name, partitions = _operator_metadata(directory)
        args: dict[str, Any] = {LogArg.OPERATOR: operator, LogArg.NAME: name}
        actions.append(
            Action(LogAction.STATE_OPERATOR, args | ({LogArg.PARTITIONS: partitions} if partitions else {}))
        )
    return actions


def _numbered(directory: Path) -> list[tuple[int, Path]]:
    if not directory.is_dir():
        return []
    with os.scandir(directory) as entries:
        return sorted((int(e.name), Path(e.path)) for e in entries if e.name.isdigit() and e.is_dir())


def _stores(partition: Path) -> list[tuple[str, Path]]:
    """The partition's stores: `default` in the partition's directory, any other in a directory of its name."""
    with os.scandir(partition) as entries:
        named = sorted((e.name, Path(e.path)) for e in entries if e.name not in _NOT_STORES and e.is_dir())
    return named or [(DEFAULT_STORE, partition)]


def _version_of(name: str) -> tuple[int, str] | None:
    found = _NAME.match(name)
    return (int(found.group(1)), found.group(2)) if found else None


def _partition(
    operator: int, partition: int, store: str, directory: Path, names: list[str], kind: str, checked: int
) -> Action:
    files: dict[str, set[int]] = {"delta": set(), "snapshot": set(), "zip": set(), "changelog": set()}
    found = sorted(v + (n,) for n in names if (v := _version_of(n)) is not None)
    newest = max((version for version, _, _ in found), default=0)
    missing: list[list] = []
    for version, suffix, name in found:
        files[suffix].add(version)
        if version <= newest - checked:
            continue  # older than Spark keeps: not read
        if suffix == "zip":
            missing += [[version, f"SSTs/{sst}"] for sst in _absent_ssts(directory / name)]
        else:
            _check_lz4(directory / name)
    bases = files["snapshot"] if kind == "delta" else files["zip"]
    args: dict[str, Any] = {
        LogArg.OPERATOR: operator,
        LogArg.PARTITION: partition,
        LogArg.STORE: store,
        LogArg.FILE_KIND: kind,
        LogArg.VERSIONS: sorted(files[kind]),
        LogArg.BASES: sorted(bases),
    }
    return Action(LogAction.STATE, args | ({LogArg.MISSING: missing} if missing else {}))


def _absent_ssts(path: Path) -> list[str]:
    """The SST files a RocksDB zip's `metadata` names that its partition's `SSTs/` lacks."""
    try:
        with zipfile.ZipFile(path) as archive:
            lines = archive.read("metadata").decode().splitlines()
        metadata = json.loads(lines[1])
        names = [f["dfsSstFileName"] for f in metadata.get("sstFiles", [])]
    except (zipfile.BadZipFile, KeyError, IndexError, ValueError, TypeError, OSError) as exc:
        raise CheckpointFormatError(path, None, f"truncated or not a RocksDB state zip: {exc}") from exc
    return [name for name in names if not (path.parent / "SSTs" / name).is_file()]


def _check_lz4(path: Path) -> None:
    """An LZ4-compressed state file must end with its empty closing frame, right at its end."""
    data = path.read_bytes()
    if not data.startswith(_LZ4):
        return  # another codec: its contents are not checked here
    at = 0
    while at + _LZ4_HEADER.size <= len(data):
        magic, _, compressed, original, _ = _LZ4_HEADER.unpack_from(data, at)
        if magic != _LZ4:
            break
        at += _LZ4_HEADER.size + compressed
        if compressed == 0 and original == 0:
            if at == len(data):
                return
            break
    raise CheckpointFormatError(path, None, "truncated: its LZ4 frames stop before the closing frame")


def _operator_metadata(directory: Path) -> tuple[str | None, int | None]:
    """The operator's name and partition count from `_metadata/metadata` (v1), or (None, None)."""
    path = directory / "_metadata" / "metadata"
    if not path.is_file():
        return None, None
    lines = path.read_text().splitlines()
    try:
        meta = json.loads(lines[1])
        name = meta["operatorInfo"]["operatorName"]
        partitions = max(info["numPartitions"] for info in meta["stateStoreInfo"])
    except (IndexError, KeyError, TypeError, ValueError) as exc:
        raise CheckpointFormatError(path, 2, f"not an operator's metadata: {exc}") from exc
    return name, partitions
