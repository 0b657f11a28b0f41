"""`validate-checkpoint` on real checkpoints of stateful queries (PySpark 4.3), honest and edited.

A windowed count with a watermark over `rate-micro-batch`, run as four `availableNow` runs (each
a restart; `tests/stateful_checkpoints.py`), with the HDFS-backed and with the RocksDB provider.
The honest checkpoints exit 0; each edit exits 1 naming the law: the newest watermark set below
the one before, the newest batch timestamp moved back a minute, the shuffle partitions changed in
the newest batch, a committed batch's delta (HDFS) or zip (RocksDB) deleted.
"""

from __future__ import annotations

import json

import pytest

from frontier_harness.properties.cli.main import main as cli
from frontier_harness.properties.engine import counterexample
from tests.stateful_checkpoints import copy

pytestmark = pytest.mark.spark
NEWEST = 4  # the four runs plan batches 0-4


def _validate(root, capsys, *more: str) -> tuple[int, str]:
    code = cli(["validate-checkpoint", str(root), "--out", str(root.parent / "cx"), *more])
    return code, " ".join(capsys.readouterr().out.split())


def _edit_metadata(root, batch: int, edit) -> None:
    path = root / "offsets" / str(batch)
    lines = path.read_text().splitlines()
    meta = json.loads(lines[1])
    edit(meta)
    path.write_text("\n".join([lines[0], json.dumps(meta), *lines[2:]]))
    (path.parent / f".{batch}.crc").unlink(missing_ok=True)


def _watermark_back(root):
    before = json.loads((root / "offsets" / str(NEWEST - 1)).read_text().splitlines()[1])["batchWatermarkMs"]
    _edit_metadata(root, NEWEST, lambda m: m.update(batchWatermarkMs=before - 1))
    return "watermark monotone"


def _clock_back(root):
    _edit_metadata(root, NEWEST, lambda m: m.update(batchTimestampMs=m["batchTimestampMs"] - 60_000))
    return "timestamp monotone"


def _partitions_changed(root):
    _edit_metadata(root, NEWEST, lambda m: m["conf"].update({"spark.sql.shuffle.partitions": "3"}))
    return "pinned setting"


def _version_deleted(root):
    partition = root / "state" / "0" / "1"
    [newest] = [f for f in partition.iterdir() if f.name.startswith(f"{NEWEST + 1}.")]
    newest.unlink()
    return "state version made"


EDITS = [_watermark_back, _clock_back, _partitions_changed, _version_deleted]
KINDS = ["hdfs", "rocksdb"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_honest_checkpoint_holds_every_law_that_applies(kind, spark_session, tmp_path, capsys):
    root = copy(spark_session, kind, tmp_path / "ck")
    code, out = _validate(root, capsys)
    assert code == 0, out
    for law, count in (
        ("watermark monotone", "5 batch watermarks"),
        ("state rebuildable", "2 state partitions"),
    ):
        assert f"│ {law} │ held │ {count} │" in out, out
    assert "│ sink once │ not applicable │ no sink entries │" in out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("edit", EDITS, ids=[e.__name__.strip("_") for e in EDITS])
def test_each_edit_is_exit_1_naming_the_law(kind, edit, spark_session, tmp_path, capsys):
    root = copy(spark_session, kind, tmp_path / "ck")
    law = edit(root)
    code, out = _validate(root, capsys)
    assert code == 1 and f"│ {law} │ broken │" in out, out
    [written] = (tmp_path / "cx").glob("*.itf.json")
    assert counterexample.read(written).message.startswith(law)
    assert cli(["replay", str(written)]) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_newest_version_or_more_pinned_partitions_say_restart_will_fail(
    kind, spark_session, tmp_path, capsys
):
    root = copy(spark_session, kind, tmp_path / "ck")
    _version_deleted(root)
    assert (
        f"restart will fail: state for batch {NEWEST}, partition 1 is missing" in _validate(root, capsys)[1]
    )
    root = copy(spark_session, kind, tmp_path / "ck2")
    _partitions_changed(root)
    assert (
        f"restart will fail: state for batch {NEWEST}, partition 2 is missing" in _validate(root, capsys)[1]
    )


@pytest.mark.parametrize(
    "kind,name,keep", [("hdfs", "state/0/0/3.delta", 30), ("rocksdb", "state/0/1/3.zip", 100)]
)
def test_a_truncated_state_file_is_exit_2_naming_it(kind, name, keep, spark_session, tmp_path, capsys):
    root = copy(spark_session, kind, tmp_path / "ck")
    (root / name).write_bytes((root / name).read_bytes()[:keep])
    code, out = _validate(root, capsys)
    assert code == 2 and f"{name}: truncated" in out, out


def test_with_state_the_rows_are_read_and_no_window_outlives_the_watermark(spark_session, tmp_path, capsys):
    root = copy(spark_session, "hdfs", tmp_path / "ck")
    code, out = _validate(root, capsys, "--state")
    assert code == 0, out
    assert "│ state evicted │ held │" in out and "state rows (read with Spark)" in out


def test_a_deleted_commit_prints_a_short_stretch_of_the_log(spark_session, tmp_path, capsys):
    root = copy(spark_session, "hdfs", tmp_path / "ck")
    (root / "commits" / "1").unlink()
    code, out = _validate(root, capsys)
    assert code == 1, out
    [written] = (tmp_path / "cx").glob("*.itf.json")
    shown = counterexample.read(written)
    assert shown.message.startswith("one uncommitted batch: batch 1 was never committed, yet batch 2")
    # retain, batch 0 (a log starting later would break the purge law), offsets 1, offsets 2
    assert [a.name for a in shown.history.actions] == ["retain", "offsets", "commit", "offsets", "offsets"]
