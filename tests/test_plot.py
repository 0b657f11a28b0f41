"""`replay --plot`: each kind of picture is drawn and is a PNG; times sit where the domain puts them;
the first divergence is marked; a suite without a picture says so and writes nothing."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from frontier_harness.model.time.partitioned_time import PARTITION_MAX, PartitionedTime  # noqa: E402
from frontier_harness.properties.checks.streaming.checkpoint import judge  # noqa: E402
from frontier_harness.properties.cli.main import main  # noqa: E402
from frontier_harness.properties.cli.plot import figure, no_plot_message, plot  # noqa: E402
from frontier_harness.properties.cli.plot.times import DIVERGENCE_GID  # noqa: E402
from frontier_harness.properties.engine import counterexample  # noqa: E402
from frontier_harness.properties.engine.counterexample import Counterexample  # noqa: E402
from frontier_harness.properties.engine.history import Action, History  # noqa: E402
from frontier_harness.properties.engine.suite import Outcome  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _collections(domain: str, actions: list[Action]) -> Counterexample:
    return Counterexample("collections", "observations_match_model", History(domain, actions), "model")


def _read_diverges(step: int) -> Outcome:
    key = (step, "read")
    return Outcome(
        ok=False,
        message=f"read at step {step}: model {{('a', 13)}} != implementation {{('a', 6)}}",
        step=step,
        expected={key: frozenset({("a", 13)})},
        actual={key: frozenset({("a", 6)})},
    )


def _divergence_marks(fig) -> list:
    return [a for a in fig.findobj() if a.get_gid() == DIVERGENCE_GID]


def _points(fig) -> set[tuple[float, float]]:
    """Every scatter marker's (x, y) in data coordinates."""
    from matplotlib.collections import PathCollection

    return {tuple(map(float, xy)) for c in fig.findobj(PathCollection) for xy in c.get_offsets()}


def _saved(cx, outcome, path):
    assert plot(cx, outcome, path) == path
    assert path.read_bytes()[:8] == PNG


def test_a_product_history_is_drawn_in_the_plane(tmp_path):
    cx = _collections(
        "product(total,total)",
        [
            Action("update", {"data": "a", "time": (0, 1), "diff": 6}),
            Action("update", {"data": "a", "time": (1, 0), "diff": 7}),
            Action("compact", {"since": ((1, 3), (4, 1))}),
            Action("read", {"time": (4, 4)}),
        ],
    )
    fig = figure(cx, _read_diverges(3))
    points = _points(fig)
    assert (0.0, 1.0) in points and (1.0, 0.0) in points  # different x and different y
    texts = {t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))}
    assert any("+6 a" in t for t in texts) and any("+7 a" in t for t in texts)  # each diff as a number
    assert _divergence_marks(fig)
    _saved(cx, _read_diverges(3), tmp_path / "product.png")


def test_a_partitioned_history_puts_partitions_across_and_offsets_up(tmp_path):
    P = PartitionedTime
    cx = _collections(
        "partitioned",
        [
            Action("update", {"data": "a", "time": P(0, 0, 2), "diff": 1}),
            Action("update", {"data": "b", "time": P(2, 2, 0), "diff": -1}),
            Action("update", {"data": "b", "time": P(3, PARTITION_MAX, 1), "diff": 1}),
            Action("compact", {"since": (P(0, 0, 3), P(1, PARTITION_MAX, 2))}),
            Action("read", {"time": P(2, 2, 5)}),
        ],
    )
    fig = figure(cx, _read_diverges(4))
    points = _points(fig)
    assert (0.0, 2.0) in points and (2.0, 0.0) in points
    assert _divergence_marks(fig)
    _saved(cx, _read_diverges(4), tmp_path / "partitioned.png")


def test_a_total_history_puts_times_on_one_axis(tmp_path):
    cx = _collections(
        "total",
        [
            Action("update", {"data": "a", "time": 1, "diff": 6}),
            Action("update", {"data": "a", "time": 3, "diff": -7}),
            Action("compact", {"since": (2,)}),
            Action("read", {"time": 4}),
        ],
    )
    fig = figure(cx, _read_diverges(3))
    assert {(1.0, 0.0), (3.0, 1.0)} <= _points(fig)  # x is the time, y the step
    assert _divergence_marks(fig)
    _saved(cx, _read_diverges(3), tmp_path / "total.png")


def _checkpoint_log() -> History:
    """Two batches per partition, then batch 2 binds partition 0 to an offset before batch 1's."""

    def offsets(batch: int, p0: int, p1: int) -> Action:
        ends = [[0, 0, p0], [1, 1, p1], [2, PARTITION_MAX, 0]]
        return Action("offsets", {"batch": batch, "source": "0", "domain": "partitioned", "offsets": ends})

    actions = [Action("retain", {"batches": 100})]
    for batch, (p0, p1) in enumerate([(2, 1), (4, 3), (1, 5)]):
        actions += [offsets(batch, p0, p1), Action("commit", {"batch": batch})]
    return History("partitioned", actions)


def test_a_checkpoint_is_drawn_as_offsets_per_stream_over_batches(tmp_path):
    history = _checkpoint_log()
    outcome = judge(history)
    assert not outcome.ok and outcome.message.startswith("monotone")
    cx = Counterexample("checkpoint", "checkpoint_laws", history, "model")
    fig = figure(cx, outcome)
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert "source 0 p0" in labels and "source 0 p1" in labels  # named in a legend, not on the lines
    [line] = [m for m in _divergence_marks(fig)]
    assert list(line.get_xdata()) == [2, 2]  # the batch that went back
    _saved(cx, outcome, tmp_path / "checkpoint.png")


def _ttl_codec_cx() -> Counterexample:
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.engine.source import RandomSource

    prop = get_suite("ttl_codec").properties[0]
    return Counterexample("ttl_codec", prop.name, prop.draw(RandomSource(1), "total"), "model")


def test_a_suite_without_a_picture_says_so_and_writes_nothing(tmp_path, capsys):
    cx = _ttl_codec_cx()
    assert figure(cx, Outcome(ok=True)) is None
    assert plot(cx, Outcome(ok=True), tmp_path / "no.png") is None
    assert "ttl_codec suite has none" in no_plot_message(cx)
    path = counterexample.write(cx, tmp_path)
    png = tmp_path / "codec.png"
    assert main(["replay", str(path), "--plot", str(png)]) == 0  # the replay's own verdict: it holds
    out = capsys.readouterr().out
    assert "no plot: the ttl_codec suite has none" in out and not png.exists()


def test_replay_plot_draws_a_history_that_now_holds(tmp_path, capsys):
    cx = _collections(
        "total", [Action("update", {"data": "a", "time": 1, "diff": 2}), Action("read", {"time": 1})]
    )
    png = tmp_path / "holds.png"
    assert main(["replay", str(counterexample.write(cx, tmp_path)), "--plot", str(png)]) == 0
    assert f"drawn to {png}" in capsys.readouterr().out.replace("\n", "")
    assert png.read_bytes()[:8] == PNG


def test_a_final_divergence_draws_what_each_side_kept_where_it_is():
    cx = _collections(
        "product(total,total)",
        [
            Action("update", {"data": "a", "time": (0, 2), "diff": 1}),
            Action("update", {"data": "a", "time": (0, 2), "diff": -1}),
        ],
    )
    final = (2, "final")
    outcome = Outcome(
        ok=False,
        message="final at step 2",
        step=2,
        expected={final: frozenset()},
        actual={final: frozenset({("a", (0, 2), 0)})},
    )
    fig = figure(cx, outcome)
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    assert "impl: a 0" in texts  # the implementation kept a zero diff at (0, 2)
    assert any("first divergence: the final state" in t for t in texts) and _divergence_marks(fig)
