"""`frontier-harness validate-checkpoint DIR [--sink DIR]`: the model's laws on a checkpoint you already have.

Reads the checkpoint (`frontier_harness.properties.checks.ingestion.checkpoint_log.reader`) into a history and judges it with
the `checkpoint` suite. Exit 0 when every law holds; 1 on a violation, with the same
table and ITF counterexample file as `check` (the log as a history, so `replay` re-checks
it); 2 when a file cannot be read (the error names the file and the line).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from frontier_harness.properties.checks.ingestion.checkpoint import PROPERTY, SUITE_NAME, judge
from frontier_harness.properties.checks.ingestion.checkpoint_log.reader import read_checkpoint
from frontier_harness.properties.engine import counterexample, report
from frontier_harness.properties.engine.counterexample import Counterexample

OK, FAILED = 0, 1


def add_parser(verbs: Any) -> None:
    verb = verbs.add_parser(
        "validate-checkpoint",
        help="check a Structured Streaming checkpoint (and file sink) against the model's laws",
    )
    verb.add_argument("directory", type=Path, help="the query's checkpointLocation")
    verb.add_argument(
        "--sink", type=Path, help="the query's file sink directory (read through its _spark_metadata)"
    )
    verb.add_argument(
        "--out",
        type=Path,
        help="where a counterexample file goes (default .frontier-harness/counterexamples)",
    )


def run(args: argparse.Namespace, out: Any, default_out: Path) -> int:
    history = read_checkpoint(args.directory, args.sink)
    outcome = judge(history)
    if outcome.ok:
        out.print(summary(args.directory, history))
        return OK
    cx = Counterexample(
        suite=SUITE_NAME,
        property=PROPERTY,
        history=history,
        impl="model",
        message=outcome.message,
        step=outcome.step,
        lane="validate-checkpoint",
        model_said=outcome.expected,
        impl_said=outcome.actual,
    )
    path = counterexample.write(cx, args.out or default_out)
    out.print(report.counterexample_table(cx))
    out.print(f"counterexample written to {path}; replay with: frontier-harness replay {path}", markup=False)
    return FAILED


def summary(directory: Path, history: Any) -> Table:
    """What was read and checked: batches, commits, streams and sink entries."""
    count = lambda name: sum(a.name == name for a in history.actions)  # noqa: E731
    streams = sorted(
        {f"{a.args['source']} ({a.args['domain']})" for a in history.actions if "source" in a.args}
    )
    table = Table(title=f"validate-checkpoint {directory}: every law held")
    for column in ("batches", "commits", "streams", "sink log files", "verdict"):
        table.add_column(column)
    batches = len({a.args["batch"] for a in history.actions if a.name == "offsets"})
    table.add_row(
        str(batches), str(count("commit")), ", ".join(streams), str(count("sink")), "[green]held[/]"
    )
    return table
