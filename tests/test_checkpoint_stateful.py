"""`validate-checkpoint` on real checkpoints of stateful queries (PySpark 4.3), honest and edited.

A windowed count with a watermark over `rate-micro-batch`, run as four `availableNow` runs (each
a restart; `tests/stateful_checkpoints.py`), with the HDFS-backed and with the RocksDB provider.
The honest checkpoints exit 2 without `--state` (the state's rows not read: `state evicted` not run)
and 0 with it; each edit exits 1 naming the law: the newest watermark set below
the one before, the newest batch timestamp moved back a minute, the shuffle partitions changed in
the newest batch, a committed batch's delta (HDFS) or zip (RocksDB) deleted.
"""

from __future__ import annotations

import json
import re

import pytest

from frontier_harness.properties.cli.main import main as cli
from frontier_harness.properties.engine import counterexample
from tests.stateful_checkpoints import copy, run_query

pytestmark = pytest.mark.spark
NEWEST = 4  # the four runs plan batches 0-4


def _validate(root, capsys, *more: str) -> tuple[int, str]:
    """The exit and the output, words joined by one space, with every law's row (`--verbose`)."""
    code, lines = _answer(root, capsys, "--verbose", *more)
    return code, " ".join(" ".join(lines).split())


def _answer(root, capsys, *more: str) -> tuple[int, list[str]]:
    code = cli(["validate-checkpoint", str(root), "--out", str(root.parent / "cx"), *more])
    return code, capsys.readouterr().out.splitlines()


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
def test_the_honest_checkpoint_holds_every_law_it_checks_and_without_state_says_what_it_did_not(
    kind, spark_session, tmp_path, capsys
):
    """Without `--state` the state's rows are not read: `state evicted` is "not run (pass --state)", never
    "not applicable" or "held", and the exit is 2 (a law that applies was not checked), not 0."""
    root = copy(spark_session, kind, tmp_path / "ck")
    code, out = _validate(root, capsys)
    assert code == 2, out
    for law, count in (
        ("watermark monotone", "5 batch watermarks"),
        ("state rebuildable", "2 state partitions"),
    ):
        assert f"│ {law} │ held │ {count} │" in out, out
    assert "│ sink once │ not applicable │ no sink entries │" in out
    assert "│ state evicted │ not run (pass --state) │" in out, out
    assert "not run: state evicted: pass --state (the checkpoint holds state)" in out


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


@pytest.mark.parametrize("kind", ["hdfs", "dedup_on_event_time"])
def test_with_state_the_rows_are_read_and_no_entry_outlives_the_watermark(
    kind, spark_session, tmp_path, capsys
):
    """The windowed count's entries are bounded by their window's end, a `dropDuplicates` on the event-time
    column's by that column (the key field Spark marks with the watermark's delay): one reader of bounds
    (`state_store.bound_ms`), the stateful suite's too. Each store's rows after each retained batch carry
    a bound, so `state evicted` rests on them (main's reader gave the deduplication's none: "not
    applicable")."""
    root = copy(spark_session, kind, tmp_path / "ck")
    code, out = _validate(root, capsys, "--state")
    assert code == 0, out
    assert out.startswith("restart will work: every law that applies held"), out
    assert "state rows (read with Spark)" in out
    assert re.search(r"│ state evicted │ held │ [1-9][0-9]* stores' rows after a batch with a window", out), (
        out
    )


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


def test_a_lost_state_file_gets_the_restart_answer_within_the_first_three_lines(
    spark_session, tmp_path, capsys
):
    """The answer first: the restart line, then each broken law in a sentence naming its file; the law
    table and the log only under `--verbose`."""
    root = copy(spark_session, "hdfs", tmp_path / "ck")
    _version_deleted(root)
    code, lines = _answer(root, capsys)
    assert code == 1, lines
    assert any(
        line.startswith(f"restart will fail: state for batch {NEWEST}, partition 1 is missing")
        for line in lines[:3]
    ), lines
    assert f"broken: state version made: state/0/1/{NEWEST + 1}.delta is missing" in lines[1], lines
    assert not any("│" in line for line in lines), lines  # no table without --verbose


def test_a_commit_without_its_offsets_gets_the_restart_line_spark_refuses_with(
    spark_session, tmp_path, capsys
):
    """Measured on PySpark 4.3: a restart plans the batch after the newest offsets; when its commit is
    there already Spark refuses (`CONCURRENT_STREAM_LOG_UPDATE`). A commit without offsets below the newest
    is never read again: the restart runs, and the law is broken with no restart line."""
    root = copy(spark_session, "hdfs", tmp_path / "ck")
    (root / "offsets" / str(NEWEST)).unlink()
    code, lines = _answer(root, capsys)
    said = f"restart will fail: batch {NEWEST} is committed but offsets/{NEWEST} is missing"
    assert code == 1 and lines[0].startswith(said), lines
    assert f"broken: commit after offsets (commits/{NEWEST}): batch {NEWEST} is committed" in lines[1], lines
    with pytest.raises(Exception, match="CONCURRENT_STREAM_LOG_UPDATE"):
        run_query(spark_session, root, runs=1)
    root = copy(spark_session, "hdfs", tmp_path / "ck2")
    (root / "offsets" / "2").unlink()
    code, lines = _answer(root, capsys)
    assert code == 1 and lines[0].startswith("restart not safe: this checkpoint breaks"), lines
    assert not any(line.startswith("restart will fail") for line in lines), lines
    run_query(spark_session, root, runs=1)
    assert (root / "commits" / str(NEWEST + 1)).exists()
