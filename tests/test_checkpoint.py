"""Reading Structured Streaming checkpoints, their laws, and `validate-checkpoint` on real and edited ones."""

from __future__ import annotations

import json
import time
from pathlib import Path

import attrs
import pytest

from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main as cli
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

META = '{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}'


def write_checkpoint(root: Path, offsets: dict, commits=(), sink: dict | None = None) -> Path:
    """A checkpoint as Spark lays it out: `offsets` maps batch -> source lines (JSON text or `-`)."""
    (root / "offsets").mkdir(parents=True)
    (root / "commits").mkdir()
    (root / "metadata").write_text('{"id":"0f6c2b1e"}\n')
    for batch, sources in offsets.items():
        (root / "offsets" / str(batch)).write_text("\n".join(["v1", META, *sources]))
    for batch in commits:
        (root / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    for name, files in (sink or {}).items():
        log = root / "sink" / "_spark_metadata"
        log.mkdir(parents=True, exist_ok=True)
        entries = [json.dumps({"path": f"file:///sink/{f}", "size": 1, "action": "add"}) for f in files]
        (log / name).write_text("\n".join(["v1", *entries]))
    return root


def kafka(**partitions: dict) -> str:
    return json.dumps(
        {topic: {str(p): o for p, o in offsets.items()} for topic, offsets in partitions.items()}
    )


def validate(root: Path, tmp_path: Path, sink: bool = False, *more: str) -> int:
    args = ["validate-checkpoint", str(root), "--out", str(tmp_path / "cx"), "--verbose", *more]
    return cli(args + (["--sink", str(root / "sink")] if sink else []))


def test_kafka_offsets_of_two_topics_and_a_purged_log_hold(tmp_path):
    offsets = {
        100 + b: [kafka(orders={0: 5 + b, 1: 2 * b}, payments={0: b}), "-" if b == 0 else "7"]
        for b in range(3)
    }
    root = write_checkpoint(tmp_path / "ck", offsets, commits=[100, 101])
    assert validate(root, tmp_path, False, "--min-batches-to-retain", "2") == 0
    assert validate(root, tmp_path) == 1  # Spark keeps the last 100 batches by default


def test_v2_offset_logs_name_their_sources(tmp_path):
    from frontier_harness.properties.checks.streaming.checkpoint_log.reader import read_checkpoint

    root = write_checkpoint(tmp_path / "ck", {}, commits=[0])
    (root / "offsets" / "0").write_text("\n".join(["v2", META, json.dumps({"clicks": '{"logOffset":3}'})]))
    log = read_checkpoint(root)
    assert [(a.name, a.args.get("source")) for a in log.actions[1:]] == [
        ("offsets", "clicks"),
        ("commit", None),
    ]
    assert validate(root, tmp_path) == 0


BROKEN = [
    ("monotone", {0: [kafka(t={0: 5, 1: 3})], 1: [kafka(t={0: 4, 1: 3})]}, [0, 1], None),
    ("commit after offsets", {1: ["3"]}, [0, 1, 2], None),
    ("one uncommitted batch", {0: ["1"], 1: ["2"], 2: ["3"]}, [0], None),
    ("sink once", {0: ["1"], 1: ["2"]}, [0, 1], {"0": ["a"], "1": ["b"], "1.compact": ["a", "b"]}),
    ("sink before commit", {0: ["1"], 1: ["2"]}, [0, 1], {"0": ["a"]}),
]


@pytest.mark.parametrize("law,offsets,commits,sink", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_law_broken_in_a_log_is_exit_1_with_a_counterexample_that_replays(
    law, offsets, commits, sink, tmp_path
):
    root = write_checkpoint(tmp_path / "ck", offsets, commits, sink)
    assert validate(root, tmp_path, sink=sink is not None) == 1
    [written] = (tmp_path / "cx").glob("*.itf.json")
    cx = counterexample.read(written)
    assert (cx.suite, cx.property) == ("checkpoint", "checkpoint_laws") and cx.message.startswith(law)
    assert cli(["replay", str(written)]) == 1


UNREADABLE = [
    ("offsets/0", "v1\n" + META, "offsets/0 line 3: truncated"),
    ("offsets/0", "v1\n" + META + "\n{not json", "offsets/0 line 3: source 0's offsets are not JSON"),
    ("offsets/0", "v7\n" + META + "\n1", "offsets/0 line 1: expected a version line v1 or v2, found 'v7'"),
    (
        "offsets/0",
        "v1\n" + META + '\n{"offset": -3, "timestamp": 9}',
        "line 3: source 0: invalid total time -3",
    ),
    ("offsets/0", "v1\n" + META + '\n{"t": {"0": -1}}', "line 3: source 0: frontier element [0, 0, -1]"),
    ("commits/0", "v1\n", "commits/0 line 2: truncated"),
    ("metadata", "", "metadata line 1: truncated"),
]


@pytest.mark.parametrize("name,text,named", UNREADABLE)
def test_an_unreadable_file_is_exit_2_naming_the_file_and_line(name, text, named, tmp_path, capsys):
    root = write_checkpoint(tmp_path / "ck", {0: ["1"]}, commits=[0])
    (root / name).write_text(text)
    assert validate(root, tmp_path) == 2
    assert named in capsys.readouterr().out.replace("\n", "")


def test_a_directory_that_is_no_checkpoint_is_exit_2(tmp_path, capsys):
    assert cli(["validate-checkpoint", str(tmp_path)]) == 2
    assert "not a Structured Streaming checkpoint" in capsys.readouterr().out


def test_the_checkpoint_suite_holds_on_the_engines_logs():
    quick = attrs.evolve(PROFILES["ci"], max_examples=100, screening_histories=2000)
    result = run_suite(SuiteRequest(get_suite("checkpoint"), ModelImplementation(), "model", quick, seed=0))
    assert result.passed, [r.failure.message for r in result.results if r.failure]


def _wait_for(path: Path, query, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert query.isActive and time.monotonic() < deadline, query.exception()
        time.sleep(0.2)


@pytest.mark.spark
def test_validate_checkpoint_of_a_rate_query_and_of_one_edited_to_go_back(spark_session, tmp_path):
    ck, sink = tmp_path / "ck", tmp_path / "ck" / "sink"
    query = (
        spark_session.readStream.format("rate")
        .option("rowsPerSecond", 10)
        .load()
        .writeStream.format("parquet")
        .option("path", str(sink))
        .option("checkpointLocation", str(ck))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        _wait_for(ck / "commits" / "2", query)
    finally:
        query.stop()
    assert validate(ck, tmp_path, sink=True) == 0
    newest = max(int(f.name) for f in (ck / "offsets").iterdir() if f.name.isdigit())
    lines = (ck / "offsets" / str(newest)).read_text().splitlines()
    (ck / "offsets" / str(newest)).write_text("\n".join([*lines[:2], "0"]))  # back to the first second
    assert validate(ck, tmp_path, sink=True) == 1


@pytest.mark.spark
def test_validate_checkpoint_of_a_query_over_our_source(spark_session, tmp_path):
    from frontier_harness.spark_impl.streaming.query import QuerySpec, start_query
    from frontier_harness.spark_impl.streaming.sinks import shard_writer
    from frontier_harness.spark_impl.streaming.source import NAME, UpstreamSource
    from frontier_harness.spark_impl.streaming.upstream_log import UpstreamLog

    spark_session.dataSource.register(UpstreamSource)
    spec = QuerySpec(tmp_path, "processingTime", "files")
    log = UpstreamLog.create(spec.log)
    query = start_query(spark_session, NAME, spec, shard_writer)
    try:
        for records in ([(0, "a"), (1, "b")], [(0, "c"), (2, "d")]):
            log.append(records)
            query.processAllAvailable()
    finally:
        query.stop()
    assert cli(["validate-checkpoint", str(spec.checkpoint), "--sink", str(spec.sink_dir)]) == 0


def test_a_third_party_sources_offsets_are_unchecked_and_its_batches_still_checked(tmp_path, capsys):
    offsets = {b: [json.dumps({"shard": "a", "cursor": f"x{b}"}), str(b)] for b in range(2)}
    root = write_checkpoint(tmp_path / "ck", offsets, commits=[0, 1])
    assert validate(root, tmp_path) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 (total)" in out and "0 (unchecked: offsets in no shape this reader knows" in out
    (root / "commits" / "0").unlink()
    assert validate(root, tmp_path) == 1  # batch 0 never committed, batch 1 planned


def test_rate_micro_batch_offsets_are_a_product_frontier(tmp_path):
    rate = lambda n, ms: json.dumps({"offset": n, "timestamp": ms})  # noqa: E731
    root = write_checkpoint(tmp_path / "ck", {0: [rate(5, 1000)], 1: [rate(10, 2000)]}, commits=[0, 1])
    assert validate(root, tmp_path) == 0
    (root / "offsets" / "1").write_text("\n".join(["v1", META, rate(10, 500)]))
    assert validate(root, tmp_path) == 1  # the timestamp went back


def _sink_with_mtimes(root: Path, entries: dict) -> None:
    log = root / "sink" / "_spark_metadata"
    log.mkdir(parents=True)
    for name, files in entries.items():
        lines = [
            json.dumps({"path": f"file:///s/{f}", "modificationTime": m, "action": "add"}) for f, m in files
        ]
        (log / name).write_text("\n".join(["v1", *lines]))


def test_a_retention_drops_the_oldest_files_from_a_compaction(tmp_path):
    root = write_checkpoint(tmp_path / "ck", {b: [str(b)] for b in range(3)}, commits=[0, 1, 2])
    _sink_with_mtimes(root, {"0": [("a", 10)], "1": [("b", 20)], "2.compact": [("b", 20), ("c", 30)]})
    assert validate(root, tmp_path, True, "--sink-retention", "15") == 0
    assert validate(root, tmp_path, True) == 1  # without a retention a compaction drops nothing


def test_a_retention_never_drops_a_newer_file_than_one_it_keeps(tmp_path):
    root = write_checkpoint(tmp_path / "ck", {b: [str(b)] for b in range(3)}, commits=[0, 1, 2])
    _sink_with_mtimes(root, {"0": [("a", 10)], "1": [("b", 20)], "2.compact": [("a", 10), ("c", 30)]})
    assert validate(root, tmp_path, True, "--sink-retention", "15") == 1


def test_a_sink_log_purged_below_an_old_enough_compaction_holds(tmp_path):
    root = write_checkpoint(tmp_path / "ck", {b: [str(b)] for b in range(6)}, commits=range(6))
    files = lambda *names: [(n, 0) for n in names]  # noqa: E731
    _sink_with_mtimes(
        root, {"2.compact": files("a", "b", "c"), "3": files("d"), "4": files("e"), "5": files()}
    )
    assert validate(root, tmp_path, True, "--min-batches-to-retain", "3") == 0
    assert validate(root, tmp_path, True, "--min-batches-to-retain", "4") == 1  # 2 is too new to purge below


def _planted_suite(monkeypatch, planted) -> list:
    import frontier_harness.properties.checks.streaming.checkpoint as suite

    monkeypatch.setattr(suite, "check_log", planted)
    quick = attrs.evolve(PROFILES["ci"], max_examples=100, screening_histories=2000)  # shrinks by calls
    result = run_suite(
        SuiteRequest(
            get_suite("checkpoint"), ModelImplementation(), "model", quick, seed=0, domains=("total",)
        )
    )
    return [r.failure for r in result.results if r.failure]


def test_planted_laws_that_check_the_sink_by_batch_only_fail_the_suite_small(monkeypatch):
    from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log

    by_batch = lambda h: [b for b in check_log(h) if b.law not in ("file once", "compaction complete")]  # noqa: E731
    [failure] = _planted_suite(monkeypatch, by_batch)
    assert any(law in failure.message for law in ("file once", "compaction complete")), failure.message
    assert len(failure.history.actions) <= 8, failure.history.actions


def test_planted_laws_that_forget_a_compaction_carries_files_fail_the_suite_small(monkeypatch):
    from frontier_harness.properties.checks.streaming.checkpoint_log.laws import Broken, check_log

    def no_carry(history):
        seen, found = set(), list(check_log(history))
        for step, action in enumerate(history.actions):
            for path in action.args.get("files", []) if action.name == "sink" else []:
                found += [Broken(step, "file once", f"{path} twice")] if path in seen else []
                seen.add(path)
        return sorted(found, key=lambda b: b.step)

    [failure] = _planted_suite(monkeypatch, no_carry)
    assert "file once" in failure.message and len(failure.history.actions) <= 12
