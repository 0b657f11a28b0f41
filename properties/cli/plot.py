"""`replay --plot FILE.png`: a counterexample drawn as two panels (needs the `plot` extra).

Top: the history over its steps — each action's times (the offset, or the first
coordinate, of every time and frontier argument) with frontiers and remap
bindings as step lines. Bottom: how many rows the model and the implementation
observed at each step; the first divergence is marked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.history import FRONTIER_ARGS, TIME_ARGS
from frontier_harness.properties.engine.suite import Outcome


def plot(cx: Counterexample, outcome: Outcome, path: Path) -> Path:
    """Draws the counterexample to `path` (PNG)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise HarnessError("replay --plot needs matplotlib: pip install 'frontier-harness[plot]'") from exc
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, height_ratios=(3, 2))
    _history_panel(top, cx)
    _outputs_panel(bottom, cx, outcome)
    fig.suptitle(f"{cx.suite}.{cx.property} on {cx.domain} — {cx.impl}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _history_panel(ax: Any, cx: Counterexample) -> None:
    markers: dict[str, str] = {}
    for step, action in enumerate(cx.history.actions):
        marker = markers.setdefault(action.name, "os^vD*xP"[len(markers) % 8])
        for key, value in action.args.items():
            if key in TIME_ARGS:
                ax.scatter([step], [_scalar(value)], marker=marker, color="tab:blue", zorder=3)
            elif key in FRONTIER_ARGS and value is not None:
                for time in value:
                    ax.hlines(_scalar(time), step - 0.4, step + 0.4, color="tab:orange", linewidth=2)
        ax.annotate(
            action.name,
            (step, 0),
            textcoords="offset points",
            xytext=(0, -14),
            ha="center",
            fontsize=7,
            annotation_clip=False,
        )
    ax.set_ylabel("time (offset / first coordinate)")
    ax.set_title("history: points are times, bars are frontier elements", fontsize=9)


def _outputs_panel(ax: Any, cx: Counterexample, outcome: Outcome) -> None:
    steps = range(len(cx.history.actions) + 1)
    model = [_rows_at(outcome.expected, s) for s in steps]
    impl = [_rows_at(outcome.actual, s) for s in steps]
    ax.bar([s - 0.2 for s in steps], model, width=0.4, label="model", color="tab:green")
    ax.bar([s + 0.2 for s in steps], impl, width=0.4, label="implementation", color="tab:red")
    ax.set_xticks(list(steps))
    if outcome.step is not None:
        ax.axvline(outcome.step, color="red", alpha=0.4)
        ax.annotate("first divergence", (outcome.step, max(model + impl + [1])), color="red", fontsize=8)
    ax.set_xlabel("step")
    ax.set_ylabel("rows observed")
    ax.legend(fontsize=8)


def _rows_at(observation: dict | None, step: int) -> int:
    if not isinstance(observation, dict):
        return 0
    return sum(len(rows) for (s, _label), rows in observation.items() if s == step)


def _scalar(time: Any) -> float:
    """A number to draw a time at: an int itself, a pair's first coordinate, a Partitioned offset."""
    if isinstance(time, int):
        return time
    if isinstance(time, tuple):
        return _scalar(time[0])
    return getattr(time, "offset", 0)
