"""Shared fixtures: one Spark session per process (per xdist worker), started lazily.

Tests marked `slow` (minutes each: SIGKILL trials, a fresh JVM, a cluster) are skipped unless
`--run-slow` (or a `-m` expression that chooses them) is given. A run that skipped Spark tests
(no Java) or slow ones says so in its last line: a green run that never started Spark is not
mistaken for one that did.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from frontier_harness.spark_impl import session

NO_JAVA = "Java is not installed"
SLOW = "slow: run with --run-slow"
_skipped: Counter[str] = Counter()  # in the controller: skipped tests by why (every xdist worker's reports)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        help="also run the tests marked slow (minutes each: SIGKILL trials, a fresh JVM, a cluster)",
    )


def pytest_configure(config: pytest.Config) -> None:
    remote = os.environ.get("FRONTIER_HARNESS_TEST_REMOTE")
    if remote:  # the Spark Connect test mode: FRONTIER_HARNESS_TEST_REMOTE=local[2]
        session.configure(remote=remote)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow") or config.getoption("markexpr"):  # an -m expression chooses itself
        return
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=SLOW))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        for why in (NO_JAVA, SLOW):
            _skipped[why] += why in reason


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's last line, when it skipped Spark tests or slow ones (the controller only, under xdist)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if hasattr(config, "workerinput") or reporter is None or not +_skipped:
        return
    said = []
    if _skipped[NO_JAVA]:
        said.append(f"{_skipped[NO_JAVA]} Spark tests skipped: Java 17 not found, Spark never started")
    if _skipped[SLOW]:
        said.append(f"{_skipped[SLOW]} slow tests skipped (run with --run-slow)")
    reporter.write_line("NOT RUN: " + "; ".join(said), yellow=True, bold=True)


@pytest.fixture(scope="session")
def spark_session():
    """The process's Spark session; skips (never fails) only when Java is absent, and the run says so."""
    if not session.java_available():
        pytest.skip(NO_JAVA)
    return session.spark()
