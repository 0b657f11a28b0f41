"""Terminal output with rich: result tables, and a counterexample as steps with the divergence marked."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from frontier_harness.properties.engine.counterexample import Counterexample, render_observation
from frontier_harness.properties.engine.runner import SuiteResult
from frontier_harness.properties.engine.suite import Outcome


def results_table(results: Sequence[SuiteResult]) -> Table:
    table = Table(title="frontier-harness check", show_lines=False)
    for column in (
        "suite",
        "property",
        "domain",
        "histories",
        "rejected",
        "hard cases",
        "seconds",
        "verdict",
    ):
        table.add_column(
            column, justify="right" if column in ("histories", "rejected", "seconds") else "left"
        )
    for suite in results:
        for r in suite.results:
            verdict = "[green]held[/]" if r.passed else "[red]FAILED[/]"
            table.add_row(
                suite.suite,
                r.property,
                r.domain,
                str(r.examples),
                str(r.rejected),
                str(len(r.events)),
                f"{r.seconds:.1f}",
                verdict,
            )
        for missing in suite.missing_events:
            table.add_row(
                suite.suite, "(non-vacuity)", "", "", "", "", "", f"[red]never reached: {missing}[/]"
            )
    return table


def counterexample_table(cx: Counterexample, outcome: Outcome | None = None) -> Table:
    """The steps, what each side observed at each, and the first divergence marked."""
    expected = render_observation(outcome.expected if outcome else cx.model_said)
    actual = render_observation(outcome.actual if outcome else cx.impl_said)
    step = outcome.step if outcome else cx.step
    table = Table(
        title=f"{cx.suite}.{cx.property} on {cx.domain} ({cx.impl})",
        caption=(outcome.message if outcome else cx.message),
    )
    for column in ("step", "action", "args", "model", "implementation", ""):
        table.add_column(column)
    records = cx.history.to_json()
    for i, record in enumerate(records + [{"action": "(end)", "args": {}}]):
        model_at, impl_at = _at_step(expected, i), _at_step(actual, i)
        mark = "[bold red]<- first divergence[/]" if i == step else ""
        if i == len(records) and not (model_at or impl_at):
            continue
        style = "bold red" if i == step else None
        table.add_row(str(i), record["action"], _args(record["args"]), model_at, impl_at, mark, style=style)
    return table


def _at_step(rendered: Any, step: int) -> str:
    if not isinstance(rendered, dict):
        return ""
    return "; ".join(
        f"{key.split(' ', 1)[1]}: {', '.join(rows) or '{}'}"
        for key, rows in rendered.items()
        if key.split(" ", 1)[0] == str(step)
    )


def _args(args: dict) -> str:
    return ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in args.items())


def console() -> Console:
    """Rich console; 160 columns when not a terminal (CI logs), so tables do not fold; no emoji codes
    (`pandas_impl:factory:` is an implementation, not a picture)."""
    probe = Console()
    return Console(highlight=False, emoji=False, width=None if probe.is_terminal else 160)
