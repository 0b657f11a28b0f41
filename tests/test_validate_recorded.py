"""`validate-checkpoint --state` prints what Spark recorded, read by the same reader `upgrade --checkpoint`
compares with a new job (`spark_impl/event_time/checkpoint_metadata.py`)."""

from __future__ import annotations

import pytest

from frontier_harness.properties.cli.main import main
from tests.stateful_checkpoints import copy
from tests.upgrade_runs import from_spark35

pytestmark = pytest.mark.spark


def test_with_state_what_spark_recorded_is_printed(spark_session, tmp_path, capsys):
    root = copy(spark_session, "hdfs", tmp_path / "ck")
    assert main(["validate-checkpoint", str(root), "--state", "--out", str(tmp_path / "cx")]) == 0
    out = capsys.readouterr().out
    assert "recorded by Spark (what a restart is keyed on" in out, out
    assert (
        "operator 0: stateStoreSave" in out
        and "key struct<window:struct<start:timestamp,end:timestamp>>" in out
    )
    assert "value struct<count:bigint>" in out and "watermark delay [2000] ms" in out, out


def test_a_checkpoint_spark_3_5_wrote_has_its_state_rows_read_and_its_operator_kind_shown_unknown(
    spark_session, tmp_path, capsys
):
    """Spark 3.5 wrote no operator metadata: the operator comes from its directories, its rows are read."""
    checkpoint = from_spark35(tmp_path / "root") / "checkpoint"
    assert main(["validate-checkpoint", str(checkpoint), "--state", "--out", str(tmp_path / "cx")]) == 0
    out = capsys.readouterr().out
    assert "operator 0: kind unknown (no operator metadata: Spark 3.x wrote it)" in out, out
    assert "state rows (read with Spark)" in out and "│ 0        │ default │ 2     │ 1    │ 30000" in out, out
