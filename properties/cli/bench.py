"""The `bench` verb: figures measured side by side in one run, with this machine's calibration line.

The calibration (`frontier_harness.properties.bench.calibration`) is measured before
each benchmark and printed; `--json` records it with each figure; `--markdown FILE`
writes each benchmark's section of FILE (`docs/figures.md`,
`frontier_harness.properties.bench.page`) as soon as it is measured, headed by the
command, the date and the calibration line (the load, the cores, the machine's speed).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from frontier_harness.properties import bench
from frontier_harness.properties.bench import Figure, page
from frontier_harness.properties.bench.calibration import measure
from frontier_harness.properties.cli.arguments import positive_float
from frontier_harness.properties.engine.exit_codes import ExitCode


def add_parser(verbs: Any) -> argparse.ArgumentParser:
    """Adds `bench` to the CLI's subparsers."""
    p = verbs.add_parser("bench", help="side-by-side throughput figures, with this machine's calibration")
    p.add_argument("--json", type=Path, help="also write the figures and the calibration as JSON")
    p.add_argument(
        "--markdown", type=Path, metavar="FILE.md", help="also write each benchmark's section of this page"
    )
    p.add_argument("--scale", type=positive_float, default=1.0, help="fraction of the issue-sized workloads")
    p.add_argument("--only", action="append", choices=bench.NAMES, help="benchmark to run (repeatable)")
    return p


def run(args: argparse.Namespace, out: Console) -> int:
    """Each benchmark in turn, this machine's calibration measured just before it (the load moves during a
    long run); its Markdown section written as soon as it is measured."""
    rows = []
    for module in bench.modules(args.only or bench.NAMES):
        name = module.__name__.rsplit(".", 1)[1]
        calibration = measure()
        out.print(f"{name}: {calibration.line()}", markup=False)
        own = with_ratios(module.figures(args.scale))
        rows += [{**row, "benchmark": name, "calibration": attrs.asdict(calibration)} for row in own]
        if args.markdown:
            command = f"`frontier-harness bench --only {name} --scale {args.scale:g}`"
            page.write_section(args.markdown, f"bench {name}", markdown(own), command, calibration)
    out.print(_table(args.scale, rows))
    if args.json:
        args.json.write_text(json.dumps({"scale": args.scale, "figures": rows}, indent=1) + "\n")
    return ExitCode.HELD


def with_ratios(figures: list[Figure]) -> list[dict]:
    """Each figure as a dict, with `ratio`: its value over its baseline's (None without a baseline).

    >>> [r["ratio"] for r in with_ratios([Figure("a", 3.0, "s"), Figure("b", 6.0, "s", baseline="a")])]
    [None, 2.0]
    """
    values = {f.name: f.value for f in figures}
    return [
        {
            **attrs.asdict(f),
            "ratio": f.value / values[f.baseline] if f.baseline and values[f.baseline] else None,
        }
        for f in figures
    ]


def markdown(rows: list[dict]) -> str:
    """The figures as a Markdown table: value, unit, ratio to the baseline, goal, what it measures."""
    return page.table(
        ["figure", "value", "unit", "ratio", "goal", "what"],
        [[f"`{r['name']}`", number(r["value"]), r["unit"], _ratio(r), r["goal"], r["note"]] for r in rows],
    )


def number(value: float) -> str:
    """A figure with as many digits as it carries.

    >>> number(1357.4), number(6.318), number(0.2431)
    ('1,357', '6.32', '0.243')
    """
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


def _ratio(row: dict) -> str:
    return f"{row['ratio']:.2f}x `{row['baseline']}`" if row["ratio"] is not None else ""


def _table(scale: float, rows: list[dict]) -> Table:
    table = Table(title=f"frontier-harness bench (scale {scale})")
    for column in ("figure", "value", "unit", "ratio", "goal", "note"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["name"], f"{r['value']:,.2f}", r["unit"], _ratio(r).replace("`", ""), r["goal"], r["note"]
        )
    return table
