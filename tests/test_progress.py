"""What `check` shows while it runs: a live display on a terminal, a line per property and domain (and per
streaming trial) when piped. The model and a stand-in streaming implementation: seconds, no Spark."""

from __future__ import annotations

import io
import re
from typing import Any

import attrs
from rich.console import Console

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.cli import main as cli
from frontier_harness.properties.cli import run as runs
from frontier_harness.properties.cli.progress import pairing_display
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.pairings import PairingResult
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.results import SuiteResult
from frontier_harness.properties.engine.run import Tick
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

SMALL = attrs.evolve(
    PROFILES["dev"], max_examples=5, screening_histories=400, screening_batch=100, derandomize=True
)
SUITE = "checkpoint"


def terminal() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, record=True, width=200)


def piped() -> Console:
    return Console(file=io.StringIO(), width=200)


def model_lane(out: Console, suite: str = SUITE) -> PairingResult:
    """`check --suite SUITE --impl model` under `SMALL`, shown on `out`."""
    args = cli.build_parser().parse_args(["check", "--suite", suite, "--impl", "model"])
    (pairing,) = runs.against(args, out, [get_suite(suite)])
    return runs.run_pairing(pairing, out, SMALL, 0, None)


def test_a_terminal_shows_suite_property_domain_histories_of_the_total_rate_and_eta():
    out = terminal()
    result = model_lane(out).result
    shown = out.export_text()
    assert f"{SUITE} against model" in shown
    for r in result.results:
        assert f"{SUITE}.{r.property} [{r.domain}]" in shown, shown
        assert re.search(rf"\b{r.examples}/{r.examples} histories", shown), shown  # done of the total
    assert re.search(r"\d+/\d+ +properties·domains", shown), shown
    assert re.search(r"[\d,]+/s ETA \d+:\d\d:\d\d", shown), shown  # a rate and an ETA
    assert f"{SUITE} against model: " in shown.splitlines()[-1]  # the display gone, the summary stays


def test_piped_output_is_one_line_per_property_and_domain():
    out = piped()
    result = model_lane(out).result
    lines = out.file.getvalue().splitlines()  # type: ignore[attr-defined]
    ran = [line for line in lines if line.startswith(f"{SUITE}.")]
    assert len(ran) == len(result.results) >= 2, lines
    for line, r in zip(ran, result.results):
        assert line == f"{SUITE}.{r.property} [{r.domain}] against model: {r.examples} histories in " + (
            f"{r.seconds:.1f}s, held"
        )
    assert not any("ETA" in line or "histories/" in line for line in lines), lines


class Streams(Implementation):
    """A stand-in for Spark's trials: every query observed doing nothing (which every law allows)."""

    name = "stand-in"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def observe_streaming(self, domain: Any, histories: Any) -> list:
        self.calls.append(len(histories))
        return [{} for _ in histories]


def streaming_run(out: Console) -> tuple[SuiteResult, Streams]:
    impl = Streams()
    profile = attrs.evolve(SMALL, max_examples=2, screening_histories=9)
    with pairing_display(out, "streaming", impl.name) as hooks:
        result = run_suite(SuiteRequest(streaming.SUITE, impl, impl.name, profile, 0, None, hooks.progress, None, False, hooks.finished))  # fmt: skip
    return result, impl


def test_piped_streaming_prints_one_line_per_property_and_domain_counting_trials():
    """A CI log gets one line per trial suite's property and domain, its count in trials, never a line per
    trial that held (a failing trial's line: `test_a_tick_numbers_a_trial_while_shrinking_without_a_total`)."""
    out = piped()
    result, impl = streaming_run(out)
    lines = out.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert max(impl.calls) <= streaming.TRIAL_WAVE  # trials run a wave at a time
    assert not any(" trial " in line for line in lines), lines
    for r in result.results:
        where = f"streaming.{r.property} [{r.domain}]"
        mine = [line for line in lines if line.startswith(where)]
        assert r.unit == "trials" and r.examples > 0
        assert len(mine) == 1 and mine[0].startswith(f"{where} against stand-in: {r.examples} trials in "), (
            mine
        )


def test_a_terminal_shows_the_last_streaming_trial():
    out = terminal()
    result, _ = streaming_run(out)
    shown = out.export_text()
    last = result.results[-1]
    assert f"trial {last.examples} of {last.examples}: held" in shown, shown


def test_a_tick_numbers_a_trial_while_shrinking_without_a_total():
    from frontier_harness.properties.cli.progress import trial_line

    out = piped()
    tick = Tick("streaming", "exactly_once", "partitioned", "screening", 14, 12, trial="failed: lost\nmore", shrinking=True)  # fmt: skip
    trial_line(out, "spark")(tick)
    assert out.file.getvalue() == (  # type: ignore[attr-defined]
        "streaming.exactly_once [partitioned] trial 14 (shrinking) against spark: failed: lost\n"
    )
