"""Durable Parquet shards: typed errors for bad directories, compare-and-set appends, atomic manifests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import frontier_harness.spark_impl.ingestion.durable_shard as ds
from frontier_harness.spark_impl.errors import (
    PartialShard,
    ShardError,
    ShardFromAnotherSource,
    ShardMissing,
    UpperMismatch,
)
from frontier_harness.spark_impl.ingestion.durable_ingestion import DATA_SCHEMA
from frontier_harness.spark_impl.ingestion.durable_shard import DurableShard


def snapshot(path: Path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def shard(path: Path, source: str = "src") -> DurableShard:
    return DurableShard.open_or_create(path, source, "data", DATA_SCHEMA)


def test_missing_directory_is_a_typed_error_naming_the_path(tmp_path):
    with pytest.raises(ShardMissing, match=str(tmp_path / "nope")):
        DurableShard.open(tmp_path / "nope", "src", "data")


def test_partial_directory_is_refused_and_left_untouched(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "part-x").write_bytes(b"PAR1 torn")
    before = snapshot(tmp_path)
    with pytest.raises(PartialShard, match=str(tmp_path)):
        shard(tmp_path)
    assert snapshot(tmp_path) == before


def test_shard_of_another_source_is_refused_and_left_untouched(tmp_path):
    shard(tmp_path, "kafka://a").append(None, {0: [0]}, {0: [3]})
    before = snapshot(tmp_path)
    with pytest.raises(ShardFromAnotherSource, match="'kafka://a'"):
        shard(tmp_path, "kafka://b")
    with pytest.raises(ShardFromAnotherSource):
        DurableShard.open(tmp_path, "kafka://a", "remap")
    assert snapshot(tmp_path) == before


def test_torn_manifest_is_a_partial_shard(tmp_path):
    shard(tmp_path)
    (tmp_path / "manifest-0000000001.json").write_text('{"format": "frontier-har')
    with pytest.raises(PartialShard, match="manifest-0000000001.json"):
        DurableShard.open(tmp_path, "src", "data")


def test_append_is_compare_and_set(tmp_path):
    first = shard(tmp_path)
    second = DurableShard.open(tmp_path, "src", "data")
    moved = first.append(None, {0: [0]}, {0: [2]})
    assert moved.upper(0) == [2] and DurableShard.open(tmp_path, "src", "data").upper(0) == [2]
    with pytest.raises(UpperMismatch, match="expected upper \\[0\\], found \\[2\\]"):
        second.append(None, {0: [0]}, {0: [5]})


def test_two_writers_at_one_version_cannot_both_commit(tmp_path):
    a = shard(tmp_path)
    b = DurableShard.open(tmp_path, "src", "data")
    a._commit(a.manifest)
    with pytest.raises(UpperMismatch, match="version 1"):
        b._commit(b.manifest)


class Killed(BaseException):
    """The process died here."""


def _dying_open(after_chars: int):
    """`open` whose handles write `after_chars` characters and then kill the process."""

    def fake(path, mode="r", *args, **kwargs):
        handle = open(path, mode, *args, **kwargs)  # noqa: SIM115 - returned to the caller, who closes it
        if "w" in mode:
            real_write = handle.write

            def write(text):
                real_write(text[:after_chars])
                handle.flush()
                raise Killed()

            handle.write = write
        return handle

    return fake


def non_atomic_manifest(directory: Path, name: str, text: str) -> None:
    """PLANTED BUG: the manifest written in place, no temporary file, no rename."""
    with getattr(ds, "open", open)(directory / name, "w") as handle:
        handle.write(text)


def survives_crash_mid_manifest_write(path: Path, monkeypatch) -> bool:
    """One append, then a crash halfway through the next manifest write: the shard must reopen as it was."""
    s = shard(path).append(None, {0: [0]}, {0: [2]})
    monkeypatch.setattr(ds, "open", _dying_open(20), raising=False)
    with pytest.raises(Killed):
        s.append(None, {0: [2]}, {0: [4]})
    monkeypatch.delattr(ds, "open")
    try:
        return DurableShard.open(path, "src", "data").upper(0) == [2]
    except ShardError:
        return False


def test_crash_mid_manifest_write_keeps_the_previous_version(tmp_path, monkeypatch):
    assert survives_crash_mid_manifest_write(tmp_path, monkeypatch)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("manifest-0000000002")]


def test_planted_non_atomic_manifest_write_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(ds, "write_manifest_file", non_atomic_manifest)
    assert not survives_crash_mid_manifest_write(tmp_path, monkeypatch)


@pytest.mark.spark
def test_parts_round_trip_and_unlisted_parts_are_not_data(tmp_path):
    from frontier_harness.spark_impl.session import spark

    s = shard(tmp_path)
    rows = spark().createDataFrame([(0, "a", 1, 1), (1, "b", 2, 1)], DATA_SCHEMA)
    s = s.append(rows, {0: [0], 1: [0]}, {0: [2], 1: [3]})
    s.write_part(spark().createDataFrame([(0, "torn", 1, 1)], DATA_SCHEMA))  # a crash before the manifest
    reopened = DurableShard.open(tmp_path, "src", "data")
    assert sorted(tuple(r) for r in reopened.read().collect()) == [(0, "a", 1, 1), (1, "b", 2, 1)]
    assert (reopened.upper(0), reopened.upper(1), reopened.since(0)) == ([2], [3], [0])
    compacted = reopened.rewrite(rows.where("history_id = 0"), {0: [1]})
    assert compacted.since(0) == [1] and len(compacted.manifest.files) == 1
    assert os.path.isdir(tmp_path / "parts")
