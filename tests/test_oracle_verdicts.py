"""The meta suite (`tests.oracle_verdicts`): the recordings say what the trial suites say today, and `mutate`
judges an oracle module through them.

A change to an oracle that changes a verdict, a message, a counterexample or a hard case over a recorded
trial fails `test_the_recordings_say_what_the_suites_say_today` until the recording is refreshed on purpose
(`python -m tests.oracle_verdicts refresh SUITE`, then read the diff of what it says).
"""

from __future__ import annotations

import json

import attrs
import pytest

from frontier_harness.properties.cli.main import main
from tests import oracle_verdicts

# The streaming and stateful suites' verdicts on a user's job run its transform as a batch job (Spark);
# ttl_spark_state's need no Spark.
SUITES = [
    pytest.param("streaming", marks=pytest.mark.spark),
    pytest.param("stateful", marks=pytest.mark.spark),
    "ttl_spark_state",
]


@pytest.mark.parametrize("suite", SUITES)
def test_the_recordings_say_what_the_suites_say_today(suite):
    assert oracle_verdicts.cases(suite), f"tests/recorded/{suite}.json.gz holds no case"
    assert oracle_verdicts.differs(suite) is None


def test_a_changed_verdict_is_named_with_its_case(monkeypatch):
    """The check the meta suite runs fails, naming the case and the property, when an oracle says otherwise."""
    [case, *_] = oracle_verdicts.cases("ttl_spark_state")
    said = dict(case.said)
    said["reached"] = ["reached", []]
    monkeypatch.setitem(oracle_verdicts._CASES, "ttl_spark_state", [attrs.evolve(case, said=said)])
    assert oracle_verdicts.differs("ttl_spark_state") == (
        f"{case.label}: reached said ['reached', []], now {case.said['reached']}"
    )


def test_mutate_judges_the_ttl_oracle_through_its_recording(tmp_path, capsys):
    """Every mutant of `properties/checks/ttl/spark_state.py` (40: 36 killed) is killed over the recorded
    trials but the equivalent ones (`ci/equivalent_mutants.toml`: 4 mutants, 3 distinct), none unreached."""
    out = tmp_path / "mutate.json"
    argv = [
        "mutate",
        "--target",
        "frontier_harness.properties.checks.ttl.spark_state",
        "--suite",
        "tests.oracle_verdicts:TTL_SPARK_STATE",
        "--impl",
        "tests.oracle_verdicts:factory",
        "--profile",
        "ci",
        "--json",
        str(out),
        "--equivalent",
        "ci/equivalent_mutants.toml",
    ]
    assert main(argv) == 0, capsys.readouterr().out
    report = json.loads(out.read_text())
    survivors = {(m["original"], m["mutated"]) for m in report["mutants"] if m["status"] != "killed"}
    assert survivors == set(oracle_verdicts.EQUIVALENT["properties/checks/ttl/spark_state.py"])
    assert report["counts"] == {
        "killed": 36,
        "survived": 0,
        "timeout": 0,
        "infrastructure": 0,
        "unreached": 0,
        "equivalent": 4,
    }
