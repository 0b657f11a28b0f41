"""pytest integration: the `frontier_harness` fixture runs suites inside your test session.

    def test_my_pipeline(frontier_harness):
        frontier_harness.check("collections", impl="my_pkg.pipeline:factory")
        frontier_harness.check("streaming", job="my_pkg.job:factory")  # your streaming job (StreamingJob)
        frontier_harness.check("stateful", job="my_pkg.counts:factory")  # your stateful job (StatefulJob)

Options: `--fh-profile` (default ci), `--fh-seed`. Under `pytest -n auto` each
xdist worker has its own lazily started Spark session; the `thorough` profile's
example database is a directory database, which tolerates concurrent writers.
A failure writes the counterexample file the moment it is found (rewritten as it
shrinks) and fails the test with one line naming the property, the domain and the
first divergence (what pytest's summary shows), then its table; `check` stops at
the first failure unless `fail_fast=False`. It runs `frontier_harness.check`'s
pairings, so the model is judged only by properties whose reference is not its own
answer, never against itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest

from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.counterexample import Counterexample


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("frontier-harness")
    group.addoption("--fh-profile", default="ci", help="frontier-harness profile: dev, ci or thorough")
    group.addoption("--fh-seed", type=int, help="frontier-harness seed (default: the profile's)")


@attrs.define
class Harness:
    """Runs suites for one test; `check` fails the test on a counterexample, an unreached hard case, or a
    property that judged nothing (not run: a verdict never rests on zero histories)."""

    profile_name: str
    seed: int | None
    out: Path

    def check(
        self,
        suite_name: str,
        impl: str | None = None,
        domains: Sequence[str] | None = None,
        fail_fast: bool = True,
        job: str | None = None,
    ) -> None:
        """Runs the suite's pairings (`frontier_harness.check`: the model only where something other than its own
        answer judges it); stops at the first failure unless `fail_fast=False` (then every property and
        domain runs and the test fails with the first counterexample)."""
        from frontier_harness.properties.cli.run import run

        profile = load_config().profile(self.profile_name).seeded(self.seed)
        files = report.CounterexampleFiles(self.out, None)
        results = run(suite_name, impl, job, profile, files, domains, fail_fast)
        failures = [r.failure for result in results for r in result.results if r.failure is not None]
        if failures:
            console = report.console()
            with console.capture() as captured:
                console.print(report.counterexample_table(failures[0]))
            path = files.final(failures[0])
            pytest.fail(
                f"{summary_line(failures[0])}\n{captured.get()}\ncounterexample: {path}", pytrace=False
            )
        if missing := [event for result in results for event in result.missing_events]:
            pytest.fail(f"{suite_name}: the run never reached {missing}", pytrace=False)
        if unjudged := [
            f"{r.property}[{r.domain}]: {r.reason}" for s in results for r in s.results if not r.passed
        ]:
            pytest.fail(f"{suite_name}: judged nothing in {'; '.join(unjudged)}", pytrace=False)


def summary_line(cx: Counterexample) -> str:
    """The failure in one line, what pytest's summary shows: the property, the domain, the first divergence.

    >>> from frontier_harness.properties.engine.history import Action, History
    >>> h = History("total", (Action("update", {"data": "a", "time": 0, "diff": 1}),))
    >>> summary_line(Counterexample("collections", "observations_match_model", h, "spark", "final differs", 1))
    'collections.observations_match_model[total] against spark: first divergence at step 1 (the end): final differs'
    """
    at = "" if cx.step is None else f" at step {cx.step} ({_action_at(cx, cx.step)})"
    said = cx.message.strip().splitlines()[0] if cx.message.strip() else "failed"
    return f"{cx.suite}.{cx.property}[{cx.domain}] against {cx.impl}: first divergence{at}: {said}"


def _action_at(cx: Counterexample, step: int) -> str:
    return cx.history.actions[step].name if step < len(cx.history.actions) else "the end"


@pytest.fixture
def frontier_harness(request: pytest.FixtureRequest) -> Harness:
    config = request.config
    return Harness(
        config.getoption("--fh-profile"), config.getoption("--fh-seed"), Path(load_config().get("out"))
    )
