"""Claims of README.md and docs/implementing.md that no other test showed (docs/claims.md names these).

An implementation that cannot run exits 3 and writes no counterexample, whether it raises
`InfrastructureError` itself or an error the default `infrastructure_failure` classifies (a connection
error); any other exception it raises on a valid history is its failure, exit 1, with a counterexample;
a failure's table marks its first divergent step; `frontier_harness.check` returns each suite's result,
failing or not, and raises where the command would exit 2 or 3.
"""

from __future__ import annotations

import pytest

import frontier_harness
from frontier_harness import HarnessError, Implementation, InfrastructureError, Speed
from frontier_harness.properties.cli.main import main


class Raising(Implementation):
    """A user's implementation of `collections` whose every call raises `error`."""

    name = "raising"
    speed = Speed.IN_PROCESS

    def __init__(self, error: Exception) -> None:
        self.error = error

    def observe_collections(self, domain, histories):
        raise self.error


def cannot_run() -> Raising:
    return Raising(InfrastructureError("the cluster is down"))


def connection_refused() -> Raising:
    return Raising(ConnectionRefusedError("no route to the cluster"))


def wrong() -> Raising:
    return Raising(ValueError("a bug of its own"))


def check(impl: str, out) -> int:
    argv = ["check", "--suite", "collections", "--domain", "total", "--profile", "dev", "--impl", impl]
    return main([*argv, "--out", str(out)])


@pytest.mark.parametrize(
    "factory,said",
    [("cannot_run", "the cluster is down"), ("connection_refused", "no route")],
    ids=["infrastructure_error", "connection_error"],
)
def test_an_implementation_that_cannot_run_exits_3_and_writes_no_counterexample(
    factory, said, tmp_path, capsys
):
    assert check(f"tests.test_claims_shown:{factory}", tmp_path) == 3
    printed = capsys.readouterr()
    assert said in printed.out + printed.err
    assert not list(tmp_path.glob("*.itf.json"))


def test_any_other_exception_on_a_valid_history_is_the_implementations_failure(tmp_path, capsys):
    assert check("tests.test_claims_shown:wrong", tmp_path) == 1
    assert "implementation raised ValueError: a bug of its own" in capsys.readouterr().out
    assert len(list(tmp_path.glob("*.itf.json"))) == 1


def test_a_failures_table_marks_its_first_divergent_step(tmp_path, capsys):
    assert check("tests.planted:model_keeps_zero_diffs", tmp_path) == 1
    rows = [line for line in capsys.readouterr().out.splitlines() if "<- first divergence" in line]
    assert len(rows) == 1 and "(end)" in rows[0], rows


def test_check_from_python_returns_the_results_and_raises_where_the_command_exits_2_or_3(tmp_path):
    [held] = frontier_harness.check("laws", impl="model", profile="dev", domains=["total"], out=tmp_path)
    assert held.passed and held.results and all(r.examples > 0 for r in held.results)
    planted = "tests.planted:model_keeps_zero_diffs"
    [failed] = frontier_harness.check(
        "collections", impl=planted, profile="dev", domains=["total"], out=tmp_path
    )
    assert not failed.passed and any(r.failure is not None for r in failed.results)
    with pytest.raises(HarnessError, match="observe_reclock"):
        frontier_harness.check("reclock", impl="tests.test_claims_shown:wrong", profile="dev", out=tmp_path)
    with pytest.raises(InfrastructureError, match="the cluster is down"):
        frontier_harness.check(
            "collections", impl="tests.test_claims_shown:cannot_run", profile="dev", out=tmp_path
        )
