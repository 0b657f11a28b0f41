"""The `spark_session` fixture hands each test the process's live session, even after a test restarted it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TWO_TESTS = """
from frontier_harness.spark_impl import session


def test_a_restart(spark_session):
    session.restart()  # as the runner's recovery does after an infrastructure failure


def test_after_it(spark_session):
    assert not spark_session.sparkContext._jsc.sc().isStopped()
    spark_session.newSession().range(1).collect()
"""


@pytest.mark.spark
def test_a_test_after_one_that_restarted_the_session_gets_the_live_one(tmp_path):
    """In one process, the second test asks for `spark_session` after the first restarted it: a session kept
    for the whole process was the stopped one (`newSession` on a stopped SparkContext), and the README's test
    command failed whichever test came next on that xdist worker."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import spark_session  # noqa: F401\n")
    (tmp_path / "test_two.py").write_text(TWO_TESTS)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "test_two.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0 and "2 passed" in ran.stdout, ran.stdout[-3000:]
