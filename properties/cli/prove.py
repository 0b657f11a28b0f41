"""The `prove` verb: each obligation PROVED (with its time) or REFUTED with a replayable scenario.

A case whose goal holds without any hypothesis is counted `trivial`, not `proved`.
Exit 0 when every obligation is proved (at least one case of it needed the rules);
1 when one is refuted (a counterexample file is written under `--out` when the
refutation can be realized on the model's world); 3 when the solver timed out, hit
its resource limit or failed and nothing was refuted — never reported as proved;
2, with a line naming it, when an obligation had no case ("not run") or only
trivial ones: nothing about the rules was proved.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from frontier_harness.properties.cli.arguments import non_negative_int, positive_float
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.solver.check import ProofStatus, Result, prove
from frontier_harness.properties.solver.encoding import FAITHFUL, Rules
from frontier_harness.properties.solver.registry import NAMES

DEFAULT_OUT = Path(".frontier-harness/counterexamples")


def add_parser(verbs: Any) -> argparse.ArgumentParser:
    """Adds `prove` to the CLI's subparsers."""
    p = verbs.add_parser("prove", help="prove with z3 that dataflow expiration never drops visible data")
    p.add_argument(
        "--obligation",
        action="append",
        choices=NAMES,
        help="obligation to prove (repeatable; default all)",
    )
    p.add_argument("--json", type=Path, help="also write the verdicts as JSON")
    p.add_argument("--timeout", type=positive_float, default=10.0, help="solver timeout per case, in seconds")
    p.add_argument(
        "--rlimit",
        type=non_negative_int,
        help="solver resource limit per case (deterministic, unlike --timeout)",
    )
    p.add_argument(
        "--skew",
        type=non_negative_int,
        default=0,
        help="let a table or source get up to this many ticks further ahead of the wall clock than it was "
        "when the dataflow was rendered (default 0, the bound the inputs_upper > expiration branch "
        "handles; every lead or lag present at the render is covered)",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where counterexample files go")
    return p


def run(
    args: argparse.Namespace,
    console: Any,
    rules: Rules = FAITHFUL,
    impl: Any = None,
    impl_name: str = "model",
) -> int:
    """Proves the chosen obligations with `rules` (the model's, unless a test plants a bug) and reports."""
    from frontier_harness.properties.adapters.model import ModelImplementation

    impl = impl if impl is not None else ModelImplementation()
    started = time.perf_counter()
    results = prove(args.obligation, rules, args.skew, args.timeout, args.rlimit)
    written = {
        r.obligation.name: _refutation(r, rules, impl, impl_name, args.out, console, args.skew)
        for r in results
        if r.status == "refuted"
    }
    console.print(_table(results, args.skew, time.perf_counter() - started))
    for line in vacuous(results):
        console.print(line, markup=False)
    if args.json:
        args.json.write_text(json.dumps(_as_json(results, written, args.skew), indent=1) + "\n")
    return exit_code(results)


def exit_code(results: list[Result]) -> int:
    """1 if any obligation is refuted, else 3 if any is unknown or failed, else 2 if one proved nothing
    (no case, or only trivial ones), else 0: every one proved."""
    statuses = {r.status for r in results}
    if ProofStatus.REFUTED in statuses:
        return ExitCode.FAILED
    if statuses & {ProofStatus.UNKNOWN, ProofStatus.ERROR}:
        return ExitCode.INFRASTRUCTURE
    return ExitCode.HELD if all(r.holds for r in results) and results else ExitCode.USAGE


def vacuous(results: list[Result]) -> list[str]:
    """A line for each obligation that proved nothing: no case, or only cases true without the rules."""
    reasons = {
        ProofStatus.NOT_RUN: "it has no case",
        ProofStatus.TRIVIAL: "every case holds without any hypothesis",
    }
    return [f"not proved: {r.obligation.name}: {reasons[r.status]}" for r in results if r.status in reasons]


def _refutation(
    result: Result, rules: Rules, impl: Any, impl_name: str, out: Path, console: Any, skew: int
) -> str | None:
    """Prints each refuted case; writes the first realizable one as a counterexample file."""
    from frontier_harness.properties.engine import report
    from frontier_harness.properties.solver.realize import realize

    path = None
    for verdict in (v for v in result.verdicts if v.status == "refuted"):
        values = ", ".join(f"{k}={v}" for k, v in verdict.values.items())
        console.print(
            f"[red]REFUTED[/] {result.obligation.name} {escape(f'[{verdict.case.label}]')}: {values}",
            soft_wrap=True,
        )
        if verdict.case.assumption:
            console.print(f"  the code relies on: {verdict.case.assumption}", markup=False, soft_wrap=True)
        if path is not None:
            continue
        realized = realize(verdict, rules, impl, impl_name, skew=skew)
        if realized is None:
            console.print(
                f"  no small scenario on the model's world (skews that gain at most {skew}) shows it",
                soft_wrap=True,
            )
            continue
        console.print(report.counterexample_table(realized.counterexample, realized.outcome))
        path = str(counterexample.write(realized.counterexample, out))
        console.print(
            f"counterexample written to {path}; replay with: frontier-harness replay {path}"
            + ("" if impl_name == "model" else f" --impl {impl_name}"),
            markup=False,
            soft_wrap=True,
        )
    return path


def _table(results: list[Result], skew: int, seconds: float) -> Table:
    table = Table(title=f"frontier-harness prove (skew {skew}; {seconds:.2f} s in all)")
    for column in ("obligation", "cases", "verdict", "what it says"):
        table.add_column(column)
    for r in results:
        table.add_row(r.obligation.name, str(len(r.verdicts)), _verdict(r), r.obligation.doc)
    return table


def _verdict(r: Result) -> str:
    held = f"{r.count('proved')} proved, {r.count('trivial')} trivial; {r.seconds:.2f} s"
    if r.status == "proved":
        return f"[green]PROVED[/] ({held})"
    if r.status == "trivial":
        return f"[yellow]TRIVIAL[/] ({held}): holds without any hypothesis, proves nothing"
    if r.status == "not run":
        return "[yellow]NOT RUN[/] (no case): proves nothing"
    if r.status == "refuted":
        return f"[red]REFUTED[/] ({sum(v.status == 'refuted' for v in r.verdicts)} cases)"
    reasons = sorted({v.reason for v in r.verdicts if v.status in ("unknown", "error")})
    return f"[yellow]{r.status.upper()}[/] ({'; '.join(reasons)}): not proved"


def _as_json(results: list[Result], written: dict, skew: int) -> dict:
    return {
        "skew": skew,
        "obligations": [
            {
                "name": r.obligation.name,
                "status": r.status,
                "seconds": r.seconds,
                "counterexample": written.get(r.obligation.name),
                "cases": [
                    {
                        "label": v.case.label,
                        "status": v.status,
                        "seconds": v.seconds,
                        "values": v.values,
                        "reason": v.reason,
                    }
                    for v in r.verdicts
                ],
            }
            for r in results
        ],
    }
