"""Shared fixtures: one Spark session per process (per xdist worker), started lazily.

Tests marked `slow` (minutes each: SIGKILL trials, a fresh JVM, a cluster) are skipped unless
`--run-slow` (or a `-m` expression that chooses them) is given. A run that skipped any test says so
in its last line, with why (no Java, slow, or the test's own reason, such as not being in a git
checkout): a green run that never started Spark, or skipped a test for any reason, is not mistaken
for one that ran everything. Under `--run-slow` the slow tests run first, the longest first
(`tests/durations.py`).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from frontier_harness.spark_impl import session
from tests import durations

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
    if config.getoption("--run-slow"):  # the longest slow tests first (`tests/durations.py`)
        by_id = {item.nodeid: item for item in items}
        slow = {item.nodeid for item in items if "slow" in item.keywords}
        items[:] = [by_id[i] for i in durations.ordered(by_id, durations.known(), slow)]
    if config.getoption("--run-slow") or config.getoption("markexpr"):  # an -m expression chooses itself
        return
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=SLOW))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        _skipped[next((why for why in (NO_JAVA, SLOW) if why in reason), reason)] += 1


def not_run_line(skipped: Counter[str]) -> str | None:
    """The run's last line, naming every test it skipped by why; None when it skipped none.

    >>> not_run_line(Counter({SLOW: 3, "not a git checkout": 1}))
    'NOT RUN: 3 slow tests skipped (run with --run-slow); 1 test skipped: not a git checkout'
    """
    said = []
    if skipped[NO_JAVA]:
        said.append(f"{skipped[NO_JAVA]} Spark tests skipped: Java 17 not found, Spark never started")
    if skipped[SLOW]:
        said.append(f"{skipped[SLOW]} slow tests skipped (run with --run-slow)")
    for why, n in sorted(skipped.items()):
        if why not in (NO_JAVA, SLOW) and n:
            said.append(f"{n} test{'s' * (n > 1)} skipped: {why}")
    return "NOT RUN: " + "; ".join(said) if said else None


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's last line, when it skipped any test (the controller only, under xdist)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    line = not_run_line(_skipped)
    if hasattr(config, "workerinput") or reporter is None or line is None:
        return
    reporter.write_line(line, yellow=True, bold=True)


@pytest.fixture
def spark_session():
    """The process's Spark session, live: asked for afresh by each test, since a test may restart it (the
    runner's recovery after an infrastructure failure stops the session and starts another), and one kept
    for the whole process would hand every later test the stopped one. Skips (never fails) only when Java
    is absent, and the run says so."""
    return live_session()


def live_session():
    """`spark_session` for a fixture of a wider scope, which lives across tests: it calls this when it is
    made, and keeps no session itself."""
    if not session.java_available():
        pytest.skip(NO_JAVA)
    return session.spark()
