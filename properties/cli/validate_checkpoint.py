"""`frontier-harness validate-checkpoint DIR [--sink DIR] [--state]`: the model's laws on a checkpoint you have.

Reads the checkpoint (`frontier_harness.properties.checks.streaming.checkpoint_log.reader`: its
offset and commit logs, each batch's watermark, clock and pinned settings, the state store's
files, and with `--sink` a file sink's log) into a history and judges it with the `checkpoint`
suite; with `--state` it also starts Spark and reads the state's rows through Spark's own state
data source (`frontier_harness.spark_impl.event_time.state_store`) and prints what Spark recorded, what a
restart is keyed on (`frontier_harness.properties.cli.recorded`). It prints every law
with its verdict and the count it rests on: `held` over a count that is never zero, `broken`,
or `not applicable` (nothing in this checkpoint for it to look at: no sink, no watermark, no
state), and notes that are no violation (a setting first present later, state of a provider
this reader does not know, a source whose offsets are in no known shape).

A law that applies but was not checked is "not run", with how to run it: `state evicted` on a
checkpoint that holds state, read without `--state` ("not run (pass --state)").

Exit 0 when every law that applies holds; 1 on a violation, with the same table and ITF
counterexample file as `check`: the shortest stretch of the log (a prefix, from the latest batch
that still shows it) whose first broken law is the same, so `replay` re-checks it, and, where
Spark's own restart of the query would fail, a line saying so ("restart will fail: ...");
2 when a file cannot be read (naming the file and the line), when the directory holds no log
entry at all (nothing was checked: "not run"), or when every law checked held but one that applies
was not run (a line names it and how to run it), as `check` exits 2 when a property did not run.

With `--slot NAME` (and `--dsn CONNINFO`) it judges instead whether a CDC query's PostgreSQL replication
slot agrees with the checkpoint (`frontier_harness.properties.cli.replication_slot`), in one line: 0, 1 when
the slot is past the committed end or lost WAL it needed, 2 when there is nothing to compare, 3 when
PostgreSQL cannot be reached.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint import PROPERTY, SUITE_NAME, judge
from frontier_harness.properties.checks.streaming.checkpoint_log.broken import Broken
from frontier_harness.properties.checks.streaming.checkpoint_log.coverage import rests_on
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log, judge_log
from frontier_harness.properties.checks.streaming.checkpoint_log.reader import (
    MIN_BATCHES_TO_RETAIN,
    read_checkpoint,
)
from frontier_harness.properties.checks.streaming.checkpoint_log.state_laws import STATE_EVICTED
from frontier_harness.properties.cli.arguments import positive_int
from frontier_harness.properties.engine import counterexample, report
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.errors import CheckpointFormatError, HarnessError
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.suite import Outcome

HEADER = (LogAction.RETAIN, LogAction.FILE_SINK, LogAction.EXPECT)
ENTRIES = (LogAction.OFFSETS, LogAction.COMMIT, LogAction.SINK, LogAction.STATE, LogAction.STATE_OPERATOR)
LANE = "validate-checkpoint"  # how a counterexample file says it was found: a checkpoint read, no search
PASS_STATE = "pass --state"
UNCHECKED = " unchecked:"  # how `judge_log` notes state it could not read  # why `state evicted` did not run on a checkpoint that holds state


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
        "--verbose",
        "-v",
        dest="show_laws",
        action="store_true",
        help="after the answer, every law with its verdict and the count it rests on, the notes, and the "
        "log of a violation",
    )
    verb.add_argument(
        "--out",
        type=Path,
        help="where a counterexample file goes (default .frontier-harness/counterexamples)",
    )
    verb.add_argument(
        "--slot",
        metavar="NAME",
        help="a CDC query's PostgreSQL replication slot: does it agree with the checkpoint (not past its "
        "committed end, its WAL not released)? One line; with --dsn",
    )
    verb.add_argument(
        "--dsn",
        metavar="CONNINFO",
        help="the libpq connection string of the slot's database (default: $FRONTIER_HARNESS_POSTGRES)",
    )


def run(args: argparse.Namespace, out: Any) -> int:
    history = read_checkpoint(args.directory, args.sink, args.min_batches_to_retain, args.sink_retention)
    if getattr(args, "slot", None):
        return slot_agreement(history, args.slot, args.dsn, out)
    if getattr(args, "state", False):
        from frontier_harness.properties.cli.state_rows import with_state_rows

        history = with_state_rows(history, args.directory)
    if not any(a.name in ENTRIES for a in history.actions):
        raise CheckpointFormatError(
            args.directory,
            None,
            "not run: no offsets, commits, sink or state entry to read, so no law was checked",
        )
    verdict, not_run, outcome = judge_log(history), not_run_laws(history), judge(history)
    verbose = getattr(args, "verbose", False) or getattr(args, "show_laws", False)
    for line in answer(history, verdict.broken, not_run, outcome) + not_checked(history, verdict.notes):
        out.print(line, markup=False, soft_wrap=True)
    _details(args, out, history, verdict, not_run, verbose)
    if outcome.ok:
        return ExitCode.USAGE if not_run else ExitCode.HELD
    history, outcome = shortest_prefix(history, outcome)
    cx = Counterexample(
        suite=SUITE_NAME,
        property=PROPERTY,
        history=history,
        impl="model",
        message=outcome.message,
        step=outcome.step,
        lane=LANE,
        model_said=outcome.expected,
        impl_said=outcome.actual,
    )
    path = counterexample.write(cx, args.out or Path(load_config().get("out")))
    if verbose:
        out.print(report.counterexample_table(cx, log=True))
    out.print(f"counterexample written to {path}; replay with: frontier-harness replay {path}", markup=False)
    return ExitCode.FAILED


def answer(history: History, broken: list[Broken], not_run: dict[str, str], outcome: Outcome) -> list[str]:
    """What a user came for, first: whether a restart is safe (Spark's own refusal when a broken law
    means one, "restart will work" when every law checked held), then each broken law in one sentence
    naming its file, then each law that applies but was not checked, with how to check it.

    >>> from frontier_harness.properties.engine.history import Action
    >>> log = History("total", (Action("offsets", {"batch": 0}), Action("commit", {"batch": 0}),
    ...     Action("commit", {"batch": 1})))
    >>> lost = Broken(2, "commit after offsets", "batch 1 is committed but has no offsets", "restart will fail: ...")
    >>> answer(log, [lost], {}, Outcome(ok=False, message="commit after offsets: ..."))
    ['restart will fail: ...', 'broken: commit after offsets (commits/1): batch 1 is committed but has no offsets']
    """
    broken_lines = [f"broken: {b.law}{_file_of(history, b)}: {b.message}" for b in broken]
    not_run_lines = [f"not run: {law}: {why} (the checkpoint holds state)" for law, why in not_run.items()]
    if not outcome.ok:
        restarts = list(dict.fromkeys(b.restart for b in broken if b.restart))
        laws = len({b.law for b in broken})
        head = restarts or [
            f"restart not safe: this checkpoint breaks {laws} law{'s' * (laws != 1)}, so a restart "
            "resumes from a log that is not what ran"
            if broken
            else f"restart not safe: {outcome.message}"
        ]
        return head + broken_lines + not_run_lines
    counts = [count for count, _ in rests_on(history).values()]
    held, na = sum(map(bool, counts)), sum(not c for c in counts) - len(not_run)
    every = "every law checked held" if not_run else "every law that applies held"
    tally = f"{held} held, {na} not applicable" + (f", {len(not_run)} not run" if not_run else "")
    return [f"restart will work: {every} ({tally})", *not_run_lines]


def _file_of(history: History, broken: Broken) -> str:
    """` (FILE)`: where in the checkpoint the broken law shows, unless its message names it already."""
    if broken.step >= len(history.actions):
        return ""
    action = history.actions[broken.step]
    args, batch = action.args, action.args.get(LogArg.BATCH)
    where: dict[str, str] = {
        LogAction.OFFSETS: f"offsets/{batch}",
        LogAction.COMMIT: f"commits/{batch}",
        LogAction.SINK: f"_spark_metadata/{batch}{'.compact' if args.get(LogArg.COMPACT) else ''}",
        LogAction.STATE: f"state/{args.get(LogArg.OPERATOR)}/{args.get(LogArg.PARTITION)}",
        LogAction.STATE_OPERATOR: f"state/{args.get(LogArg.OPERATOR)}",
        LogAction.STATE_ROWS: f"state/{args.get(LogArg.OPERATOR)}",
    }
    found = where.get(action.name, "")
    return f" ({found})" if found and found not in broken.message else ""


def _details(
    args: argparse.Namespace,
    out: Any,
    history: History,
    verdict: Any,
    not_run: dict[str, str],
    verbose: bool,
) -> None:
    """What `--state` read (the state's rows, what Spark recorded); under `--verbose` the law table and
    the notes, else a line saying where they are."""
    if verbose:
        out.print(laws_table(args.directory, history, verdict.broken, not_run))
    if any(a.name == LogAction.STATE_ROWS for a in history.actions):
        out.print(state_rows_table(history))
    if getattr(args, "state", False):  # Spark is up: what it recorded, as `upgrade --checkpoint` reads it
        from frontier_harness.properties.adapters.upgrade import recorded_checkpoint
        from frontier_harness.properties.cli.recorded import recorded_table

        out.print(recorded_table(recorded_checkpoint(args.directory)))
    if verbose:
        for note in [n for n in verdict.notes if UNCHECKED not in n] + read_notes(history):
            out.print(f"note: {note}", markup=False, soft_wrap=True)
    else:
        out.print("(every law with the count it rests on, and the log: --verbose)", markup=False)


def is_log_check(cx: Counterexample) -> bool:
    """Whether `cx` is a log judged by the checkpoint laws (no model, no implementation: its table shows
    the law each step breaks)."""
    return cx.suite == SUITE_NAME


def slot_agreement(history: History, name: str, dsn: str | None, out: Any) -> int:
    """`--slot`: the slot read from PostgreSQL, judged against the checkpoint (`replication_slot`), one line."""
    import os

    from frontier_harness.properties.cli.replication_slot import agreement
    from frontier_harness.spark_impl.cdc import postgres
    from frontier_harness.spark_impl.cdc.slot import state
    from frontier_harness.spark_impl.errors import PostgresUnavailable

    dsn = dsn or os.environ.get(postgres.ENV_DSN)
    if not dsn:
        raise HarnessError(f"--slot needs the slot's database: --dsn CONNINFO or ${postgres.ENV_DSN}")
    try:
        with postgres.connect(dsn, timeout_s=10) as conn:
            found = state(conn, name)
    except PostgresUnavailable as exc:
        raise InfrastructureError(str(exc)) from exc
    slot = None if found is None else (found.confirmed_flush, found.restart_lsn, found.wal_status)
    code, line = agreement(history, name, slot)
    out.print(line, markup=False, soft_wrap=True)
    return code


def not_run_laws(history: History) -> dict[str, str]:
    """The laws that apply to the checkpoint but were not checked, and how to check them: `state evicted`
    when the checkpoint holds state whose rows were not read (`--state`).

    >>> from frontier_harness.properties.engine.history import Action
    >>> not_run_laws(History("total", (Action("state", {}),)))
    {'state evicted': 'pass --state'}
    >>> not_run_laws(History("total", (Action("state", {}), Action("state_rows", {}))))
    {}
    """
    names = {a.name for a in history.actions}
    holds_state = bool(names & {LogAction.STATE, LogAction.STATE_OPERATOR})
    return {STATE_EVICTED: PASS_STATE} if holds_state and LogAction.STATE_ROWS not in names else {}


def laws_table(
    directory: Path, history: History, broken: list[Broken], not_run: dict[str, str] | None = None
) -> Table:
    """Every law: broken, held over the count it rests on, not run (with how to run it), or not applicable
    (a count of zero)."""
    laws, not_run = {b.law for b in broken}, not_run or {}
    table = Table(title=f"validate-checkpoint {directory}")
    for column in ("law", "verdict", "rests on"):
        table.add_column(column)
    for law, (count, unit) in rests_on(history).items():
        verdict = (
            "[red]broken[/]"
            if law in laws
            else f"[yellow]not run ({not_run[law]})[/]"
            if law in not_run
            else "[green]held[/]"
            if count
            else "[dim]not applicable[/]"
        )
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


def not_checked(history: History, notes: list[str]) -> list[str]:
    """What the reader could not check, and why: a source whose offsets are in no shape it knows, state of
    a provider it does not know (`judge_log`'s notes).

    >>> from frontier_harness.properties.engine.history import Action
    >>> odd = Action("offsets", {"batch": 0, "source": "0", "unchecked": '{"cursor":"x0"}'})
    >>> not_checked(History("total", (odd,)), ["state of operator 1 unchecked: its files are not read"])
    ['not checked: the offsets of source 0: in no shape this reader knows, e.g. {"cursor":"x0"}', 'not checked: state of operator 1: its files are not read']
    """
    examples: dict[str, str] = {}
    for action in history.actions:
        if LogArg.UNCHECKED in action.args and action.name == LogAction.OFFSETS:
            examples.setdefault(action.args[LogArg.SOURCE], action.args[LogArg.UNCHECKED])
    return [
        f"not checked: the offsets of source {source}: in no shape this reader knows, e.g. {example}"
        for source, example in sorted(examples.items())
    ] + [f"not checked: {note.replace(UNCHECKED, ':', 1)}" for note in notes if UNCHECKED in note]


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
