"""`frontier-harness validate-checkpoint DIR [--sink DIR] [--state]`: the model's laws on a checkpoint you have.

Reads the checkpoint (`frontier_harness.properties.checks.streaming.checkpoint_log.reader`: its
offset and commit logs, each batch's watermark, clock and pinned settings, the state store's
files, and with `--sink` a file sink's log) into a history and judges it with the `checkpoint`
suite; with `--state` it also starts Spark and reads the state's rows through Spark's own state
data source (`frontier_harness.spark_impl.event_time.state_store`). It prints every law
with its verdict and the count it rests on: `held` over a count that is never zero, `broken`,
or `not applicable` (nothing in this checkpoint for it to look at: no sink, no watermark, no
state), and notes that are no violation (a setting first present later, state of a provider
this reader does not know, a source whose offsets are in no known shape).

Exit 0 when every law that applies holds; 1 on a violation, with the same table and ITF
counterexample file as `check`: the shortest stretch of the log (a prefix, from the latest batch
that still shows it) whose first broken law is the same, so `replay` re-checks it, and, where
Spark's own restart of the query would fail, a line saying so ("restart will fail: ...");
2 when a file cannot be read (naming the file and the line), or when the directory holds no log
entry at all (nothing was checked: "not run").
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from frontier_harness.model.vocabulary.ingestion import LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint import PROPERTY, SUITE_NAME, judge
from frontier_harness.properties.checks.streaming.checkpoint_log.broken import Broken
from frontier_harness.properties.checks.streaming.checkpoint_log.coverage import rests_on
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log, judge_log
from frontier_harness.properties.checks.streaming.checkpoint_log.reader import (
    MIN_BATCHES_TO_RETAIN,
    read_checkpoint,
)
from frontier_harness.properties.cli.arguments import positive_int
from frontier_harness.properties.engine import counterexample, report
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.errors import CheckpointFormatError
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome

HEADER = (LogAction.RETAIN, LogAction.FILE_SINK, LogAction.EXPECT)
ENTRIES = (LogAction.OFFSETS, LogAction.COMMIT, LogAction.SINK, LogAction.STATE, LogAction.STATE_OPERATOR)


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
        type=positive_int,  # 0 would turn the purge laws off: Spark keeps at least one batch
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
        "--state",
        action="store_true",
        help="also read the state's rows through Spark's state data source (starts Spark): no entry of a "
        "windowed aggregation or a deduplication is kept past the watermark",
    )
    verb.add_argument(
        "--out",
        type=Path,
        help="where a counterexample file goes (default .frontier-harness/counterexamples)",
    )


def run(args: argparse.Namespace, out: Any, default_out: Path) -> int:
    history = read_checkpoint(args.directory, args.sink, args.min_batches_to_retain, args.sink_retention)
    if getattr(args, "state", False):
        from frontier_harness.properties.cli.state_rows import with_state_rows

        history = with_state_rows(history, args.directory)
    if not any(a.name in ENTRIES for a in history.actions):
        raise CheckpointFormatError(
            args.directory,
            None,
            "not run: no offsets, commits, sink or state entry to read, so no law was checked",
        )
    verdict = judge_log(history)
    out.print(laws_table(args.directory, history, verdict.broken))
    if any(a.name == LogAction.STATE_ROWS for a in history.actions):
        out.print(state_rows_table(history))
    for note in verdict.notes + read_notes(history):
        out.print(f"note: {note}", markup=False, soft_wrap=True)
    outcome = judge(history)
    if outcome.ok:
        counts = [count for count, _ in rests_on(history).values()]
        applied = sum(map(bool, counts))
        out.print(f"every law that applies held: {applied} laws held, {len(counts) - applied} not applicable")
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
    for restart in dict.fromkeys(b.restart for b in verdict.broken if b.restart):
        out.print(restart, markup=False, soft_wrap=True)
    out.print(f"counterexample written to {path}; replay with: frontier-harness replay {path}", markup=False)
    return ExitCode.FAILED


def laws_table(directory: Path, history: History, broken: list[Broken]) -> Table:
    """Every law: broken, held over the count it rests on, or not applicable (a count of zero)."""
    laws = {b.law for b in broken}
    table = Table(title=f"validate-checkpoint {directory}")
    for column in ("law", "verdict", "rests on"):
        table.add_column(column)
    for law, (count, unit) in rests_on(history).items():
        verdict = "[red]broken[/]" if law in laws else "[green]held[/]" if count else "[dim]not applicable[/]"
        table.add_row(law, verdict, f"{count:,} {unit}" if count else f"no {unit}")
    return table


def state_rows_table(history: History) -> Table:
    """The rows each store held after each batch read (`--state`), with the oldest window end or expiry."""
    table = Table(title="state rows (read with Spark)")
    for column in ("operator", "store", "batch", "rows", "oldest window end or expiry (ms)"):
        table.add_column(column)
    for action in history.actions:
        if action.name == LogAction.STATE_ROWS:
            args = action.args
            oldest = args.get(LogArg.OLDEST_BOUND_MS)
            row = (args[LogArg.OPERATOR], args[LogArg.STORE], args[LogArg.BATCH], args[LogArg.ROWS])
            table.add_row(*map(str, row), "" if oldest is None else str(oldest))
    return table


def read_notes(history: History) -> list[str]:
    """What was read: streams (and sources whose offsets are in no shape the reader knows)."""
    checked = sorted(
        {
            f"{a.args[LogArg.SOURCE]} ({a.args[LogArg.DOMAIN]})"
            for a in history.actions
            if LogArg.DOMAIN in a.args
        }
    )
    examples: dict[str, str] = {}
    for action in history.actions:
        if LogArg.UNCHECKED in action.args and action.name == LogAction.OFFSETS:
            examples.setdefault(action.args[LogArg.SOURCE], action.args[LogArg.UNCHECKED])
    unchecked = [
        f"{source} (unchecked: offsets in no shape this reader knows, e.g. {example})"
        for source, example in sorted(examples.items())
    ]
    return [f"streams read: {', '.join(checked + unchecked)}"] if checked or unchecked else []


def shortest_prefix(history: History, outcome: Outcome) -> tuple[History, Outcome]:
    """The shortest stretch of the log that shows `outcome`'s first broken law at the same action, and its
    outcome: the shortest prefix (galloping from the step where the law shows, then bisecting), then
    without the most leading entries (bisecting) that leave it shown, and no law broken that was not.
    O(log n) judgements.
    """
    if outcome.step is None:  # a law broken by the log as a whole: no shorter prefix names a step
        return history, outcome
    law, step = _law(outcome), outcome.step
    allowed = {b.law for b in check_log(history)}

    def shows(candidate: History, at: int) -> bool:
        found = check_log(candidate)
        return (
            bool(found) and (found[0].law, found[0].step) == (law, at) and {b.law for b in found} <= allowed
        )

    actions = history.actions
    low, width, high = step, 1, step + 1  # prefixes up to `low` actions do not show it
    while high < len(actions) and not shows(History(history.domain, actions[:high]), step):
        low, high, width = high, min(len(actions), high + width), width * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (
            (low, middle) if shows(History(history.domain, actions[:middle]), step) else (middle, high)
        )
    if not shows(cut := History(history.domain, actions[:high]), step):
        return history, outcome  # not monotone in the length: the whole log shows it
    cut = _without_leading(cut, step, shows)
    return cut, judge(cut)


def _without_leading(history: History, step: int, shows: Any) -> History:
    """`history` without the most entries after its header (retain, file sink, expect) that still shows the law."""
    head = 0
    while head < len(history.actions) and history.actions[head].name in HEADER:
        head += 1

    def dropped(k: int) -> History:
        return History(history.domain, history.actions[:head] + history.actions[head + k :])

    low, high = 0, step - head  # dropping `low` entries shows it; dropping `high` removes its own action
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if shows(dropped(middle), step - middle) else (low, middle)
    return dropped(low)


def _law(outcome: Outcome) -> str:
    return outcome.message.split(":")[0]
