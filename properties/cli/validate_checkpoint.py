"""`frontier-harness validate-checkpoint DIR [--sink DIR]`: the model's laws on a checkpoint you already have.

Reads the checkpoint (`frontier_harness.properties.checks.ingestion.checkpoint_log.reader`) into a history and judges it with
the `checkpoint` suite. Exit 0 when every law holds over every file read (a source whose
offsets are in no shape the reader knows is named unchecked; its batches still are
checked); 1 on a violation, with the same table and ITF counterexample file as `check`:
the shortest prefix of the log that still shows the first broken law, as a history, so
`replay` re-checks it; 2 when a file cannot be read (the error names the file and the line).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from frontier_harness.properties.checks.ingestion.checkpoint import PROPERTY, SUITE_NAME, judge
from frontier_harness.properties.checks.ingestion.checkpoint_log.reader import (
    MIN_BATCHES_TO_RETAIN,
    read_checkpoint,
)
from frontier_harness.properties.engine import counterexample, report
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome


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
        "--min-batches-to-retain",
        type=int,
        default=MIN_BATCHES_TO_RETAIN,
        help="the query's spark.sql.streaming.minBatchesToRetain (default %(default)s): how much of "
        "each log Spark may have purged",
    )
    verb.add_argument(
        "--sink-retention",
        type=int,
        metavar="MS",
        help="the file sink's `retention` option in milliseconds: compactions may drop the oldest files",
    )
    verb.add_argument(
        "--out",
        type=Path,
        help="where a counterexample file goes (default .frontier-harness/counterexamples)",
    )


def run(args: argparse.Namespace, out: Any, default_out: Path) -> int:
    history = read_checkpoint(args.directory, args.sink, args.min_batches_to_retain, args.sink_retention)
    outcome = judge(history)
    if outcome.ok:
        out.print(summary(args.directory, history))
        return ExitCode.HELD
    history, outcome = shortest_prefix(history, outcome)
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
    return ExitCode.FAILED


def shortest_prefix(history: History, outcome: Outcome) -> tuple[History, Outcome]:
    """The shortest prefix of the log whose first broken law is `outcome`'s, and its outcome.

    Galloping from the step where the law shows, then bisecting: O(log n) judgements.
    """
    actions, step = history.actions, outcome.step
    if step is None:  # a law broken by the log as a whole: no shorter prefix names a step
        return history, outcome

    def shows(length: int) -> Outcome | None:
        cut = judge(History(history.domain, actions[:length]))
        return cut if not cut.ok and cut.step == step and _first(cut) == _first(outcome) else None

    low, width = step, 1  # prefixes up to `low` actions do not show it
    high = step + 1
    while high < len(actions) and shows(high) is None:
        low, high, width = high, min(len(actions), high + width), width * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if shows(middle) is not None else (middle, high)
    found = shows(high)
    if found is None:  # not monotone in the length: the whole log shows it
        return history, outcome
    return History(history.domain, actions[:high]), found


def _first(outcome: Outcome) -> str:
    return outcome.message.split(" (and ")[0]


def summary(directory: Path, history: Any) -> Table:
    """What was read and checked: batches, commits, streams, sink entries and files; unchecked sources."""
    count = lambda name: sum(a.name == name for a in history.actions)  # noqa: E731
    checked = {f"{a.args['source']} ({a.args['domain']})" for a in history.actions if "domain" in a.args}
    examples: dict[str, str] = {}
    for action in history.actions:
        if "unchecked" in action.args:
            examples.setdefault(action.args["source"], action.args["unchecked"])
    unchecked = {
        f"{source} (unchecked: offsets in no shape this reader knows, e.g. {example})"
        for source, example in examples.items()
    }
    files = {path for a in history.actions if a.name == "sink" for path in a.args.get("files", []) or []}
    table = Table(title=f"validate-checkpoint {directory}: every law held")
    for column in ("batches", "commits", "streams", "sink log files", "data files", "verdict"):
        table.add_column(column)
    batches = len({a.args["batch"] for a in history.actions if a.name == "offsets"})
    table.add_row(
        str(batches),
        str(count("commit")),
        ", ".join(sorted(checked) + sorted(unchecked)),
        str(count("sink")),
        str(len(files)),
        "[green]held[/]",
    )
    return table
