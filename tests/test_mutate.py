"""`frontier-harness mutate`: exact verdicts on a tiny module, `--since`, modules restored after a mutant."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from frontier_harness.properties.cli.main import main

FIXTURE = Path(__file__).parent / "mutate_fixture"
TINY = [
    "mutate",
    "--target",
    "tests.mutate_fixture.tiny",
    "--suite",
    "tests.mutate_fixture.suite:SUITE",
    "--impl",
    "tests.mutate_fixture.impl:factory",
    "--profile",
    "ci",
]
# Every mutant of tests/mutate_fixture/tiny.py and its verdict (see that module's docstring).
EXPECTED = {
    (18, "drop-filter", "if t <= bound -> (no condition)"): "killed",
    (18, "off-by-one", "t -> t + 1"): "killed",
    (18, "off-by-one", "t -> t - 1"): "killed",
    (18, "compare", "t <= bound -> t < bound"): "killed",
    (18, "off-by-one", "bound -> bound + 1"): "killed",
    (18, "off-by-one", "bound -> bound - 1"): "killed",
    (21, "min-max", "max(kept) -> min(kept)"): "killed",
    (21, "min-max", "min(kept) -> max(kept)"): "survived",  # the equivalent mutant
    (22, "min-max", "max(latest, earliest) -> min(latest, earliest)"): "killed",
    (27, "compare", "n < 3 -> n <= 3"): "unreached",
}


def _verdicts(report: dict) -> dict:
    return {
        (m["line"], m["operator"], f"{m['original']} -> {m['mutated']}"): m["status"]
        for m in report["mutants"]
    }


def test_tiny_module_verdicts_are_exact(tmp_path, capsys):
    out = tmp_path / "mutate.json"
    assert main([*TINY, "--json", str(out), "--junit", str(tmp_path / "mutate.xml")]) == 1
    report = json.loads(out.read_text())
    assert _verdicts(report) == EXPECTED
    assert len(report["mutants"]) == 12  # `t` is mutated twice on line 18: kept, and compared
    killed = [m for m in report["mutants"] if m["status"] == "killed"]
    assert all(m["check"] == "tiny.latest_matches_rule[total]" and 1 <= m["size"] <= 4 for m in killed)
    assert report["spark_sessions_started"] == 0 and report["score"] == pytest.approx(10 / 11)
    printed = capsys.readouterr().out
    assert "tests/mutate_fixture/tiny.py:21  min-max  min(kept) -> max(kept)" in printed
    cases = ET.parse(tmp_path / "mutate.xml").getroot().iter("testcase")
    outcomes = [next((c.tag for c in case), "passed") for case in cases]
    assert sorted(outcomes) == ["failure"] + ["passed"] * 10 + ["skipped"]


def test_modules_are_restored_after_each_mutant():
    import tests.mutate_fixture.impl as impl_before
    import tests.mutate_fixture.tiny as tiny_before

    assert main([*TINY, "--sample", "3"]) in (0, 1)
    assert sys.modules["tests.mutate_fixture.tiny"] is tiny_before
    assert sys.modules["tests.mutate_fixture.impl"] is impl_before
    assert impl_before.latest_before is tiny_before.latest_before


def test_since_mutates_only_the_changed_line(tmp_path, monkeypatch):
    package = tmp_path / "since_demo"
    shutil.copytree(FIXTURE, package, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], cwd=tmp_path, check=True)
    tiny = package / "tiny.py"
    tiny.write_text(tiny.read_text().replace("return max(latest, earliest)", "return max(earliest, latest)"))
    subprocess.run([*git, "commit", "-qam", "one line"], cwd=tmp_path, check=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    argv = [
        "mutate",
        "--target",
        "since_demo.tiny",
        "--suite",
        "since_demo.suite:SUITE",
        "--impl",
        "since_demo.impl:factory",
        "--profile",
        "ci",
        "--since",
        "HEAD~1",
        "--json",
        str(tmp_path / "since.json"),
    ]
    assert main(argv) == 0
    report = json.loads((tmp_path / "since.json").read_text())
    assert [(m["path"], m["line"], m["operator"], m["status"]) for m in report["mutants"]] == [
        ("since_demo/tiny.py", 22, "min-max", "killed")
    ]


def test_since_with_a_bad_ref_is_a_usage_error(capsys):
    assert main(["mutate", "--target", "tests.mutate_fixture.tiny", "--since", "no-such-ref", "--list"]) == 2
    assert capsys.readouterr().out.startswith("error: --since")


@pytest.mark.spark
def test_a_spark_mutant_is_killed_in_this_process(spark_session):
    """Consolidation that keeps zero sums, loaded in memory and killed on the shared session."""
    import attrs

    import frontier_harness.spark_impl.time.collection as original
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.engine.profiles import PROFILES
    from frontier_harness.properties.mutate.engine import Engine, Plan, plan_modules
    from frontier_harness.properties.mutate.mutants import enumerate_mutants
    from frontier_harness.properties.mutate.probe import Probe
    from frontier_harness.spark_impl import session

    modules, extra = plan_modules("frontier_harness.spark_impl", "spark")
    collections = next(m for m in modules if m.name == "frontier_harness.spark_impl.time.collection")
    lines = collections.source.splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "return updates.groupBy(" in text)
    (mutant,) = [m for m in enumerate_mutants(collections) if m.line == line and m.operator == "drop-filter"]
    suite = get_suite("collections")
    probe = Probe(suite, suite.properties[0], "total", "spark")
    profile = attrs.evolve(PROFILES["dev"], screening_histories=200, screening_batch=200)
    run = Engine(Plan("frontier_harness.spark_impl", tuple(modules), tuple(extra), (probe,), profile, 0)).run(
        [mutant], session.starts
    )
    (result,) = run.results
    assert (result.status, result.lane) == ("killed", "screening") and result.size <= 3
    assert run.sessions_started == 0  # the session the tests share, reused
    assert sys.modules["frontier_harness.spark_impl.time.collection"] is original


def test_default_probes_judge_every_lane_check_runs():
    """Without `--impl`, a model mutant is judged as `check` judges: the model lane on its
    independently referenced properties, and the default implementation against the model."""
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.mutate.probe import probes_of

    lanes = {
        (p.impl_name, p.prop.name)
        for p in probes_of([get_suite("collections"), get_suite("ttl")], None, False)
    }
    assert ("model", "reads_match_store_without_compaction") in lanes
    assert ("spark", "observations_match_model") in lanes
    assert ("model", "observations_match_model") not in lanes  # the model is that property's reference


def test_a_binding_outside_the_target_sees_the_mutant_and_gets_its_original_back():
    """A suite's `from frontier_harness.model.x import f` is rebound for the mutant's block, then restored."""
    import ast
    import types

    from frontier_harness.properties.mutate.loader import Loader
    from frontier_harness.properties.mutate.sources import SourceModule

    target = types.ModuleType("fh_rebind_target")
    exec("def f():\n    return 1\n", target.__dict__)
    user = types.ModuleType("fh_rebind_user")
    user.f = target.f
    sys.modules.update({"fh_rebind_target": target, "fh_rebind_user": user})
    try:
        module = SourceModule("fh_rebind_target", Path("t.py"), "def f():\n    return 1\n")
        with Loader(frozenset({"fh_rebind_target"})).activated(
            module, ast.parse("def f():\n    return 2\n"), []
        ):
            assert user.f() == 2
        assert user.f is target.f and user.f() == 1
    finally:
        sys.modules.pop("fh_rebind_target")
        sys.modules.pop("fh_rebind_user")


def test_at_keeps_only_the_mutants_on_the_named_lines(capsys):
    at = ["--at", "tests/mutate_fixture/tiny.py:21", "--at", "tests/mutate_fixture/tiny.py:27"]
    assert main(["mutate", "--target", "tests.mutate_fixture.tiny", *at, "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed == [
        "tests/mutate_fixture/tiny.py:21  min-max  max(kept) -> min(kept)",
        "tests/mutate_fixture/tiny.py:21  min-max  min(kept) -> max(kept)",
        "tests/mutate_fixture/tiny.py:27  compare  n < 3 -> n <= 3",
        "3 mutants",
    ]


def test_at_needs_a_line_number(capsys):
    assert main(["mutate", "--target", "tests.mutate_fixture.tiny", "--at", "tiny.py", "--list"]) == 2
    assert "expected FILE:LINE" in capsys.readouterr().out


def test_a_probe_that_fails_unmutated_is_named_before_its_unreached_mutants(capsys):
    """A suite that fails on the code as it is judges no mutant: the run says so, naming the probe."""
    broken = [*TINY[:-4], "--impl", "tests.mutate_fixture.impl:off_by_one", "--profile", "ci"]
    assert main(broken) == 1
    printed = capsys.readouterr().out
    assert "failed unmutated, so it judges no mutant: tiny.latest_matches_rule[total]" in printed
    assert "unreached (12):" in printed  # every mutant of tiny.py


def test_a_module_that_cannot_be_found_is_named_by_its_flag(capsys):
    assert main([*TINY[:5], "--impl", "nowhere.impl:factory", "--list"]) == 2
    assert "error: --impl 'nowhere.impl': cannot be found" in capsys.readouterr().out


def test_a_users_module_is_found_from_where_the_command_runs(tmp_path, monkeypatch, capsys):
    """As `--impl` and `--job` are: the console script does not put the working directory on sys.path."""
    (tmp_path / "users_rule.py").write_text("def bound(t, b):\n    return t if t <= b else None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert main(["mutate", "--target", "users_rule", "--list"]) == 0
    assert "users_rule.py:2" in capsys.readouterr().out


TESTS_JUDGE = [
    "mutate",
    "--target",
    "tests.mutate_fixture.tiny",
    "--tests",
    "tests/mutate_fixture/checks_tiny.py",
]


def test_a_pytest_command_judges_each_mutant_as_the_suites_do(tmp_path, capsys):
    """`--tests`: the same verdicts as the tiny suite's, from one pytest process per mutant that loaded it;
    the line no test runs is unreached, not survived."""
    out = tmp_path / "mutate.json"
    assert main([*TESTS_JUDGE, "--jobs", "2", "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    assert _verdicts(report) == EXPECTED and len(report["mutants"]) == 12
    killed = [m for m in report["mutants"] if m["status"] == "killed"]
    assert all(m["check"].startswith("FAILED tests/mutate_fixture/checks_tiny.py::") for m in killed)
    assert "score 90.9% (10 killed of 11 scored; 1 unreached" in capsys.readouterr().out


def test_a_mutant_no_test_process_loaded_is_infrastructure_never_a_verdict():
    """A process that passes without importing the mutated module says nothing about the mutant."""
    from frontier_harness.properties.mutate import by_tests
    from frontier_harness.properties.mutate.mutants import enumerate_mutants
    from frontier_harness.properties.mutate.sources import target_modules

    (module,) = target_modules("tests.mutate_fixture.tiny")
    unrelated = by_tests.TestCommand(("frontier_harness/properties/mutate/results.py",))
    result = by_tests.judge(unrelated, module, enumerate_mutants(module)[0], limit=60)
    assert (result.status, result.message) == ("infrastructure", "no test imported tests.mutate_fixture.tiny")


def test_a_pytest_command_that_fails_unmutated_is_a_usage_error(capsys):
    assert main([*TESTS_JUDGE[:-1], "tests/mutate_fixture/no_such_file.py"]) == 2
    assert "exits 4 unmutated, so it judges no mutant" in capsys.readouterr().out


EQUIVALENTS = """
[[mutant]]
file = "tests/mutate_fixture/tiny.py"
source = "latest, earliest = max(kept), min(kept)"
change = "min(kept) -> max(kept)"
why = "earliest only meets latest in max(latest, earliest)"

[[mutant]]
file = "tests/mutate_fixture/tiny.py"
source = "latest, earliest = max(kept), min(kept)"
change = "max(kept) -> min(kept)"
why = "wrongly listed: the examples tell min from max"
"""


def test_a_survivor_named_equivalent_is_out_of_the_score_and_a_killed_one_is_a_stale_entry(tmp_path, capsys):
    listed = tmp_path / "equivalent.toml"
    listed.write_text(EQUIVALENTS)
    at_21 = [*TESTS_JUDGE, "--at", "tests/mutate_fixture/tiny.py:21", "--equivalent", str(listed)]
    assert main([*at_21, "--json", str(tmp_path / "m.json")]) == 0
    printed = capsys.readouterr().out
    assert "min(kept) -> max(kept)  (earliest only meets latest in max(latest, earliest))" in printed
    assert "score 100.0% (1 killed of 1 scored; 0 unreached, 1 equivalent" in printed
    assert (
        "stale --equivalent entry: tests/mutate_fixture/tiny.py  'latest, earliest = max(kept), min(kept)'  "
        "max(kept) -> min(kept): killed, so not equivalent" in printed
    )
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["counts"]["equivalent"] == 1 and report["score"] == 1.0


def test_an_equivalent_file_without_every_field_is_a_usage_error(tmp_path, capsys):
    listed = tmp_path / "equivalent.toml"
    listed.write_text('[[mutant]]\nfile = "tests/mutate_fixture/tiny.py"\n')
    assert main([*TESTS_JUDGE, "--equivalent", str(listed)]) == 2
    assert "[[mutant]] #1 needs exactly ['file', 'source', 'change', 'why']" in capsys.readouterr().out


@pytest.mark.parametrize("impl", ["classifier_raises", "classifier_exits"])
def test_a_probes_classifier_that_raises_is_the_implementations_exit_2_never_a_killed_mutant(impl):
    """A suite probe's check raised, and the implementation's `infrastructure_failure()`, asked whether that
    was infrastructure, raised too: its contract broken (`ImplementationError`, naming its line), never a
    crash counted as the mutant killed."""
    import time

    from frontier_harness.properties.engine.errors import ImplementationError
    from frontier_harness.properties.engine.history import History
    from frontier_harness.properties.mutate.probe import Witness
    from tests import raising_impl

    def check(implementation, histories):
        raise ConnectionError("the pipeline's server went away")

    with pytest.raises(ImplementationError, match="infrastructure_failure\\(\\) raised") as raised:
        Witness(check, time.perf_counter())(getattr(raising_impl, impl)(), [History("total", ())])
    assert "raising_impl.py" in str(raised.value), raised.value
