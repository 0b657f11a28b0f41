"""Terminal output with rich: result tables, and a counterexample as steps with the divergence marked."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.counterexample import Counterexample, render_observation
from frontier_harness.properties.engine.pairings import NO_ORACLE, PairingResult
from frontier_harness.properties.engine.results import HISTORIES, PropertyResult, SuiteResult
from frontier_harness.properties.engine.suite import Outcome
from frontier_harness.properties.engine.verdict import Verdict


class CounterexampleFiles:
    """Writes a counterexample file the moment a pairing finds a failure, and rewrites that same file in
    place each time shrinking makes it smaller (fewer actions), saying so on `out` both times.

    Pass `announce` as the runner's `found` hook; `final` writes the finished counterexample to the
    property's file (the one written when it was found) and returns its path.
    """

    def __init__(self, directory: Path, out: Console | None):
        self.directory, self.out = directory, out
        self.paths: dict[tuple[str, str, str, str], Path] = {}
        self.sizes: dict[tuple[str, str, str, str], int] = {}

    def announce(self, cx: Counterexample, event: str) -> None:
        key, size = (cx.suite, cx.property, cx.domain, cx.impl), cx.size
        if key in self.paths and size >= self.sizes[key]:
            return
        first = key not in self.paths
        path = self._write(cx)
        self.sizes[key] = size
        if self.out is not None:
            said = "found" if first else "shrunk to"
            then = "; shrinking it" if first else ""
            group = f" in {len(cx.histories)} histories that fail only together" if cx.together else ""
            self.out.print(
                f"{cx.suite}.{cx.property}[{cx.domain}]: counterexample {said} {size} actions{group}, "
                f"{'written to' if first else 'rewritten'} {path}{then}",
                markup=False,
                soft_wrap=True,
            )

    def final(self, cx: Counterexample) -> Path:
        self.sizes[(cx.suite, cx.property, cx.domain, cx.impl)] = cx.size
        return self._write(cx)

    def _write(self, cx: Counterexample) -> Path:
        key = (cx.suite, cx.property, cx.domain, cx.impl)
        if key not in self.paths:
            self.paths[key] = counterexample.write(cx, self.directory)
        else:
            self.paths[key].write_text(json.dumps(counterexample.to_itf(cx), indent=1) + "\n")
        return self.paths[key]


def replay_hint(cx: Counterexample, path: Path) -> str:
    """Where the file is and the command that replays it; for a user's job, a command that works in a new
    shell: from the directory the job was imported from, naming the module that must be importable there.

    >>> from frontier_harness.properties.engine.history import History
    >>> replay_hint(Counterexample("s", "p", History("total", ()), "spark"), Path("cx.json"))
    'counterexample written to cx.json; replay with: frontier-harness replay cx.json'
    """
    if not cx.job:
        return f"counterexample written to {path}; replay with: frontier-harness replay {path}"
    module = cx.job.split(":", 1)[0]
    return (
        f"counterexample written to {path}; replay with: cd {os.getcwd()} && frontier-harness replay "
        f"{path.resolve()} (the job's module {module} must be importable there)"
    )


def results_table(results: Sequence[PairingResult]) -> Table:
    """One row per suite, implementation, property and domain; the model's reference-only properties marked."""
    table = Table(title="frontier-harness check", show_lines=False)
    for column in (
        "suite",
        "impl",
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
    for pairing in results:
        for row in _pairing_rows(pairing):
            table.add_row(*row)
    return table


def _pairing_rows(pairing: PairingResult) -> list[tuple[str, ...]]:
    suite, impl = pairing.suite, pairing.impl
    rows: list[tuple[str, ...]] = [
        (
            suite,
            impl,
            r.property,
            r.domain,
            str(r.examples) if r.unit == HISTORIES else f"{r.examples} {r.unit}",
            str(r.rejected),
            r.hard_cases,
            f"{r.seconds:.1f}",
            verdict_text(r),
        )
        for r in pairing.result.results
    ]
    rows += [
        (suite, impl, name, "", "", "", "", "", f"[blue]{NO_ORACLE}[/]") for name in pairing.reference_only
    ]
    return rows + [
        (suite, impl, "(non-vacuity)", "", "", "", "", "", text) for text in reach_texts(pairing.result)
    ]


def verdict_text(r: PropertyResult) -> str:
    """A result's verdict as the table shows it, with the reason when it has no verdict either way.

    >>> from collections import Counter
    >>> verdict_text(PropertyResult("s", "p", "total", 0, 0.0, Counter()))
    '[yellow]not run: it checked 0 histories[/]'
    """
    colours = {
        Verdict.HELD: "green",
        Verdict.FAILED: "red",
        Verdict.NOT_RUN: "yellow",
        Verdict.STOPPED: "yellow",
    }
    colour = colours.get(r.verdict, "blue")
    text = "FAILED" if r.verdict is Verdict.FAILED else str(r.verdict)
    return f"[{colour}]{text}{': ' + escape(r.reason) if r.reason else ''}[/]"


def reach_texts(result: SuiteResult) -> list[str]:
    """One line per required hard case not reached, failing or not shown (a small run); one line for all
    those of a run cut short (not run: noise beside its failure).

    >>> from rich.text import Text
    >>> cut = SuiteResult("s", (), ("crash [total]",), ("restart [total]",), ("a [total]", "b [total]"))
    >>> [Text.from_markup(t).plain for t in reach_texts(cut)]
    ['never reached: crash [total]', 'not shown in 0 histories: restart [total] (run --profile ci)', 'not run: 2 hard cases (the run was cut short)']
    """
    n, cut = result.histories, len(result.not_run_events)
    missing = [f"[red]never reached: {escape(e)}[/]" for e in result.missing_events]
    unshown = [
        f"[yellow]not shown in {n} histories: {escape(e)} (run --profile ci)[/]"
        for e in result.not_shown_events
    ]
    return (
        missing
        + unshown
        + ([f"[yellow]not run: {cut} hard case{'s' * (cut > 1)} (the run was cut short)[/]"] if cut else [])
    )


def counterexample_table(cx: Counterexample, outcome: Outcome | None = None, log: bool = False) -> Table:
    """The steps, what each side observed at each, and the first divergence marked; for a `log` judged by
    laws (a checkpoint: no model and no implementation), the law each step breaks, the first marked."""
    expected = render_observation(outcome.expected if outcome else cx.model_said)
    actual = render_observation(outcome.actual if outcome else cx.impl_said)
    step = outcome.step if outcome else cx.step
    trace = outcome.trace if outcome else cx.trace
    table = Table(
        title=f"{cx.suite}.{cx.property} on {cx.domain} ({cx.impl})",
        caption=(outcome.message if outcome else cx.message)
        + "".join(f"\n  at {where(line)}" for line in trace),
        caption_justify="left",
    )
    for column in ("step", "action", "args", *(("broken law",) if log else ("model", "implementation")), ""):
        table.add_column(column)
    for k, other in enumerate(cx.together, 1):  # a group: the histories the first fails only together with
        for i, record in enumerate(other.to_json()):
            table.add_row(f"{k}:{i}", record["action"], _args(record["args"]), "", "", f"history {k}")
    records = [_applying(record, cx) for record in cx.history.to_json()]
    for i, record in enumerate(records + [{"action": "(end)", "args": {}}]):
        model_at, impl_at = _at_step(expected, i), _at_step(actual, i)
        mark = f"[bold red]<- {'first broken law' if log else 'first divergence'}[/]" if i == step else ""
        if i == len(records) and not (model_at or impl_at):
            continue
        style = "bold red" if i == step else None
        if i == step and trace and not impl_at:
            impl_at = f"raised at {where(trace[-1])}"
        said = (impl_at,) if log else (model_at, impl_at)
        table.add_row(str(i), record["action"], _args(record["args"]), *said, mark, style=style)
    return table


# Arguments that do not apply under a user's job (`--job`): the history's choice of our own sinks.
NOT_UNDER_A_JOB = ("sink",)


def _applying(record: dict, cx: Counterexample) -> dict:
    """A step as the table shows it: without the arguments that do not apply to the run."""
    if not cx.job:
        return record
    return {**record, "args": {k: v for k, v in record["args"].items() if k not in NOT_UNDER_A_JOB}}


def where(frame: str) -> str:
    """`file:line in function`, without the source text a frame line ends with.

    >>> where("pipe.py:3 in observe: x = rows[0]")
    'pipe.py:3 in observe'
    """
    head, sep, _ = frame.partition(": ")
    return head if sep and " in " in head else frame


def trace_lines(cx: Counterexample, outcome: Outcome | None) -> list[str]:
    """What `replay --trace` prints: the implementation's frames (as replayed, else as recorded), then the
    whole Python traceback of the replay when it raised."""
    from frontier_harness.properties.engine.diagnostics import full_traceback

    if outcome is not None and outcome.error is not None:
        own = [f"  at {line}" for line in outcome.trace]
        head = ["traceback, the implementation's own frames:", *own] if own else []
        return [*head, "full traceback:", full_traceback(outcome.error).rstrip()]
    if cx.trace:
        return ["no exception on replay; traceback as recorded:", *(f"  at {line}" for line in cx.trace)]
    return ["no exception on replay, none recorded"]


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
