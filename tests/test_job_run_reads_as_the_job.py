"""A job's run reads as the job's (issue 42 point 6), without Spark: the counterexample table names the job and
omits the `sink` choice, the replay hint is a command for a new shell naming the module that must import, and a
job that cannot be imported or lacks `write` or `read` is refused before Spark starts, in either suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import Action, History

HISTORY = History(
    "partitioned",
    (
        Action("query", {"trigger": "availableNow", "sink": "shard"}),
        Action("produce", {"partition": 0, "data": "r0"}),
        Action("trigger", {"fault": "after_sink"}),
    ),
)


def _shown(cx: Counterexample) -> str:
    console = Console(width=200, record=True)
    console.print(report.counterexample_table(cx))
    return console.export_text()


def test_under_a_job_the_counterexample_names_it_and_omits_the_sink_choice():
    ours = Counterexample("streaming", "exactly_once", HISTORY, "spark")
    theirs = Counterexample(
        "stateful", "exactly_once", HISTORY, "stateful-job:my_jobs:counts", job="my_jobs:counts"
    )
    assert 'sink="shard"' in _shown(ours)
    shown = _shown(theirs)
    assert "(stateful-job:my_jobs:counts)" in shown and "sink=" not in shown and "availableNow" in shown, (
        shown
    )


def test_the_replay_hint_of_a_job_works_in_a_new_shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cx = Counterexample(
        "stateful", "exactly_once", HISTORY, "stateful-job:my_jobs:counts", job="my_jobs:counts"
    )
    hint = report.replay_hint(cx, Path("cx.itf.json"))
    assert f"cd {tmp_path} && frontier-harness replay {tmp_path / 'cx.itf.json'}" in hint, hint
    assert "my_jobs must be importable there" in hint, hint


@pytest.mark.parametrize("suite", ["streaming", "stateful"])
@pytest.mark.parametrize(
    "job,problem",
    [
        ("tests.jobs.nope:factory", "cannot import 'factory' from 'tests.jobs.nope'"),
        ("tests.jobs.bad:no_read", "WriteOnly has no read method"),
    ],
    ids=["unimportable", "no_read"],
)
def test_a_job_that_cannot_run_is_refused_before_spark_starts(suite, job, problem, capsys):
    from frontier_harness.spark_impl import session

    started = session.starts()
    assert main(["check", "--suite", suite, "--job", job]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"error: --job {job}: ") and problem in out and len(out.splitlines()) == 1, out
    assert session.starts() == started


def test_complete_mode_is_refused_before_spark_starts(capsys):
    from frontier_harness.spark_impl import session

    started = session.starts()
    assert main(["check", "--suite", "stateful", "--job", "tests.jobs.refused:complete_mode"]) == 2
    out = capsys.readouterr().out.strip()
    assert "output_mode 'complete' is not supported" in out and len(out.splitlines()) == 1, out
    assert session.starts() == started


def test_frontier_harness_check_plans_a_stateful_job_as_the_cli_does():
    """`frontier_harness.check` and the pytest fixture plan their pairings with the CLI's `run.planned`."""
    from frontier_harness.properties.cli.check import check
    from frontier_harness.properties.engine.errors import HarnessError, ImplementationError
    from frontier_harness.spark_impl import session

    started = session.starts()
    with pytest.raises(ImplementationError, match="cannot import 'factory' from 'tests.jobs.nope'"):
        check("stateful", job="tests.jobs.nope:factory")
    with pytest.raises(HarnessError, match="--job applies to the streaming, stateful and cdc suites"):
        check("collections", job="tests.jobs.nope:factory")
    assert session.starts() == started
