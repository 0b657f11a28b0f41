"""`frontier-harness upgrade`: its exit codes and its refusals, each in one line (exit 2)."""

from __future__ import annotations

import pytest

from frontier_harness.properties.cli.main import main
from tests.upgrade_runs import from_spark35

pytestmark = pytest.mark.spark
JOBS = "tests.jobs.upgrades"


def _upgrade(capsys, *args: str) -> tuple[int, str]:
    code = main(["upgrade", *args])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    "new,code,verdict",
    [
        ("sql_window", 0, "upgrade verdict: safe: no difference"),
        ("more_partitions", 0, "upgrade verdict: safe: every one of the 1 difference(s) is safe"),
        ("count_to_sum", 1, "upgrade verdict: restarts, results change (1 difference(s) change them)"),
        (
            "key_added",
            1,
            "upgrade verdict: restart fails: Spark raises STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
        ),
    ],
)
def test_exit_0_only_when_every_difference_is_safe(new, code, verdict, spark_session, capsys, tmp_path):
    found, out = _upgrade(
        capsys, "--from", f"{JOBS}:counts", "--to", f"{JOBS}:{new}", "--job-dir", str(tmp_path)
    )
    assert found == code, out
    assert verdict in out, out
    assert "compared: 1 source(s), 1 stateful operator(s)" in out, out


def test_a_job_that_cannot_be_imported_is_refused_in_one_line(spark_session, capsys):
    code, out = _upgrade(capsys, "--from", f"{JOBS}:counts", "--to", "tests.jobs.nope:factory")
    assert code == 2 and out.strip().startswith("error: --job tests.jobs.nope:factory: cannot import"), out
    assert len(out.strip().splitlines()) == 1, out


def test_a_directory_that_is_not_a_checkpoint_is_refused_in_one_line(spark_session, capsys, tmp_path):
    code, out = _upgrade(capsys, "--checkpoint", str(tmp_path), "--to", f"{JOBS}:counts")
    assert (
        code == 2
        and out.strip() == f"error: {tmp_path}: not a Structured Streaming checkpoint (no metadata file)"
    )


def test_a_change_the_model_cannot_judge_is_named_with_why(spark_session, capsys, tmp_path):
    code, out = _upgrade(
        capsys,
        "--from",
        "frontier_harness.streaming_job_example.windowed_counts:factory",
        "--to",
        f"{JOBS}:counts",
        "--job-dir",
        str(tmp_path),
    )
    assert code == 2, out
    assert out.strip().startswith("error: cannot judge source 0: frontier_upstream_events -> file:json: "), (
        out
    )
    assert "a source of another kind is not allowed" in out and len(out.strip().splitlines()) == 1, out


def test_upgrade_needs_what_runs_now(capsys):
    code, out = _upgrade(capsys, "--to", f"{JOBS}:counts")
    assert (
        code == 2 and "upgrade needs what runs now: --from MODULE:FACTORY, --checkpoint DIR, or both" in out
    )


def test_a_checkpoint_spark_3_5_wrote_is_judged_as_spark_4_restarts_on_it(spark_session, capsys, tmp_path):
    """Spark 3.5 wrote no operator metadata: an added operator is named with the failure Spark 4.3 meets on
    the first batch and how to go back; the same job restarts, and what was not checked is said."""
    root = from_spark35(tmp_path)
    on_it = ("--checkpoint", str(root / "checkpoint"), "--job-dir", str(root / "job"))
    code, out = _upgrade(capsys, *on_it, "--from", f"{JOBS}:counts", "--to", f"{JOBS}:deduplication_added")
    assert code == 1 and "upgrade verdict: restart fails: Spark raises CANNOT_LOAD_STATE_STORE" in out, out
    assert "restore the checkpoint from a copy taken before it" in out, out
    code, out = _upgrade(capsys, *on_it, "--to", f"{JOBS}:counts")
    assert (
        code == 0
        and "not compared: the kind of each stateful operator: the checkpoint has no operator" in out
    )
