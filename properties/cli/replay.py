"""`frontier-harness replay FILE`: a counterexample file's history checked again, model and implementation.

Exit 1 while it still fails, 0 once it holds; the implementation (and the job) the file recorded unless
`--impl` (or `--job`) says another; `--plot` draws it, `--trace` prints the traceback of a raise.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from frontier_harness.properties.cli.arguments import job_option
from frontier_harness.properties.engine import counterexample, report
from frontier_harness.properties.engine.diagnostics import set_up
from frontier_harness.properties.engine.exit_codes import ExitCode


def add_parser(verbs: Any) -> None:
    verb = verbs.add_parser("replay", help="re-run a counterexample file on model and implementation")
    verb.add_argument("file", type=Path)
    verb.add_argument("--impl", help="override the implementation recorded in the file")
    job_option(verb)
    verb.add_argument(
        "--plot", type=Path, metavar="FILE.png", help="also draw the counterexample (needs the plot extra)"
    )
    verb.add_argument(
        "--trace", action="store_true", help="print the traceback when the implementation raises"
    )


def run(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.cli.run import with_job
    from frontier_harness.properties.cli.validate_checkpoint import is_log_check
    from frontier_harness.properties.engine.runner import replay

    cx = counterexample.read(args.file)
    suite, spec = get_suite(cx.suite), args.impl or cx.impl
    impl = with_job(suite, load_implementation(spec), args.job or cx.job, args.impl)
    suite.require(impl, spec)
    set_up(impl, spec)
    outcome = replay(suite, impl, cx)
    out.print(report.counterexample_table(cx, outcome, log=is_log_check(cx)))
    if args.trace:
        out.print("\n".join(report.trace_lines(cx, outcome)), markup=False, highlight=False)
    if args.plot:
        from frontier_harness.properties.cli.plot import no_plot_message, plot

        drawn = plot(cx, outcome, args.plot)
        out.print(f"drawn to {drawn}" if drawn else no_plot_message(cx), markup=False)
    if outcome.ok:
        out.print("[green]holds now[/]: the counterexample no longer reproduces")
        if cx.message:  # what it failed with, so a failure that depends on timing or on the machine is seen
            out.print(f"when it was found ({cx.impl}): {cx.message}", markup=False, soft_wrap=True)
        return ExitCode.HELD
    out.print(f"[red]still fails[/]: {outcome.message}", soft_wrap=True)
    return ExitCode.FAILED
