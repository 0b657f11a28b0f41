"""The first divergence of a replay, in words a picture can carry (shared by every picture)."""

from __future__ import annotations

import textwrap
from typing import Any

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.suite import Outcome

RED = "#d62728"
WIDTH = 110  # characters a line of the caption holds


def step_of(cx: Counterexample, outcome: Outcome) -> int | None:
    """The step where the two sides first differ: the replay's, else the one the file recorded."""
    return outcome.step if outcome.step is not None else cx.step


def differing(outcome: Outcome, step: int | None) -> list[tuple[str, Any, Any]]:
    """(label, model's rows, implementation's rows) of each observation at `step` the sides differ on."""
    expected, actual = outcome.expected, outcome.actual
    if step is None or not isinstance(expected, dict) or not isinstance(actual, dict):
        return []
    keys = sorted({k for k in (*expected, *actual) if isinstance(k, tuple) and k[0] == step}, key=repr)
    return [(str(k[1]), expected.get(k), actual.get(k)) for k in keys if expected.get(k) != actual.get(k)]


def caption(cx: Counterexample, outcome: Outcome) -> str:
    """The divergence as wrapped lines: where, the message, and what each side saw there."""
    step = step_of(cx, outcome)
    where = "no divergent step recorded" if step is None else f"first divergence at step {step}"
    lines = [f"{where}: {outcome.message or cx.message or 'the replay holds now'}"]
    for label, model, impl in differing(outcome, step)[:3]:
        lines.append(f"  {label}: model {_rows(model)}  |  implementation {_rows(impl)}")
    head = textwrap.wrap(lines[0], WIDTH, subsequent_indent="  ")[:4]
    rows = [textwrap.shorten(line, WIDTH, placeholder=" …") for line in lines[1:]]
    return "\n".join(head + rows)


def _rows(rows: Any) -> str:
    if rows is None:
        return "nothing"
    if isinstance(rows, frozenset | set):
        return "{" + ", ".join(sorted(map(repr, rows))) + "}"
    return repr(rows)


def title(cx: Counterexample) -> str:
    return f"{cx.suite}.{cx.property} on {cx.domain} — {cx.impl}"


def under_axes(ax: Any, text: str, failed: bool = True) -> None:
    """`text` below `ax`'s x label, a fixed distance in points whatever the figure's size."""
    ax.annotate(
        text,
        (0, 0),
        xycoords="axes fraction",
        xytext=(-40, -42),
        textcoords="offset points",
        va="top",
        fontsize=8,
        family="monospace",
        color=RED if failed else "dimgray",
    )
