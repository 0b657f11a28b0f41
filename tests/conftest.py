"""Shared fixtures: one Spark session per process (per xdist worker), started lazily."""

from __future__ import annotations

import os

import pytest

from frontier_harness.spark_impl import session


def pytest_configure(config: pytest.Config) -> None:
    remote = os.environ.get("FRONTIER_HARNESS_TEST_REMOTE")
    if remote:  # the Spark Connect test mode: FRONTIER_HARNESS_TEST_REMOTE=local[2]
        session.configure(remote=remote)


@pytest.fixture(scope="session")
def spark_session():
    """The process's Spark session; skips (never fails) only when Java is absent."""
    if not session.java_available():
        pytest.skip("Java is not installed")
    return session.spark()
