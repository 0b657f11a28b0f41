"""The laws on what `offsets/N` and `commits/N` journal beside the offsets: watermark, clock, settings."""

from __future__ import annotations

import json

import pytest

from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.streaming.checkpoint_log.reader import read_checkpoint
from tests.test_checkpoint import validate


def write(root, batches: list[dict], handed_on: list[int | None]):
    """A checkpoint of one rate source: batch `i`'s metadata `batches[i]`, `commits/i` handing on `handed_on[i]`."""
    (root / "offsets").mkdir(parents=True)
    (root / "commits").mkdir()
    (root / "metadata").write_text('{"id":"q"}')
    for batch, meta in enumerate(batches):
        (root / "offsets" / str(batch)).write_text(f"v1\n{json.dumps(meta)}\n{batch}")
    for batch, next_ms in enumerate(handed_on):
        commit = {} if next_ms is None else {"nextBatchWatermarkMs": next_ms}
        (root / "commits" / str(batch)).write_text(f"v1\n{json.dumps(commit)}")
    return root


def meta(watermark: int, timestamp: int, **conf: str) -> dict:
    return {"batchWatermarkMs": watermark, "batchTimestampMs": timestamp, "conf": conf}


def laws(root) -> list[str]:
    return [b.law for b in check_log(read_checkpoint(root))]


def test_an_honest_log_holds_and_its_metadata_is_read(tmp_path):
    root = write(tmp_path / "ck", [meta(0, 10, p="2"), meta(1000, 20, p="2")], [1000, 1000])
    log = read_checkpoint(root)
    assert [(a.args.get("watermark_ms"), a.args.get("conf")) for a in log.actions[1:]] == [
        (0, {"p": "2"}),
        (None, None),  # commit 0
        (1000, None),  # no setting changed
        (None, None),
    ]
    assert log.actions[2].args["next_watermark_ms"] == 1000
    assert laws(root) == []


BROKEN = [
    ("watermark monotone", [meta(3000, 1), meta(2000, 2)], [None, None]),
    ("watermark as committed", [meta(0, 1), meta(500, 2)], [1000, None]),
    ("timestamp monotone", [meta(0, 60_000), meta(0, 0)], [None, None]),
    ("pinned setting", [meta(0, 1, p="2"), meta(0, 2, p="3")], [None, None]),
]


@pytest.mark.parametrize("law,batches,handed_on", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_metadata_law_broken_is_reported_naming_the_batch(law, batches, handed_on, tmp_path):
    root = write(tmp_path / "ck", batches, handed_on)
    assert laws(root) == [law]
    assert validate(root, tmp_path) == 1


def test_a_setting_first_present_later_is_a_note_not_a_violation(tmp_path):
    root = write(tmp_path / "ck", [meta(0, 1), meta(0, 2, policy="min")], [None, None])
    assert laws(root) == []


@pytest.mark.parametrize(
    "line,named",
    [
        ('{"batchWatermarkMs":"0"}', "batchWatermarkMs '0' is not an integer"),
        ('{"conf":{"p":2}}', "conf {'p': 2} is not an object of strings"),
        ("[1]", "expected the batch's metadata as an object"),
    ],
)
def test_malformed_metadata_is_exit_2_naming_the_file_and_line(line, named, tmp_path, capsys):
    root = write(tmp_path / "ck", [meta(0, 1)], [None])
    (root / "offsets" / "0").write_text(f"v1\n{line}\n0")
    assert validate(root, tmp_path) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "offsets/0 line 2" in out and named in out


def test_a_directory_with_only_metadata_is_not_run(tmp_path, capsys):
    (tmp_path / "metadata").write_text('{"id":"q"}')
    assert validate(tmp_path, tmp_path) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "not run" in out and "held" not in out


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_min_batches_to_retain_below_1_is_rejected_at_parse_time(value, tmp_path, capsys):
    root = write(tmp_path / "ck", [meta(0, 1)], [None])
    assert validate(root, tmp_path, False, "--min-batches-to-retain", value) == 2
    assert "--min-batches-to-retain" in capsys.readouterr().out
