"""`validate-checkpoint --slot`: a CDC checkpoint against its replication slot, in one line: the slot at or
behind the committed end holds; past it, or with its WAL released (`wal_status` 'lost' once it fell further
behind than `max_slot_wal_keep_size`), exits 1 naming why."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from frontier_harness.properties.cli.main import main
from frontier_harness.spark_impl.cdc import slot as slots
from frontier_harness.spark_impl.cdc.upstream import Upstream


@pytest.fixture
def upstream(postgres_cluster):
    made = Upstream.create(postgres_cluster, f"slotcheck_{uuid.uuid4().hex[:8]}")
    yield made
    made.close()


def checkpoint(directory: Path, ends: list[int], committed: int) -> Path:
    """A checkpoint as Spark writes it for the CDC source: `offsets/N` binding batch N to `ends[N]`."""
    (directory / "offsets").mkdir(parents=True)
    (directory / "commits").mkdir()
    (directory / "metadata").write_text(json.dumps({"id": str(uuid.uuid4())}))
    meta = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 0, "conf": {}})
    for batch, end in enumerate(ends):
        (directory / "offsets" / str(batch)).write_text(f"v1\n{meta}\n{json.dumps({'lsn': end})}")
        if batch < committed:
            (directory / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    return directory


def _commit(upstream: Upstream, key: int, count: int = 1) -> int:
    upstream.begin(0)
    upstream.write(0, "insert", key, "x" * 200, count)
    upstream.commit(0)
    upstream.observe()
    return max(upstream.ends.values())


def _validate(directory: Path, upstream: Upstream, capsys) -> tuple[int, str]:
    code = main(["validate-checkpoint", str(directory), "--slot", upstream.slot, "--dsn", upstream.dsn])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    return code, lines[0]


def test_a_slot_behind_the_committed_end_agrees_and_one_ahead_is_named(upstream, tmp_path, capsys):
    first, second = _commit(upstream, 1), _commit(upstream, 2)
    directory = checkpoint(tmp_path / "cp", [first, second], committed=1)  # batch 1 not committed
    code, line = _validate(directory, upstream, capsys)
    assert code == 0 and "agrees with the checkpoint" in line, line
    with upstream.connection() as conn:
        slots.advance(conn, upstream.slot, second)
    code, line = _validate(directory, upstream, capsys)
    assert code == 1, line
    assert "is ahead of the checkpoint" in line and "(0/" in line and "] are gone upstream" in line, line


def test_a_slot_whose_wal_was_released_is_named(upstream, tmp_path, capsys):
    first = _commit(upstream, 1)
    directory = checkpoint(tmp_path / "cp", [first], committed=1)
    with upstream.connection() as conn:
        conn.execute("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'")
        conn.execute("SELECT pg_reload_conf()")
        try:
            for i in range(6):  # WAL segments are 1 MB in the test cluster: six of them pass the limit
                _commit(upstream, 10_000 * (i + 1), 2000)
                conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
            assert slots.state(conn, upstream.slot).wal_status == "lost"
        finally:
            conn.execute("ALTER SYSTEM RESET max_slot_wal_keep_size")
            conn.execute("SELECT pg_reload_conf()")
    code, line = _validate(directory, upstream, capsys)
    assert code == 1 and "lost WAL it needed (wal_status 'lost')" in line, line


def test_no_such_slot_and_no_committed_batch_are_not_run(upstream, tmp_path, capsys):
    first = _commit(upstream, 1)
    code = main(
        [
            "validate-checkpoint",
            str(checkpoint(tmp_path / "a", [first], 1)),
            "--slot",
            "nope",
            "--dsn",
            upstream.dsn,
        ]
    )
    assert code == 2 and "there is no replication slot 'nope'" in capsys.readouterr().out
    code, line = _validate(checkpoint(tmp_path / "b", [first], 0), upstream, capsys)
    assert code == 2 and "no committed batch" in line
