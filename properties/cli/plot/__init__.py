"""`replay --plot FILE.png`: a counterexample drawn where a picture says more than the table.

One module per kind of picture: `times` (a history of times, diffs and frontiers: on one
axis for a total domain, in the plane for Product and Partitioned times) and `checkpoint`
(a checkpoint's offsets per stream over batch ids). A suite whose histories neither picture
beats the table for (`SUITE_PICTURES` lacks it) has no plot: `plot` writes nothing and says
so, and the replay's verdict is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from frontier_harness.properties.cli.plot import checkpoint, times
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.suite import Outcome

# Suite -> the picture drawn for its counterexamples. Every other suite has no plot: its
# histories are byte strings (ttl_codec), clocks and LSM runs (ttl), plans and catalogs,
# streaming scripts, or transactions whose times are incidental (summary, restart): the
# table shows those better.
SUITE_PICTURES: dict[str, Callable[[Counterexample, Outcome], Any]] = {
    **dict.fromkeys(("laws", "collections", "mutable_antichain", "reclock", "remap"), times.figure),
    "checkpoint": checkpoint.figure,
}


def no_plot_message(cx: Counterexample) -> str:
    """What `replay --plot` says for a counterexample it draws no picture of."""
    if cx.suite not in SUITE_PICTURES:
        return (
            f"no plot: the {cx.suite} suite has none (its table says more than a picture would); "
            "nothing written"
        )
    return f"no plot: this {cx.suite} history on {cx.domain} has nothing to draw; nothing written"


def figure(cx: Counterexample, outcome: Outcome) -> Any:
    """The counterexample's matplotlib Figure, or None when its suite (or domain) has no plot."""
    draw = SUITE_PICTURES.get(cx.suite)
    if draw is None:
        return None
    _require_matplotlib()
    return draw(cx, outcome)


def plot(cx: Counterexample, outcome: Outcome, path: Path) -> Path | None:
    """Draws the counterexample to `path` (PNG); None (nothing written) when it has no plot."""
    fig = figure(cx, outcome)
    if fig is None:
        return None
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def _require_matplotlib() -> None:
    try:
        import matplotlib
    except ImportError as exc:
        raise HarnessError("replay --plot needs matplotlib: pip install 'frontier-harness[plot]'") from exc
    matplotlib.use("Agg")
