"""A history of times drawn in the time domain itself: one axis for a total domain, the plane for pairs.

Total times lie on the x axis with the history's steps down the y axis. A Product time
`(a, b)` is the point (a, b); a Partitioned time `[lo,hi]@offset` is a segment over its
partitions at height `offset` (the range of unseen partitions, up to MAX, in a last column).
An update is a marker whose shape and colour give its sign and whose label its diff and
data; a compaction or other frontier is the region it covers (its upward closure: the times
beyond it); a read is the region whose updates it sums (times at or before it). The action
where the model and the implementation first differ is ringed in red.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import attrs

from frontier_harness.model.time.domains import Partitioned, Product, Total
from frontier_harness.model.time.partitioned_time import PARTITION_MAX, PartitionedTime
from frontier_harness.properties.cli.plot.divergence import (
    RED,
    caption,
    differing,
    step_of,
    title,
    under_axes,
)
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import FRONTIER_ARGS, TIME_ARGS, History
from frontier_harness.properties.engine.suite import Outcome

UP, DOWN, PLAIN = "#2ca02c", "#d62728", "#7f7f7f"
REGION_COLOURS = ("tab:orange", "tab:purple", "tab:brown", "tab:olive", "tab:cyan", "tab:pink")
READ = "tab:blue"
DIVERGENCE_GID = "first-divergence"


@attrs.frozen
class Mark:
    """One time argument of one action; `diff` only for an update."""

    step: int
    action: str
    time: Any
    diff: int | None = None
    data: Any = None

    @property
    def is_read(self) -> bool:
        return self.action == "read"

    def label(self) -> str:
        if self.diff is None:
            return f"s{self.step} {self.action}"
        data = "" if self.data is None else f" {self.data}"
        return f"s{self.step} {self.diff:+d}{data}"


@attrs.frozen
class Region:
    """A frontier argument of one action: the times beyond `elements` (none when it is empty)."""

    step: int
    action: str
    key: str
    elements: tuple
    extra: str = ""  # the action's other plain arguments (a mint's tick), for the legend

    def label(self, show: Any) -> str:
        shown = ", ".join(show(t) for t in self.elements) or "empty: no time is beyond it"
        name = self.key if self.key == self.action else f"{self.action} {self.key}"
        return f"s{self.step} {name} {{{shown}}}" + (f" {self.extra}" if self.extra else "")


def marks(history: History) -> list[Mark]:
    """Every time argument, in history order."""
    return [
        Mark(step, a.name, value, a.args.get("diff"), a.args.get("data"))
        for step, a in enumerate(history.actions)
        for key, value in a.args.items()
        if key in TIME_ARGS and value is not None
    ]


def regions(history: History) -> list[Region]:
    """Every frontier argument, in history order."""
    return [
        Region(step, a.name, key, tuple(value), _plain(a.args))
        for step, a in enumerate(history.actions)
        for key, value in a.args.items()
        if key in FRONTIER_ARGS and value is not None
    ]


def _plain(args: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in args.items() if isinstance(v, int | str) and k not in TIME_ARGS)


def figure(cx: Counterexample, outcome: Outcome) -> Any:
    """The history's picture, or None for a domain it cannot draw (not total, a pair of totals, partitioned)."""
    domain = cx.history.time_domain
    if isinstance(domain, Total):
        return _total_figure(cx, outcome)
    if isinstance(domain, Product) and isinstance(domain.a, Total) and isinstance(domain.b, Total):
        return _plane_figure(cx, outcome, ProductPlane())
    if isinstance(domain, Partitioned):
        return _plane_figure(cx, outcome, PartitionedPlane.of(cx.history))
    return None


def _new_figure(cx: Counterexample, outcome: Outcome, size: tuple[float, float]) -> tuple[Any, Any]:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    fig.suptitle(title(cx), fontsize=10)
    under_axes(ax, caption(cx, outcome), not outcome.ok)
    return fig, ax


def _draw_update(ax: Any, x: float, y: float, mark: Mark) -> None:
    if mark.is_read:
        ax.scatter([x], [y], marker="+", s=60, color=READ, zorder=3)
    elif mark.diff is None:
        ax.scatter([x], [y], marker="o", s=30, color=PLAIN, zorder=4)
    else:
        colour, shape = (UP, "^") if mark.diff > 0 else (DOWN, "v")
        ax.scatter([x], [y], marker=shape, s=40 + 25 * min(abs(mark.diff), 6), color=colour, zorder=4)


def _legend(ax: Any, extra: list) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Line2D(
            [], [], marker="^", color=UP, linestyle="", label="update, diff > 0 (label: step, diff, data)"
        ),
        Line2D([], [], marker="v", color=DOWN, linestyle="", label="update, diff < 0"),
        Line2D([], [], marker="o", color=PLAIN, linestyle="", label="other time argument"),
        Line2D([], [], marker="+", color=READ, linestyle="", label="read's time"),
        Patch(facecolor="none", edgecolor=READ, hatch="///", label="read: the times it sums"),
        Patch(facecolor="none", edgecolor=RED, linewidth=2, label="first divergence"),
        *extra,
    ]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


# --- a total domain: times on the x axis, steps down the y axis --------------------------------


def _total_figure(cx: Counterexample, outcome: Outcome) -> Any:
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    actions, step = cx.history.actions, step_of(cx, outcome)
    rows = len(actions) + (1 if step is not None and step >= len(actions) else 0)
    fig, ax = _new_figure(cx, outcome, (10, 1.2 + 0.38 * max(rows, 4)))
    found = marks(cx.history)
    frontiers = regions(cx.history)
    right = max([m.time for m in found] + [t for r in frontiers for t in r.elements] + [0]) + 1.5
    for r in frontiers:
        if r.elements:
            low = min(r.elements)
            ax.barh(r.step, right - low + 0.25, left=low - 0.25, height=0.6, color="tab:orange", alpha=0.3)
            ax.text(low - 0.3, r.step, f"{r.key} ", ha="right", va="center", fontsize=7, color="tab:orange")
        else:
            ax.text(0, r.step, f"{r.key} {{}} (empty)", va="center", fontsize=7, color="tab:orange")
    for m in found:
        if m.is_read:
            ax.barh(m.step, m.time + 0.5, left=-0.25, height=0.6, fill=False, edgecolor=READ, hatch="///")
        _draw_update(ax, m.time, m.step, m)
        if m.diff is not None:
            ax.annotate(
                f"{m.diff:+d} {m.data or ''}",
                (m.time, m.step),
                xytext=(7, -3),
                textcoords="offset points",
                fontsize=8,
            )
    labels = [f"s{i} {a.name}" for i, a in enumerate(actions)] + (["final"] if rows > len(actions) else [])
    ax.set_yticks(range(rows), labels, fontsize=7)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xlim(-0.75, right)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("time")
    ax.grid(axis="x", alpha=0.3)
    if step is not None:
        span = ax.axhspan(step - 0.45, step + 0.45, facecolor="none", edgecolor=RED, linewidth=2, zorder=5)
        span.set_gid(DIVERGENCE_GID)
    _legend(ax, [Patch(facecolor="tab:orange", alpha=0.3, label="frontier: the times beyond it")])
    return fig


# --- two dimensions: Product pairs and Partitioned (partition, offset) --------------------------


class ProductPlane:
    """`(a, b)` at x = a, y = b; a frontier's upward closure is a staircase of quadrants."""

    xlabel, ylabel = "first coordinate a", "second coordinate b"

    def span(self, time: tuple) -> tuple[float, float, float]:
        return time[0], time[0], time[1]

    def show(self, time: tuple) -> str:
        return f"({time[0]},{time[1]})"

    def is_time(self, value: Any) -> bool:
        return (
            isinstance(value, tuple)
            and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        )

    def up(self, elements: tuple, right: float, top: float) -> list[list[tuple[float, float]]]:
        minimal = sorted(
            t for t in elements if not any(u != t and u[0] <= t[0] and u[1] <= t[1] for u in elements)
        )
        if not minimal:
            return []
        pad = 0.2
        corner = [(minimal[0][0] - pad, top)]
        for (a, b), nxt in zip(minimal, [*minimal[1:], None]):
            corner += [(a - pad, b - pad), ((nxt[0] - pad) if nxt else right, b - pad)]
        return [[*corner, (right, top)]]

    def down(self, time: tuple) -> list[tuple[float, float]]:
        a, b = time[0] + 0.25, time[1] + 0.25
        return [(-0.4, -0.4), (a, -0.4), (a, b), (-0.4, b)]

    def ticks(self, ax: Any, right: float) -> None:
        ax.set_xticks(range(int(right) + 1))


@attrs.frozen
class PartitionedPlane:
    """`[lo,hi]@offset` as a segment over partitions lo..hi at height offset; MAX is the last column.

    `Partitioned.le(a, b)` holds iff a's interval contains b's and a's offset is at most b's,
    so an element's upward closure is the rectangle over its partitions from its offset up.
    """

    rest: int  # the column standing for every partition from the largest named one up to MAX
    xlabel: str = "partition (the last column: up to MAX)"
    ylabel: str = "offset"

    @classmethod
    def of(cls, history: History) -> PartitionedPlane:
        times = [m.time for m in marks(history)] + [t for r in regions(history) for t in r.elements]
        named = [b for t in times for b in (t.lo, t.hi) if b != PARTITION_MAX]
        return cls(max(named, default=0) + 1)

    def _hi(self, time: PartitionedTime) -> int:
        return self.rest if time.hi == PARTITION_MAX else time.hi

    def span(self, time: PartitionedTime) -> tuple[float, float, float]:
        return time.lo, self._hi(time), time.offset

    def show(self, time: PartitionedTime) -> str:
        return repr(time)

    def is_time(self, value: Any) -> bool:
        return isinstance(value, PartitionedTime)

    def up(self, elements: tuple, right: float, top: float) -> list[list[tuple[float, float]]]:
        boxes = []
        for t in elements:
            lo, hi, y = t.lo - 0.4, self._hi(t) + 0.4, t.offset - 0.2
            boxes.append([(lo, y), (hi, y), (hi, top), (lo, top)])
        return boxes

    def down(self, time: PartitionedTime) -> list[tuple[float, float]]:
        lo, hi, y = time.lo - 0.35, self._hi(time) + 0.35, time.offset + 0.25
        return [(lo, -0.4), (hi, -0.4), (hi, y), (lo, y)]

    def ticks(self, ax: Any, right: float) -> None:
        ax.set_xticks(range(self.rest + 1), [*map(str, range(self.rest)), f"{self.rest}..MAX"])


def _plane_figure(cx: Counterexample, outcome: Outcome, plane: Any) -> Any:
    from matplotlib.patches import Patch, Polygon
    from matplotlib.ticker import MaxNLocator

    fig, ax = _new_figure(cx, outcome, (10, 7))
    found, frontiers, step = marks(cx.history), regions(cx.history), step_of(cx, outcome)
    spans = [plane.span(t) for t in [m.time for m in found] + [t for r in frontiers for t in r.elements]]
    right = max([hi for _, hi, _ in spans] + [1]) + 1.0
    top = max([y for _, _, y in spans] + [1]) + 1.0
    extra = []
    for i, r in enumerate(frontiers):
        colour = REGION_COLOURS[i % len(REGION_COLOURS)]
        edge = RED if r.step == step else colour
        for box in plane.up(r.elements, right, top):
            patch = Polygon(
                box,
                closed=True,
                facecolor=colour,
                alpha=0.18,
                edgecolor=edge,
                linewidth=2 if edge == RED else 1,
            )
            if r.step == step:
                patch.set_gid(DIVERGENCE_GID)
            ax.add_patch(patch)
        extra.append(Patch(facecolor=colour, alpha=0.3, label=r.label(plane.show)))
    for m in found:
        if m.is_read:
            edge = RED if m.step == step else READ
            ax.add_patch(
                Polygon(plane.down(m.time), closed=True, fill=False, edgecolor=edge, hatch="///", alpha=0.6)
            )
    _draw_points(ax, plane, found)
    extra += _draw_observed(ax, plane, outcome, step)
    if step is not None:
        outlined = any(r.step == step and r.elements for r in frontiers)
        here = [m for m in found if m.step == step]
        _mark_divergence(ax, plane, here, step, len(cx.history.actions), (right, top), outlined)
    plane.ticks(ax, right)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(-0.6, right + 0.2)
    ax.set_ylim(-0.6, top + 0.2)
    ax.set_xlabel(plane.xlabel)
    ax.set_ylabel(plane.ylabel)
    ax.grid(alpha=0.3)
    _legend(ax, extra)
    return fig


def _draw_points(ax: Any, plane: Any, found: list[Mark]) -> None:
    """Each time as a marker (a segment too over a partition range), its actions listed beside it."""
    at: dict[tuple[float, float], list[Mark]] = defaultdict(list)
    for m in found:
        lo, hi, y = plane.span(m.time)
        if hi > lo:
            ax.plot(
                [lo, hi],
                [y, y],
                color=PLAIN if m.diff is None else (UP if m.diff > 0 else DOWN),
                linewidth=3,
                alpha=0.6,
            )
        x = (lo + hi) / 2
        _draw_update(ax, x, y, m)
        at[(x, y)].append(m)
    for (x, y), here in at.items():
        lines: list[str] = []
        for m in here[:5]:
            shown = plane.show(m.time)
            lines += [] if shown in lines else [shown]
            lines.append(f"  {m.label()}")
        text = "\n".join(lines) + (f"\n  … {len(here) - 5} more" if len(here) > 5 else "")
        ax.annotate(text, (x, y), xytext=(8, 4), textcoords="offset points", fontsize=7, va="bottom")


def _draw_observed(ax: Any, plane: Any, outcome: Outcome, step: int | None) -> list:
    """What each side observed at the divergent step, where its rows name times: the model's rows
    as black squares, the implementation's as red crosses, each labelled with the rest of its rows."""
    from matplotlib.lines import Line2D

    drawn = []
    sides: tuple[tuple[str, int, str, dict[str, Any], int], ...] = (
        ("model", 1, "black", {"marker": "s", "s": 170, "facecolors": "none", "edgecolors": "black"}, -12),
        ("impl", 2, RED, {"marker": "x", "s": 90, "color": RED}, -22),
    )
    for side, index, colour, style, dy in sides:
        at: dict[tuple, list[str]] = defaultdict(list)
        for found in differing(outcome, step):
            for row in sorted(found[index] or (), key=repr):
                for time, rest in _time_in(plane, row):
                    lo, hi, y = plane.span(time)
                    at[((lo + hi) / 2, y)] += [rest] if rest and rest not in at[((lo + hi) / 2, y)] else []
        for (x, y), rests in at.items():
            ax.scatter([x], [y], zorder=5, linewidths=1.5, **style)
            text = f"{side}: {', '.join(rests)}" if rests else side
            ax.annotate(text, (x, y), xytext=(8, dy), textcoords="offset points", fontsize=7, color=colour)
        if at:
            label = (
                f"{'model' if index == 1 else 'implementation'} observed there (label: the rest of its rows)"
            )
            drawn.append(
                Line2D(
                    [],
                    [],
                    marker=style["marker"],
                    linestyle="",
                    color=colour,
                    markerfacecolor="none",
                    label=label,
                )
            )
    return drawn


def _time_in(plane: Any, row: Any) -> list[tuple[Any, str]]:
    """(the time, the row's other fields) when `row` is a time or a tuple holding exactly one."""
    if plane.is_time(row):
        return [(row, "")]
    if isinstance(row, tuple):
        times = [v for v in row if plane.is_time(v)]
        if len(times) == 1:
            return [(times[0], " ".join(str(v) for v in row if v is not times[0]))]
    return []


def _mark_divergence(
    ax: Any, plane: Any, here: list[Mark], step: int, steps: int, bounds: tuple, outlined: bool
) -> None:
    """A red ring round the divergent action's time, its note pointing in from the nearer edges;
    for a step with no time (a compaction: outlined red) or the final state, a red title."""
    if not here:
        where = (
            "the final state" if step >= steps else f"step {step}" + (" (outlined red)" if outlined else "")
        )
        ax.set_title(f"first divergence: {where}", loc="right", color=RED, fontsize=9, weight="bold")
        ax.title.set_gid(DIVERGENCE_GID)
        return
    lo, hi, y = plane.span(here[0].time)
    x, (right, top) = (lo + hi) / 2, bounds
    ring = ax.scatter([x], [y], s=600, facecolors="none", edgecolors=RED, linewidths=2, zorder=6)
    ring.set_gid(DIVERGENCE_GID)
    leftwards, downwards = x > right / 2, y > top / 2
    ax.annotate(
        f"first divergence (s{step} {here[0].action})",
        (x, y),
        xytext=(-30 if leftwards else 30, -40 if downwards else 40),
        textcoords="offset points",
        ha="right" if leftwards else "left",
        color=RED,
        fontsize=9,
        weight="bold",
        arrowprops={"arrowstyle": "->", "color": RED},
        bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": RED, "alpha": 0.9},
        zorder=7,
    )
