"""`validate-checkpoint` on real checkpoints of a file source -> Parquet file sink query, honest and damaged.

One module fixture runs the query once (two `availableNow` runs, the second a restart from
the checkpoint, six micro-batches, `compactInterval=3` so `2.compact` and `5.compact`
exist) and a `rate-micro-batch` query; each test copies the checkpoint and damages it as
a user found real ones damaged. Every damage must exit 1 naming the batch, the file and
the law; honest states (a crash between sink and commit, an orphan data file) exit 0.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.streaming.checkpoint_log.reader import read_checkpoint
from frontier_harness.properties.cli.main import main as cli
from frontier_harness.properties.engine import counterexample
from tests.conftest import live_session

pytestmark = pytest.mark.spark
COMPACT_INTERVAL = "spark.sql.streaming.fileSink.log.compactInterval"
RUNS = (3, 3)  # input files per run: one micro-batch each (maxFilesPerTrigger=1)


def _file_query(spark, root: Path) -> None:
    source = root / "in"
    source.mkdir(parents=True)
    written = 0
    for files in RUNS:
        for _ in range(files):
            (source / f"f{written}.json").write_text(json.dumps({"k": f"r{written}", "v": written}))
            written += 1
        query = (
            spark.readStream.schema("k string, v long")
            .option("maxFilesPerTrigger", 1)
            .json(str(source))
            .writeStream.format("parquet")
            .option("path", str(root / "sink"))
            .option("checkpointLocation", str(root / "ck"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()


def _rate_micro_batch_query(spark, root: Path) -> None:
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 5)
        .load()
        .writeStream.format("parquet")
        .option("path", str(root / "sink"))
        .option("checkpointLocation", str(root / "ck"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 120
        while not (root / "ck" / "commits" / "2").exists():
            assert query.isActive and time.monotonic() < deadline, query.exception()
            time.sleep(0.1)
    finally:
        query.stop()


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    spark_session = live_session()
    root = tmp_path_factory.mktemp("checkpoints")
    spark_session.conf.set(COMPACT_INTERVAL, "3")
    try:
        _file_query(spark_session, root / "files")
    finally:
        spark_session.conf.unset(COMPACT_INTERVAL)
    _rate_micro_batch_query(spark_session, root / "rate")
    return {"files": root / "files", "rate": root / "rate"}


def _copy(made: dict, tmp_path: Path, which: str = "files") -> Path:
    return Path(shutil.copytree(made[which], tmp_path / which, ignore=shutil.ignore_patterns("in")))


def _validate(root: Path, capsys, *more: str) -> tuple[int, str]:
    args = ["validate-checkpoint", str(root / "ck"), "--sink", str(root / "sink"), "--verbose", *more]
    code = cli([*args, "--out", str(root / "cx")])
    return code, " ".join(capsys.readouterr().out.split())


def _line(path: Path, number: int) -> str:
    return path.read_text().splitlines()[number - 1]


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text().rstrip("\n") + "\n" + line)


def _drop_line(path: Path, number: int) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[: number - 1] + lines[number:]))


def _name(path: Path, number: int) -> str:
    return json.loads(_line(path, number))["path"].rsplit("/", 1)[1]


def test_the_honest_checkpoint_holds(made, tmp_path, capsys):
    root = _copy(made, tmp_path)
    log = root / "sink" / "_spark_metadata"
    assert {"2.compact", "4", "5.compact"} <= {f.name for f in log.iterdir()}
    code, out = _validate(root, capsys)
    assert code == 0, out
    rows = " ".join(out.split())
    assert "every law that applies held" in out and "streams read: 0 (total)" in rows
    for law, count in (
        ("commit after offsets", "6 commits"),
        ("sink once", "6 sink entries"),
        ("file once", "6 data files listed"),
    ):
        assert f"│ {law} │ held │ {count} │" in rows, rows


def test_a_crash_between_sink_and_commit_and_an_orphan_data_file_hold(made, tmp_path, capsys):
    """What a SIGKILL after the sink's entry and a write that never committed leave."""
    root = _copy(made, tmp_path)
    for name in ("5", ".5.crc"):
        (root / "ck" / "commits" / name).unlink()
    data = next((root / "sink").glob("part-*.parquet"))
    shutil.copy(data, data.with_name("part-00000-orphan-c000.snappy.parquet"))
    code, out = _validate(root, capsys)
    assert code == 0, out


def _dup_entry(log: Path) -> str:
    _append(log / "1", _line(log / "1", 2))
    return f"file once: _spark_metadata/1 lists file {_name(log / '1', 2)} 2 times"


def _under_two_batches(log: Path) -> str:
    _append(log / "4", _line(log / "0", 2))
    return f"file once: file {_name(log / '0', 2)} is listed by batch 0 and again by batch 4"


def _middle_deleted(log: Path) -> str:
    (log / "3").unlink()
    return "sink no gap: the sink's log has no entry for batch 3: _spark_metadata/3 or 3.compact"


def _two_deleted(log: Path) -> str:
    (log / "3").unlink()
    (log / "4").unlink()
    return "sink no gap: the sink's log has no entry for batches 3 to 4"


def _compact_deleted(log: Path) -> str:
    (log / "2.compact").unlink()
    return "sink no gap: the sink's log has no entry for batch 2: _spark_metadata/2 or 2.compact"


def _compaction_drops(log: Path) -> str:
    name = _name(log / "5.compact", 3)
    _drop_line(log / "5.compact", 3)
    return f"compaction complete: 5.compact does not list file {name}"


def _prefix_deleted(log: Path) -> str:
    (log / "0").unlink()
    (log / "1").unlink()
    return "sink purge: the sink's log starts at batch 2"


def _newest_compact_deleted(log: Path) -> str:
    (log / "5.compact").unlink()
    return "sink before commit: batch 5 is committed but not in the sink's log"


DAMAGES = [
    _dup_entry,
    _under_two_batches,
    _middle_deleted,
    _two_deleted,
    _compact_deleted,
    _compaction_drops,
    _prefix_deleted,
    _newest_compact_deleted,
]


@pytest.mark.parametrize("damage", DAMAGES, ids=[d.__name__.strip("_") for d in DAMAGES])
def test_each_damage_is_exit_1_naming_batch_file_and_law(damage, made, tmp_path, capsys):
    root = _copy(made, tmp_path)
    named = damage(root / "sink" / "_spark_metadata")
    code, out = _validate(root, capsys)
    assert code == 1 and named in out, out


def test_the_table_is_the_shortest_prefix_and_replays(made, tmp_path, capsys):
    root = _copy(made, tmp_path)
    _dup_entry(root / "sink" / "_spark_metadata")
    assert _validate(root, capsys)[0] == 1
    [written] = (root / "cx").glob("*.itf.json")
    shown = counterexample.read(written).history.actions
    # retain, file_sink, batch 0 (offsets, sink, commit), batch 1's offsets and its sink entry
    assert [a.name for a in shown] == ["retain", "file_sink", "offsets", "sink", "commit", "offsets", "sink"]
    assert cli(["replay", str(written)]) == 1


def test_a_deleted_offsets_entry_is_exit_1(made, tmp_path, capsys):
    """Batch 4's sink entry shows the gap first; the gap itself is among the laws broken."""
    root = _copy(made, tmp_path)
    (root / "ck" / "offsets" / "4").unlink()
    code, out = _validate(root, capsys)
    assert code == 1 and "sink after offsets: the sink holds batch 4, which has no offsets" in out, out
    laws = {b.law for b in check_log(read_checkpoint(root / "ck", root / "sink"))}
    assert "offsets no gap" in laws


UNPARSABLE = [
    (
        "5.compact",
        lambda text: text + "\n" + text.splitlines()[1][:40],
        "5.compact line 8: a file entry is not",
    ),
    ("4", lambda text: "v1\n\n", "_spark_metadata/4 line 2: a file entry is not JSON"),
    ("3", lambda text: "", "_spark_metadata/3 line 1: expected a version line v1, found an empty file"),
    ("1", lambda text: text.replace('"add"', '"move"'), "_spark_metadata/1 line 2: file entry action 'move'"),
]


@pytest.mark.parametrize("name,edit,named", UNPARSABLE, ids=[u[0] for u in UNPARSABLE])
def test_an_unparsable_sink_entry_is_exit_2_naming_file_and_line(name, edit, named, made, tmp_path, capsys):
    root = _copy(made, tmp_path)
    path = root / "sink" / "_spark_metadata" / name
    path.write_text(edit(path.read_text()))
    code, out = _validate(root, capsys)
    assert code == 2 and named in out, out


def test_a_third_party_sources_offsets_are_named_unchecked(made, tmp_path, capsys):
    root = _copy(made, tmp_path)
    for path in (root / "ck" / "offsets").glob("[0-9]*"):
        lines = path.read_text().splitlines()
        path.write_text("\n".join([*lines[:2], json.dumps({"cursor": f"c-{path.name}"})]))
    code, out = _validate(root, capsys)
    assert code == 0 and "0 (unchecked: offsets in no shape this reader knows" in out, out


def test_a_rate_micro_batch_checkpoint_holds(made, tmp_path, capsys):
    root = _copy(made, tmp_path, "rate")
    code, out = _validate(root, capsys)
    assert code == 0 and "0 (product(total,total))" in out, out
