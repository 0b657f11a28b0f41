"""`frontier-harness list`: each suite's properties, what each runs against and compares with."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.pairings import MODEL, reference_of, runs_against


def add_parser(verbs: Any) -> None:
    verbs.add_parser("list", help="suites and their properties")


def run(args: argparse.Namespace, out: Console) -> int:
    """Each property, the implementations the default run judges with it, and what it compares with."""
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import SUITES

    model = load_implementation(MODEL)
    table = Table(title="suites")
    for column in ("suite", "property", "runs against", "reference", "what it checks"):
        table.add_column(column)
    for suite in SUITES.values():
        for prop in suite.properties:
            table.add_row(
                suite.name,
                prop.name,
                runs_against(suite, prop, model),
                reference_of(suite, prop).value,
                prop.doc.strip().splitlines()[0],
            )
    out.print(table)
    return ExitCode.HELD
