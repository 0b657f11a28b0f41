"""`frontier-harness upgrade --to NEW [--from OLD] [--checkpoint DIR]`: will a changed stateful job restart on
the running query's checkpoint, and will its results stay right? Decided before the deploy, no data run.

Plans the new job, and the old one (`--from`), or reads what Spark recorded in the running query's
checkpoint (`--checkpoint`, without the old code), or both (`frontier_harness.properties.adapters.upgrade`),
then compares what Spark keys a checkpoint on (`frontier_harness.model.upgrade.compare`): the sources, each
stateful operator (kind, id, state key and value schemas, how they are computed, window, aggregates), the
watermark delays, the settings `offsets/N` pins, the output mode and columns. Each difference gets one of
three verdicts, with its rule and the Spark source or doc it comes from: `restart fails` (the error Spark
raises and the smallest change that avoids it), `restarts, results change` (the rows that mix old and new
logic; from a checkpoint, the groups its state holds, named), `safe`.

Exit 0 when every difference is safe (or there is none), over a count of what was compared that is never
zero; 1 when a restart fails or results change, each named; 2 on bad input (a job that cannot be imported
or planned, a directory that is not a checkpoint, a change the model cannot judge, named with why); 3 when
Spark cannot run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from frontier_harness.model.upgrade.compare import compare, merged
from frontier_harness.model.upgrade.difference import Comparison
from frontier_harness.model.upgrade.output import restored
from frontier_harness.model.vocabulary.event_time import Recorded
from frontier_harness.model.vocabulary.upgrade import Verdict
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.exit_codes import ExitCode

COLOURS = {Verdict.RESTART_FAILS: "red", Verdict.RESULTS_CHANGE: "yellow", Verdict.SAFE: "green"}


def add_parser(verbs: Any) -> None:
    verb = verbs.add_parser(
        "upgrade",
        help="will a changed stateful job restart on the running query's checkpoint, and will its results stay right?",
    )
    verb.add_argument("--to", required=True, metavar="MODULE:FACTORY", help="the new job")
    verb.add_argument("--from", dest="old", metavar="MODULE:FACTORY", help="the job running now")
    verb.add_argument(
        "--checkpoint",
        type=Path,
        help="the running query's checkpointLocation (read without the old job's code)",
    )
    verb.add_argument(
        "--job-dir",
        type=Path,
        help="the directory the jobs' factories are called with (default: a scratch one)",
    )


def run(args: argparse.Namespace, out: Any) -> int:
    from frontier_harness.properties.adapters.upgrade import recorded_checkpoint, recorded_job

    if not args.old and not args.checkpoint:
        raise HarnessError("upgrade needs what runs now: --from MODULE:FACTORY, --checkpoint DIR, or both")
    written = recorded_checkpoint(args.checkpoint) if args.checkpoint else None
    new = recorded_job(args.to, args.job_dir, restored(written[Recorded.CONF]) if written else None)
    plan = recorded_job(args.old, args.job_dir) if args.old else None
    old = merged(plan, written) if plan is not None and written is not None else plan or written
    assert old is not None
    comparison = compare(old, new)
    report(out, comparison)
    return ExitCode.HELD if comparison.outcome() is Verdict.SAFE else ExitCode.FAILED


def report(out: Any, comparison: Comparison) -> None:
    """The differences as a table, each failing one's error and fix or rows, then what was compared and the
    upgrade's verdict."""
    if comparison.differences:
        table = Table(title="upgrade: what Spark keys the checkpoint on, old job -> new job")
        for column in ("area", "change", "verdict"):
            table.add_column(column)
        for d in comparison.differences:
            table.add_row(d.area, d.what, f"[{COLOURS[d.verdict]}]{d.verdict.value}[/]")
        out.print(table)
        for d in comparison.differences:
            out.print(f"- {d.line()}", markup=False, soft_wrap=True)
    out.print(f"compared: {', '.join(comparison.compared)}", markup=False, soft_wrap=True)
    for note in comparison.not_compared:
        out.print(f"not compared: {note}", markup=False, soft_wrap=True)
    out.print(verdict_line(comparison), markup=False, soft_wrap=True)


def verdict_line(comparison: Comparison) -> str:
    """The upgrade's verdict in one line: the error Spark raises first, or whether results change.

    >>> verdict_line(Comparison((), ("1 source(s)",)))
    'upgrade verdict: safe: no difference in what Spark keys the checkpoint on'
    """
    outcome = comparison.outcome()
    if outcome is Verdict.RESTART_FAILS:
        return f"upgrade verdict: restart fails: Spark raises {comparison.error()}"
    failing = sum(d.failing for d in comparison.differences)
    if outcome is Verdict.RESULTS_CHANGE:
        return f"upgrade verdict: restarts, results change ({failing} difference(s) change them)"
    if comparison.differences:
        return f"upgrade verdict: safe: every one of the {len(comparison.differences)} difference(s) is safe"
    return "upgrade verdict: safe: no difference in what Spark keys the checkpoint on"
