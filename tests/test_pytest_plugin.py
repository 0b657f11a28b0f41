"""The pytest fixture, `frontier_harness`: it runs `check`'s pairings (the model never judged against itself), and
a failing test's summary line names the property, the domain and the first divergence."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.pytest_plugin import Harness
from frontier_harness.properties.engine import runner
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.pairings import reference_of
from frontier_harness.properties.engine.results import SuiteResult


@pytest.fixture
def lanes_run(monkeypatch) -> list[tuple[str, tuple[str, ...]]]:
    """Each pairing the fixture runs, as (implementation, properties judged); nothing runs for real."""
    ran: list = []

    def run_suite(request):
        ran.append((request.impl_name, tuple(p.name for p in request.suite.properties)))
        return SuiteResult(request.suite.name, (), ())

    monkeypatch.setattr(runner, "run_suite", run_suite)
    return ran


def test_the_model_is_judged_only_by_what_is_not_its_own_answer(lanes_run, tmp_path):
    harness = Harness("dev", 0, tmp_path)
    harness.check("collections")  # every property compares with the model: Spark alone is judged
    harness.check("ttl")  # the model too, by the properties that restate the seed's rules
    ttl = get_suite("ttl")
    judged_model = [props for impl, props in lanes_run if impl == "model"]
    assert [impl for impl, _ in lanes_run] == ["spark", "model", "spark"]
    assert judged_model == [tuple(p.name for p in ttl.properties if reference_of(ttl, p).independent)]


def test_asking_the_model_to_judge_itself_is_refused(lanes_run, tmp_path):
    with pytest.raises(HarnessError, match="nothing to judge"):
        Harness("dev", 0, tmp_path).check("collections", impl="model")
    assert lanes_run == []


USER_TESTS = {
    "forgetful.py": textwrap.dedent(
        '''
        from frontier_harness import Implementation, vocabulary


        class Forgetful(Implementation):
            """Answers every history with an empty final collection."""

            name = "forgetful"

            def observe_collections(self, domain, histories):
                final = vocabulary.time.CollectionLabel.FINAL
                return [{(len(h.actions), final): frozenset()} for h in histories]


        def factory():
            return Forgetful()
        '''
    ),
    "test_pipeline.py": textwrap.dedent(
        """
        def test_pipeline(frontier_harness):
            frontier_harness.check("collections", impl="forgetful:factory", domains=["total"])
        """
    ),
}


def test_a_failing_tests_summary_line_names_the_property_domain_and_first_divergence(tmp_path):
    for name, text in USER_TESTS.items():
        (tmp_path / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "400"}  # pytest cuts lines at the width
    command = [sys.executable, "-m", "pytest", "-rf", "-p", "no:cacheprovider", "--fh-profile", "dev"]
    ran = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1, ran.stdout[-3000:] + ran.stderr[-3000:]
    summary = [line for line in ran.stdout.splitlines() if line.startswith("FAILED test_pipeline.py")]
    assert len(summary) == 1, ran.stdout[-3000:]
    assert (
        "collections.observations_match_model[total] against forgetful:factory: first divergence at step"
        in (summary[0])
    )
    assert list((tmp_path / ".frontier-harness" / "counterexamples").glob("collections-*-total-*.itf.json"))
