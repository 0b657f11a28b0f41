"""Whose fault: an implementation's exception is a failure carrying its own frames; a wrong-shaped answer,
or a label a trial judge reads that the observation lacks, is a contract violation (exit 2); a file that is
not a valid history is bad input (exit 2), never blamed on the implementation."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.ingestion import resumption
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.batch import check_batch
from frontier_harness.properties.engine.errors import ContractViolation
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome, Property, Suite, observations
from tests.helpers import QUICK, patched
from tests.test_rejections import RESUMPTION, restart_from_the_minimum

RAISING = Path(__file__).parent / "raising_impl.py"
LINE = next(i for i, text in enumerate(RAISING.read_text().splitlines(), 1) if "RAISES-HERE" in text)
WHERE = f"tests/raising_impl.py:{LINE}"
CHECK = ["check", "--suite", "collections", "--domain", "total", "--profile", "dev"]


def _check(impl: str, out: Path) -> int:
    return main([*CHECK, "--impl", f"tests.raising_impl:{impl}", "--out", str(out)])


def _one_file(directory: Path) -> Path:
    files = list(directory.glob("*.itf.json"))
    assert len(files) == 1, files
    return files[0]


def test_a_raising_implementation_fails_with_the_raising_line_in_table_meta_and_trace(tmp_path, capsys):
    assert _check("factory", tmp_path) == 1
    out = capsys.readouterr().out
    assert "implementation raised KeyError" in out and f"{WHERE} in observe_one" in out
    assert "properties/" not in out.split("implementation raised", 1)[1].split("counterexample written")[0]
    path = _one_file(tmp_path)
    meta = json.loads(path.read_text())["#meta"]
    assert meta["traceback"][-1].startswith(f"{WHERE} in observe_one: ")
    assert all("properties/" not in frame for frame in meta["traceback"])
    assert counterexample.read(path).trace == tuple(meta["traceback"])
    assert main(["replay", str(path), "--trace"]) == 1
    replayed = capsys.readouterr().out
    assert f"at {WHERE} in observe_one: " in replayed and "RAISES-HERE" in replayed
    assert "Traceback (most recent call last)" in replayed


def _line(marker: str) -> str:
    lines = RAISING.read_text().splitlines()
    return f"tests/raising_impl.py:{next(i for i, text in enumerate(lines, 1) if marker in text)}"


def test_a_raise_inside_a_static_method_is_the_implementations_not_the_models(tmp_path, capsys):
    assert _check("static_lookup", tmp_path) == 1
    out = capsys.readouterr().out
    assert "implementation raised KeyError" in out and f"{WHERE} in observe_one" in out, out
    assert "generator/model disagreement" not in out


def test_a_value_of_another_type_is_a_wrong_answer_shown_as_it_is_not_the_models_error(tmp_path, capsys):
    assert _check("counts_not_rows", tmp_path) == 1
    out = capsys.readouterr().out
    assert "at step" in out and "!= implementation 0" in out and "generator/model" not in out, out


def test_an_implementation_that_exits_fails_with_its_line_never_exit_0(tmp_path, capsys):
    """`sys.exit(0)` inside `observe_collections` is the implementation's failure (a file that replays), not
    a run that exits 0 having printed nothing."""
    assert _check("exits_on_read", tmp_path) == 1
    out = capsys.readouterr().out
    assert (
        "implementation raised SystemExit: 0" in out
        and f"{_line('EXITS-HERE')} in observe_collections" in out
    )
    assert main(["replay", str(_one_file(tmp_path))]) == 1


def test_a_factory_that_raises_is_bad_input_naming_its_line_never_an_internal_error(tmp_path, capsys):
    assert _check("factory_raises", tmp_path) == 2
    out = capsys.readouterr().out
    said = "error: --impl 'tests.raising_impl:factory_raises': the factory raised KeyError: 'settings'"
    assert out.startswith(said) and f"at {_line('FACTORY-RAISES-HERE')} in factory_raises" in out, out
    assert "internal error" not in out and not list(tmp_path.glob("*.itf.json"))


@pytest.mark.parametrize(
    "impl, said, marker",
    [
        ("prepare_raises", "prepare() raised KeyError: 'settings'", "PREPARE-RAISES-HERE"),
        ("recover_raises", "recover() raised RuntimeError: cannot reconnect", "RECOVER-RAISES-HERE"),
        (
            "classifier_raises",
            "infrastructure_failure() raised IndexError: tuple index out of range",
            "CLASSIFIER-RAISES-HERE",
        ),
        ("classifier_exits", "infrastructure_failure() raised SystemExit: 3", "CLASSIFIER-EXITS-HERE"),
    ],
)
def test_a_prepare_recover_or_classifier_that_raises_is_the_implementations_exit_2_naming_its_line(
    impl, said, marker, tmp_path, capsys
):
    """`prepare()` before the suite runs, `recover()` before the one retry of an infrastructure failure, and
    `infrastructure_failure(exc)` asked whether an exception is infrastructure: what the user's code raises
    there is their contract broken, with their line (was exit 4 "internal error")."""
    assert _check(impl, tmp_path) == 2
    out = capsys.readouterr().out
    assert (
        out.startswith(f"error: tests.raising_impl:{impl}: {said}")
        if impl == "prepare_raises"
        else said in out
    )
    assert f"at {_line(marker)}" in out and "internal error" not in out, out
    assert not list(tmp_path.glob("*.itf.json"))


@pytest.mark.parametrize(
    "impl, said",
    [
        (
            "one_short",
            "observe_collections must return a list of one observation per history (1 histories); "
            "it returned a list of 0",
        ),
        ("not_a_list", "observe_collections must return a list of one observation per history"),
    ],
)
def test_a_wrong_shaped_answer_is_a_contract_violation_exit_2_never_a_counterexample(
    impl, said, tmp_path, capsys
):
    assert _check(impl, tmp_path) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: contract violation: ") and said in out, out
    assert "KeyError" not in out and not list(tmp_path.glob("*.itf.json"))


def test_a_label_the_implementation_never_reports_is_a_named_wrong_answer(tmp_path, capsys):
    """A missing `(step, label)` is an answer, not a shape: labels such as `error` appear only when
    the event happens, so the comparison names it (`(nothing)`) and the run fails, exit 1."""
    assert _check("no_final", tmp_path) == 1
    out = capsys.readouterr().out
    assert "final at step" in out and "implementation (nothing)" in out, out
    assert "KeyError" not in out


@pytest.fixture
def written(tmp_path, capsys) -> Path:
    """A counterexample file of the raising implementation (a read at step 0 or later)."""
    assert _check("factory", tmp_path / "cx") == 1
    capsys.readouterr()
    return _one_file(tmp_path / "cx")


def _edited(path: Path, tmp_path: Path, edit) -> Path:
    raw = json.loads(path.read_text())
    edit(raw)
    edited = tmp_path / "edited.itf.json"
    edited.write_text(json.dumps(raw))
    return edited


@pytest.mark.parametrize("impl", [[], ["--impl", "model"]])
def test_an_unknown_action_is_not_a_valid_history_exit_2(written, tmp_path, impl, capsys):
    upsert = _edited(written, tmp_path, lambda raw: raw["states"][0].update(action="upsert"))
    assert main(["replay", str(upsert), *impl]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: not a valid history: ") and "'upsert'" in out, out
    assert "still fails" not in out and "BadHistory" not in out


def test_states_that_do_not_parse_are_not_a_valid_history_exit_2(written, tmp_path, capsys):
    bad = _edited(written, tmp_path, lambda raw: raw["states"][0]["args"].update(time="x"))
    assert main(["replay", str(bad)]) == 2
    out = capsys.readouterr().out
    assert "not a valid history: action 0: invalid total time 'x'" in out, out


def test_verify_exits_2_on_a_corpus_file_that_is_not_a_valid_history(written, tmp_path, monkeypatch, capsys):
    from frontier_harness.properties.cli import run as runs
    from frontier_harness.properties.solver import check as obligations

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _edited(written, corpus, lambda raw: raw["states"][0].update(action="upsert"))
    monkeypatch.setattr(runs, "run_suites", lambda *args: ([], {}))  # the corpus alone (no Spark)
    monkeypatch.setattr(obligations, "prove", lambda *args: [])
    assert main(["verify", "--corpus", str(corpus)]) == 2
    assert "not a valid history" in capsys.readouterr().out


def test_a_recorded_disagreement_replays_as_that_disagreement_and_any_other_file_is_not_valid(
    tmp_path, capsys
):
    with patched(resumption, "restart", restart_from_the_minimum):
        from frontier_harness.properties.adapters.model import ModelImplementation
        from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

        result = run_suite(
            SuiteRequest(RESUMPTION, ModelImplementation(), "model", QUICK, seed=0, domains=["total"])
        )
        cx = next(r.failure for r in result.results if r.failure is not None)
        assert cx.disagreement
        recorded = counterexample.write(cx, tmp_path / "a")
        assert main(["replay", str(recorded), "--impl", "model"]) == 1
        assert "still fails: generator/model disagreement" in capsys.readouterr().out
        relabelled = counterexample.write(attrs.evolve(cx, message="read differs"), tmp_path / "b")
        assert main(["replay", str(relabelled), "--impl", "model"]) == 2
        assert "error: not a valid history: the model rejects it: " in capsys.readouterr().out


def test_a_label_a_trial_judge_reads_and_the_observation_lacks_is_a_contract_violation():
    """A trial suite's judge reads `(step, label)`s its observer must report (`suite.Observed`): one missing
    is the implementation's contract broken (exit 2), never "generator/model disagreement: the model
    raised KeyError" (exit 1), which it was."""

    class Lacks(ModelImplementation):
        def observe_x(self, domain, histories):
            return [{(0, "read"): frozenset()} for _ in histories]

    def check(impl, histories):
        return [Outcome(ok=not obs[(0, "commits")]) for obs in observations(impl, "observe_x", histories)]

    prop = Property("p", "", draw_collection_history, check)
    suite = Suite("trials", "", (prop,), "model", domains=("total",), calls=("observe_x",))
    with pytest.raises(ContractViolation, match=r"observe_x must return \(0, 'commits'\) in the observation"):
        check_batch(prop, Lacks(), [History("total", ())], suite)
