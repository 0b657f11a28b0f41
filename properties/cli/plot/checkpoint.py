"""A checkpoint history drawn as its offset log: each stream's end offset over batch ids.

Top: one line per stream (a source's partition; a total source is one stream), a filled
marker per committed batch and a hollow one for a batch without a commit. Bottom, when
the history has a file sink: the data files each sink log entry lists, compactions
hatched. Streams are named in the legend, beside the axes, so no label overprints another; each
stream is nudged sideways a little, so streams at the same offset do not hide one another.
The batch of the first broken law is a red line through both panels.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from frontier_harness.model.time.partitioned_time import PARTITION_MAX
from frontier_harness.properties.cli.plot.divergence import (
    RED,
    caption,
    differing,
    step_of,
    title,
    under_axes,
)
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome

DIVERGENCE_GID = "first-divergence"


def streams(history: History) -> dict[str, dict[int, int]]:
    """Stream name -> batch -> end offset, from the `offsets` actions in a shape the reader knows."""
    found: dict[str, dict[int, int]] = defaultdict(dict)
    for action in history.actions:
        args = action.args
        if action.name != "offsets" or not isinstance(args.get("offsets"), list):
            continue
        for stream, offset in _ends(str(args.get("source", "")), args.get("domain"), args["offsets"]):
            found[stream][int(args["batch"])] = offset
    return dict(found)


def _ends(source: str, domain: Any, offsets: list) -> list[tuple[str, int]]:
    if domain == "total":
        return [(f"source {source}", int(o)) for o in offsets[:1]]
    ends = []
    for lo, hi, offset in (o for o in offsets if isinstance(o, list) and len(o) == 3):
        if hi == PARTITION_MAX:
            continue  # the partitions not yet seen, all at 0
        name = f"p{lo}" if lo == hi else f"p{lo}-{hi}"
        ends.append((f"source {source} {name}", int(offset)))
    return ends


def sink_entries(history: History) -> dict[int, tuple[int, bool]]:
    """Batch -> (how many data files its sink log entry lists, whether it is a compaction)."""
    entries = {}
    for action in history.actions:
        if action.name == "sink" and "batch" in action.args:
            files = action.args.get("files", [])
            count = files if isinstance(files, int) else len(files or [])
            entries[int(action.args["batch"])] = (count, bool(action.args.get("compact")))
    return entries


def figure(cx: Counterexample, outcome: Outcome) -> Any:
    """The offset log's picture, or None for a history with no offsets to draw."""
    import matplotlib.pyplot as plt

    offsets, sinks = streams(cx.history), sink_entries(cx.history)
    if not offsets:
        return None
    commits = {int(a.args["batch"]) for a in cx.history.actions if a.name == "commit" and "batch" in a.args}
    panels = 2 if sinks else 1
    fig, axes = plt.subplots(
        panels,
        1,
        figsize=(10, 6 if sinks else 4.5),
        sharex=True,
        squeeze=False,
        height_ratios=(3, 1.3) if sinks else None,
    )
    top = axes[0][0]
    _offsets_panel(top, offsets, commits)
    if sinks:
        _sink_panel(axes[1][0], sinks)
    _mark_divergence([row[0] for row in axes], cx, outcome)
    axes[-1][0].set_xlabel("batch id")
    batches = sorted({b for s in offsets.values() for b in s} | set(sinks))
    axes[-1][0].set_xticks(_ticks(batches))
    fig.suptitle(title(cx), fontsize=10)
    under_axes(axes[-1][0], caption(cx, outcome), not outcome.ok)
    fig.tight_layout()
    return fig


def _ticks(batches: list[int]) -> list[int]:
    """Every batch id when they fit, else an even sample of them (tick labels never collide)."""
    if len(batches) <= 25:
        return batches
    every = -(-len(batches) // 25)
    return batches[::every]


def _offsets_panel(ax: Any, offsets: dict[str, dict[int, int]], commits: set[int]) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    count = len(offsets)
    for i, (name, by_batch) in enumerate(sorted(offsets.items())):
        batches = sorted(by_batch)
        colour, dodge = f"C{i % 10}", (i - (count - 1) / 2) * min(0.08, 0.5 / count)
        xs, ys = [b + dodge for b in batches], [by_batch[b] for b in batches]
        ax.plot(xs, ys, color=colour, marker="o", label=name, drawstyle="steps-post", alpha=0.9)
        open_ = [(b + dodge, by_batch[b]) for b in batches if b not in commits]
        if open_:
            ax.scatter(*zip(*open_), s=60, facecolors="white", edgecolors=colour, zorder=4)
    handles, _ = ax.get_legend_handles_labels()
    handles.append(
        Line2D([], [], marker="o", color="black", markerfacecolor="white", linestyle="", label="no commit")
    )
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_ylabel("end offset")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)


def _sink_panel(ax: Any, sinks: dict[int, tuple[int, bool]]) -> None:
    from matplotlib.patches import Patch

    for batch, (count, compact) in sorted(sinks.items()):
        ax.bar(
            batch,
            count,
            width=0.6,
            color="tab:gray",
            alpha=0.5,
            hatch="xx" if compact else None,
            edgecolor="black" if compact else "none",
        )
        ax.text(batch, count, str(count), ha="center", va="bottom", fontsize=7)
    handles = [
        Patch(facecolor="tab:gray", alpha=0.5, label="sink entry"),
        Patch(facecolor="tab:gray", alpha=0.5, hatch="xx", edgecolor="black", label="compaction"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_ylabel("files listed")
    ax.margins(y=0.25)


def _mark_divergence(axes: list, cx: Counterexample, outcome: Outcome) -> None:
    """A red line at the batch of the first broken law; a note when that step names no batch."""
    step = step_of(cx, outcome)
    if step is None:
        return
    actions = cx.history.actions
    batch = actions[step].args.get("batch") if step < len(actions) else None
    laws = ", ".join(label for label, _, _ in differing(outcome, step)) or "divergence"
    if batch is None:
        note = axes[0].text(
            0.01,
            0.98,
            f"first divergence at step {step} ({laws}): no batch",
            transform=axes[0].transAxes,
            va="top",
            color=RED,
            fontsize=9,
            weight="bold",
        )
        note.set_gid(DIVERGENCE_GID)
        return
    for ax in axes:
        ax.axvline(batch, color=RED, linewidth=2, alpha=0.7).set_gid(DIVERGENCE_GID)
    axes[0].annotate(
        f"first divergence: batch {batch} ({laws})",
        (batch, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(0, 4),
        textcoords="offset points",
        ha="center",
        color=RED,
        fontsize=9,
        weight="bold",
    )
