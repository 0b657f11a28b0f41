"""Durable shards on local disk: Parquet parts plus a small versioned manifest per shard.

Layout of a shard directory (a path the caller chooses; `temporary_root()` by default):

    manifest-0000000007.json   the current manifest is the highest version; older ones are kept, so a
                               stale writer's compare-and-set always finds its version taken
    parts/part-<uuid>/         Parquet directories written by Spark; only parts a manifest lists are data

A manifest names the source and shard kind, the row schema, the listed parts and,
per `history_id` key, the shard's `since` and `upper` (Total IntoTime frontiers as
lists; `[]` is closed). One shard holds a batch of independent collections keyed
by `history_id`, so one Parquet write serves a whole batch of histories.

Writes are crash-safe: a part is written first (a crash mid-write leaves an
unlisted part, ignored), then manifest `n + 1` is written to a temporary file,
fsynced and linked into place with `os.link`, which fails if the name exists.
That is the compare-and-set: of two writers that read version `n`, exactly one
creates `n + 1`; the other gets `UpperMismatch`. A directory that is missing,
has files but no readable manifest, or belongs to another source is a typed
`ShardError` naming the path, and nothing in it is touched.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path

import attrs
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from frontier_harness.spark_impl.errors import (
    PartialShard,
    ShardFromAnotherSource,
    ShardMissing,
    UpperMismatch,
)
from frontier_harness.spark_impl.session import spark

FORMAT = "frontier-harness-shard/1"
START = [0]


def temporary_root() -> Path:
    """A fresh temporary directory for shards when the user names none."""
    return Path(tempfile.mkdtemp(prefix="frontier-harness-shards-"))


@attrs.frozen
class Manifest:
    """One version of a shard's metadata."""

    version: int
    source: str
    kind: str
    schema: str
    files: tuple = ()
    since: dict = attrs.field(factory=dict)
    upper: dict = attrs.field(factory=dict)

    def to_json(self) -> str:
        record = {"format": FORMAT, **attrs.asdict(self)}
        record["files"] = list(self.files)
        return json.dumps(record, sort_keys=True)


def _manifest_name(version: int) -> str:
    return f"manifest-{version:010d}.json"


def write_manifest_file(directory: Path, name: str, text: str) -> None:
    """Atomic no-replace write: temporary file, fsync, `os.link` into `name` (fails if it exists), fsync dir."""
    tmp = directory / f".{name}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, directory / name)
    finally:
        tmp.unlink()
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _read_manifest(path: Path) -> Manifest | None:
    names = sorted(p.name for p in path.glob("manifest-*.json"))
    if not names:
        return None
    current = path / names[-1]
    try:
        record = json.loads(current.read_text())
        if record.pop("format") != FORMAT:
            raise ValueError(f"format is not {FORMAT}")
        record["files"] = tuple(record["files"])
        return Manifest(**record)
    except (ValueError, KeyError, TypeError) as exc:
        raise PartialShard(
            path, f"manifest {current.name} is unreadable ({exc}); refusing to touch the shard"
        ) from None


class DurableShard:
    """A handle on one shard directory at one manifest version; writes return a new handle."""

    def __init__(self, path: Path, manifest: Manifest):
        self.path, self.manifest = Path(path), manifest

    @classmethod
    def open(cls, path: os.PathLike | str, source: str, kind: str) -> DurableShard:
        """The shard at `path`; `ShardMissing`, `PartialShard` or `ShardFromAnotherSource` naming the path."""
        path = Path(path)
        if not path.is_dir():
            raise ShardMissing(path, "no such shard directory")
        manifest = _read_manifest(path)
        if manifest is None:
            what = "is empty" if not any(path.iterdir()) else "has files but no manifest (a partial shard)"
            cls_ = ShardMissing if not any(path.iterdir()) else PartialShard
            raise cls_(path, f"directory {what}")
        if (manifest.source, manifest.kind) != (source, kind):
            raise ShardFromAnotherSource(
                path,
                f"written for source {manifest.source!r} kind {manifest.kind!r}, not {source!r} kind {kind!r}",
            )
        return cls(path, manifest)

    @classmethod
    def open_or_create(
        cls, path: os.PathLike | str, source: str, kind: str, schema: T.StructType
    ) -> DurableShard:
        """Opens the shard, or creates it in a missing or empty directory (never in one with files)."""
        path = Path(path)
        if path.is_dir() and any(path.iterdir()):
            return cls.open(path, source, kind)
        path.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(0, source, kind, schema.json())
        write_manifest_file(path, _manifest_name(0), manifest.to_json())
        return cls(path, manifest)

    @property
    def schema(self) -> T.StructType:
        return T.StructType.fromJson(json.loads(self.manifest.schema))

    def since(self, key: int) -> list:
        return list(self.manifest.since.get(str(key), START))

    def upper(self, key: int) -> list:
        return list(self.manifest.upper.get(str(key), START))

    def read(self) -> DataFrame:
        """Every row of every listed part (parts a crash left unlisted are not data)."""
        if not self.manifest.files:
            return spark().createDataFrame([], self.schema)
        return (
            spark()
            .read.schema(self.schema)
            .parquet(*[str(self.path / "parts" / f) for f in self.manifest.files])
        )

    def write_part(self, rows: DataFrame) -> str:
        """Writes `rows` as a new Parquet part; unlisted until a manifest names it. Returns its name."""
        name = f"part-{uuid.uuid4().hex}"
        rows.select(*self.schema.fieldNames()).write.parquet(str(self.path / "parts" / name))
        return name

    def append(
        self, rows: DataFrame | None, expected: Mapping[int, list], new: Mapping[int, list]
    ) -> DurableShard:
        """Compare-and-set append: `rows` added and each key's upper moved from `expected` to `new`."""
        current = self.refresh()
        for key, upper in expected.items():
            if current.upper(key) != list(upper):
                raise UpperMismatch(
                    self.path, f"history {key}: expected upper {list(upper)}, found {current.upper(key)}"
                )
        files = current.manifest.files + ((self.write_part(rows),) if rows is not None else ())
        uppers = {**current.manifest.upper, **{str(k): list(v) for k, v in new.items()}}
        return current._commit(attrs.evolve(current.manifest, files=files, upper=uppers))

    def rewrite(self, rows: DataFrame, since: Mapping[int, list]) -> DurableShard:
        """Compaction: `rows` replace every part and sinces advance; compare-and-set on the manifest version."""
        name = self.write_part(rows)
        sinces = {**self.manifest.since, **{str(k): list(v) for k, v in since.items()}}
        return self._commit(attrs.evolve(self.manifest, files=(name,), since=sinces))

    def refresh(self) -> DurableShard:
        """The same shard at its newest manifest."""
        return DurableShard.open(self.path, self.manifest.source, self.manifest.kind)

    def _commit(self, manifest: Manifest) -> DurableShard:
        manifest = attrs.evolve(manifest, version=self.manifest.version + 1)
        try:
            write_manifest_file(self.path, _manifest_name(manifest.version), manifest.to_json())
        except FileExistsError:
            raise UpperMismatch(
                self.path, f"manifest version {manifest.version} was written by another writer"
            ) from None
        return DurableShard(self.path, manifest)
