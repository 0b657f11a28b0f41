"""pytest integration: the `frontier_harness` fixture runs suites inside your test session.

    def test_my_pipeline(frontier_harness):
        frontier_harness.check("collections", impl="my_pkg.pipeline:factory")
        frontier_harness.check("streaming", job="my_pkg.job:factory")  # your streaming job (frontier_harness.properties.checks.ingestion.job)
        frontier_harness.check("stateful", job="my_pkg.counts:factory")  # your stateful, event-time job

Options: `--fh-profile` (default ci), `--fh-seed`. Under `pytest -n auto` each
xdist worker has its own lazily started Spark session; the `thorough` profile's
example database is a directory database, which tolerates concurrent writers.
A failure writes the counterexample file the moment it is found (rewritten as it
shrinks) and fails the test with its table; `check` stops at the first failure
unless `fail_fast=False`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pytest

from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.config import load_config

if TYPE_CHECKING:
    from frontier_harness.properties.engine.implementation import Implementation


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("frontier-harness")
    group.addoption("--fh-profile", default="ci", help="frontier-harness profile: dev, ci or thorough")
    group.addoption("--fh-seed", type=int, default=0, help="frontier-harness seed")


@attrs.define
class Harness:
    """Runs suites for one test; `check` fails the test on a counterexample or an unreached hard case."""

    profile_name: str
    seed: int
    out: Path

    def check(
        self,
        suite_name: str,
        impl: str | None = None,
        domains: Sequence[str] | None = None,
        fail_fast: bool = True,
        job: str | None = None,
    ) -> None:
        """Runs the suite; stops at its first failure unless `fail_fast=False` (then every property and
        domain runs and the test fails with the first counterexample)."""
        from frontier_harness.properties.adapters import load_implementation
        from frontier_harness.properties.checks.registry import get_suite
        from frontier_harness.properties.engine.runner import run_suite

        suite = get_suite(suite_name)
        impl_name = impl or suite.default_impl
        profile = attrs.evolve(load_config().profile(self.profile_name), seed=self.seed)
        files = report.CounterexampleFiles(self.out, None)
        implementation: Implementation
        if job is not None:
            from frontier_harness.properties.adapters.job import load_job

            implementation = load_job(job, stateful=suite_name == "stateful")
            impl_name = implementation.name
        else:
            implementation = load_implementation(impl_name)
        result = run_suite(
            suite,
            implementation,
            impl_name,
            profile,
            self.seed,
            domains,
            found=files.announce,
            fail_fast=fail_fast,
        )
        failures = [r.failure for r in result.results if r.failure is not None]
        if failures:
            path = files.final(failures[0])
            console = report.console()
            with console.capture() as captured:
                console.print(report.counterexample_table(failures[0]))
            pytest.fail(f"{captured.get()}\ncounterexample: {path}", pytrace=False)
        if result.missing_events:
            pytest.fail(
                f"{suite_name}: the generator never reached {list(result.missing_events)}", pytrace=False
            )


@pytest.fixture
def frontier_harness(request: pytest.FixtureRequest) -> Harness:
    config = request.config
    return Harness(
        config.getoption("--fh-profile"), config.getoption("--fh-seed"), Path(load_config().get("out"))
    )
