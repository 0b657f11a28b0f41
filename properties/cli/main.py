"""`frontier-harness`: check, verify, replay, prove, validate-checkpoint, upgrade, mutate, list, bench.

This module parses and dispatches; each verb is a module of its own beside it (`add_parser`, `run`).
Exit codes: 0 all held (over a count of histories that is never zero); 1 a property
failed (or a replayed counterexample still fails); 2 usage, bad input, a broken
contract, or a property that checked nothing ("not run"); 3 infrastructure (no Java,
Spark died, a planned lane that never came back); 4 an internal error of the harness,
with its traceback, to report.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import NoReturn

from rich.console import Console
from rich.markup import escape

from frontier_harness.properties.cli.machine import took
from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.diagnostics import describe
from frontier_harness.properties.engine.errors import HarnessError, InternalError
from frontier_harness.properties.engine.exit_codes import ExitCode, exit_code_of

# Each verb's module, in the order `--help` lists them.
VERBS = (
    "check",
    "verify",
    "prove",
    "mutate",
    "replay",
    "validate_checkpoint",
    "upgrade",
    "list_suites",
    "bench",
)
TIMED = ("check", "verify", "upgrade")  # verbs whose wall time is printed, with what it was measured on


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line and exit 2, never a traceback
        raise HarnessError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="frontier-harness", description=__doc__.splitlines()[0])
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--remote", help="Spark Connect URL (default: $SPARK_REMOTE)")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also show Spark's own log (always in .frontier-harness/spark.log)",
    )
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    for name in VERBS:
        verb_module(name).add_parser(verbs)
    return parser


def verb_module(name: str) -> ModuleType:
    """The module of verb `name` (`check`, `validate_checkpoint`): its `add_parser` and `run`."""
    return importlib.import_module(f"frontier_harness.properties.cli.{name}")


def main(argv: Sequence[str] | None = None) -> int:
    out = report.console()
    try:
        args = build_parser().parse_args(argv)
        _configure_spark(args)
        started = time.perf_counter()
        code = _ran(verb_module(_module_of(args.verb)).run, args, out)
        if args.verb in TIMED:
            out.print(took(args.verb, time.perf_counter() - started), markup=False)
        return code
    except Exception as exc:
        return report_error(out, exc)


def _ran(run: Callable[[argparse.Namespace, Console], int], args: argparse.Namespace, out: Console) -> int:
    """The verb's exit code. A `SystemExit` (or another `BaseException`) from inside it is code that exited
    where the verb had to go on: never the verb's exit code (a 0 there would claim what never ran), but an
    error of its own (exit 4, with its traceback); Ctrl-C still stops it."""
    try:
        return run(args, out)
    except (Exception, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise RuntimeError(f"{describe(exc)} raised inside `{args.verb}`") from exc


def _module_of(verb: str) -> str:
    """The module of a verb as typed (`validate-checkpoint`, `list`).

    >>> _module_of("validate-checkpoint"), _module_of("list")
    ('validate_checkpoint', 'list_suites')
    """
    return "list_suites" if verb == "list" else verb.replace("-", "_")


def report_error(out: Console, exc: Exception) -> ExitCode:
    """Whose fault `exc` is (`exit_code_of`), said in one line for bad input (2) and infrastructure (3);
    anything else is the harness's own bug (4), printed with its traceback to report. Never 1: only a
    counterexample fails a run."""
    code = exit_code_of(exc)
    if code is ExitCode.USAGE:
        out.print(f"error: {exc}", markup=False, soft_wrap=True)
    elif code is ExitCode.INFRASTRUCTURE:
        out.print(f"[bold]infrastructure:[/] {escape(str(exc))}", markup=True, soft_wrap=True)
    else:
        if isinstance(exc, InternalError):  # raised in the background process: its traceback, as text
            trace, what = exc.traceback, str(exc)
        else:
            trace, what = "".join(traceback.format_exception(exc)), f"{type(exc).__name__}: {exc}"
        out.print(trace.rstrip(), markup=False, highlight=False, soft_wrap=True)
        out.print(f"internal error: {what}: please report it, with the traceback above", markup=False)
    return code


def _configure_spark(args: argparse.Namespace) -> None:
    if args.master or args.remote or args.verbose:
        from frontier_harness.properties.adapters.spark import configure

        configure(master=args.master, remote=args.remote, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
