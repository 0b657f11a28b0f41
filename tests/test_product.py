"""The harness as a product: verify, config, the pytest fixture, the worked example, plots, fuzzed CLI input."""

from __future__ import annotations

import json
import string

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.time.domains import DOMAIN_NAMES
from frontier_harness.properties.adapters import load_implementation
from frontier_harness.properties.checks.registry import SUITES, get_suite
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.solver.registry import OBLIGATIONS
from tests import planted
from tests.helpers import QUICK


def test_the_worked_example_holds(tmp_path):
    result = run_suite(
        SuiteRequest(
            get_suite("collections"),
            load_implementation("pandas_impl:factory"),
            "pandas_impl:factory",
            attrs.evolve(QUICK, screening_histories=500),
            seed=0,
        )
    )
    assert result.passed, [r.failure.message for r in result.results if r.failure]


def test_fixture_passes_and_fails(frontier_harness):
    frontier_harness.check("laws", domains=["total"])
    with pytest.raises(pytest.fail.Exception, match="counterexample"):
        frontier_harness.check("collections", impl="tests.planted:model_keeps_zero_diffs", domains=["total"])


def test_config_overrides_profiles_and_names_bad_fields(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.frontier-harness]\ncorpus = "cx"\n[tool.frontier-harness.profiles.ci]\nbatched_examples = 3\n'
    )
    config = load_config(tmp_path)
    assert config.get("corpus") == "cx" and config.profile("ci").batched_examples == 3
    (tmp_path / "pyproject.toml").write_text("[tool.frontier-harness.profiles.ci]\nbogus = 1\n")
    with pytest.raises(HarnessError, match="bogus"):
        load_config(tmp_path).profile("ci")
    (tmp_path / "pyproject.toml").write_text("[tool.frontier-harness.profiles]\nci = 3\n")
    with pytest.raises(HarnessError, match=r"profiles\.ci\] must be a table, got 3"):
        load_config(tmp_path).profile("ci")


@pytest.mark.parametrize(
    "toml, said",
    [
        ('profle = "ci"', r"unknown keys \['profle'\]"),  # a typo is named, not ignored
        ("out = 5", r"out must be a string, got \{'out': 5\}"),
        (
            '[tool.frontier-harness.profiles.ci]\nderandomize = "false"',
            "derandomize must be true or false, got 'false'",
        ),
        (
            '[tool.frontier-harness.profiles.ci]\nshrink_seconds = "10"',
            "shrink_seconds must be a number of seconds >= 0",
        ),
        (
            "[tool.frontier-harness.profiles.ci]\nshrink_seconds = -5",
            "shrink_seconds must be a number of seconds >= 0",
        ),
        ("[tool.frontier-harness.profiles.thorough]\ndatabase = 5", "database must be a path"),
    ],
)
def test_a_setting_of_the_wrong_type_is_refused_naming_it(toml, said, tmp_path):
    """A TOML string where a flag or a number belongs ("false" would read as true), a key misspelt: refused
    with the field and its value, before anything runs, not an internal error when a failure shrinks."""
    (tmp_path / "pyproject.toml").write_text(f"[tool.frontier-harness]\n{toml}\n")
    with pytest.raises(HarnessError, match=said):
        load_config(tmp_path).profile("thorough" if "thorough" in toml else "ci")
    (tmp_path / "pyproject.toml").write_text("[tool.frontier-harness.profiles.ci]\nshrink_seconds = 0\n")
    assert load_config(tmp_path).profile("ci").shrink_seconds == 0  # 0 seconds is a budget too


def test_a_profiles_seed_holds_unless_seed_is_given(tmp_path):
    """`seed = 7` in a profile's table is that profile's seed; `--seed` (and `--fh-seed`) replace it only when
    given (a default of 0 replaced it always)."""
    import argparse

    from frontier_harness.properties.cli.arguments import profile_of

    (tmp_path / "pyproject.toml").write_text("[tool.frontier-harness.profiles.ci]\nseed = 7\n")
    config = load_config(tmp_path)
    flags = dict(profile="ci", max_examples=None, batched_examples=None, screening=None)
    assert profile_of(argparse.Namespace(seed=None, **flags), config).seed == 7
    assert profile_of(argparse.Namespace(seed=0, **flags), config).seed == 0


@pytest.fixture(scope="module")
def planted_failure():
    """The counterexample the collections suite finds in the planted zero-diff bug (seed 3)."""
    result = run_suite(
        SuiteRequest(
            get_suite("collections"),
            planted.model_keeps_zero_diffs(),
            "tests.planted:model_keeps_zero_diffs",
            attrs.evolve(QUICK, screening_histories=500),
            seed=3,
            domains=["total"],
        )
    )
    return result.results[0].failure


def test_regression_corpus_fails_while_a_file_reproduces(planted_failure, tmp_path):
    from frontier_harness.properties.cli.verify import replay_corpus

    path = counterexample.write(planted_failure, tmp_path)
    assert [c.passed for c in replay_corpus(tmp_path)] == [False]
    raw = json.loads(path.read_text())
    raw["#meta"]["impl"] = "model"  # "the fix": the same file against a correct implementation
    path.write_text(json.dumps(raw))
    assert [c.passed for c in replay_corpus(tmp_path)] == [True]
    path.write_text("{")
    assert "unreadable" in replay_corpus(tmp_path)[0].message


def test_replay_plot_draws_a_png(planted_failure, tmp_path):
    path = counterexample.write(planted_failure, tmp_path)
    png = tmp_path / "cx.png"
    assert main(["replay", str(path), "--plot", str(png)]) == 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


NOT_INT = st.text(string.printable, max_size=6).filter(lambda t: not t.strip().lstrip("-+").isdigit())
NEGATIVE = st.integers(max_value=-1).map(str)
NOT_POSITIVE = st.sampled_from(["0", "-1", "nan", "inf", "-inf", "1e999", "", "x"])
# Every name a flag accepts: a fuzzed value that spells one (`temporal` is 8 letters) would run, not be refused.
NAMES = {*PROFILES, *SUITES, *DOMAIN_NAMES, *(o.name for o in OBLIGATIONS)}
NOT_A_NAME = st.text(string.ascii_letters + "(),:", min_size=1, max_size=8).filter(lambda t: t not in NAMES)
# flag -> (verbs that take it, bad values for it)
BAD = {
    "--seed": (["check", "verify"], NOT_INT | NEGATIVE),
    "--max-examples": (["check", "verify"], NOT_INT | NEGATIVE | st.just("0")),  # 0 would check nothing
    "--batched-examples": (["check", "verify"], NOT_INT | NEGATIVE | st.just("0")),
    "--screening": (["check", "verify"], NOT_INT | NEGATIVE | st.just("0")),
    "--profile": (["check", "verify"], NOT_A_NAME),
    "--suite": (["check", "verify"], NOT_A_NAME),
    "--domain": (["check"], NOT_A_NAME),
    "--obligation": (["prove"], NOT_A_NAME),
    "--timeout": (["prove", "verify"], NOT_POSITIVE),
    "--skew": (["prove"], NOT_INT | NEGATIVE),
    "--rlimit": (["prove"], NOT_INT | NEGATIVE),
    "--scale": (["bench"], NOT_POSITIVE),
    "--bogus-flag": (["check", "verify", "replay", "prove", "list", "bench"], st.just("1")),
}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(BAD)), st.data())
def test_fuzzed_arguments_exit_2_with_one_line(flag, data):
    verbs, values = BAD[flag]
    argv = [data.draw(st.sampled_from(verbs)), flag, data.draw(values)]
    assert _run(argv) == 2, argv


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["truncate", "retype", "version", "garbage"]), st.integers(0, 10_000), st.data())
def test_fuzzed_counterexample_files_exit_2(tmp_path_factory, how, cut, data):
    good = json.dumps(counterexample.to_itf(_example()))
    bad = {
        "truncate": lambda: good[: cut % len(good)],
        "retype": lambda: json.dumps(
            {**json.loads(good), "states": data.draw(st.sampled_from([1, "s", None, {}]))}
        ),
        "version": lambda: json.dumps(
            {**json.loads(good), "#meta": {**json.loads(good)["#meta"], "format_version": cut}}
        ),
        "garbage": lambda: data.draw(st.text(max_size=40)),
    }[how]()
    if bad == good:
        return
    path = tmp_path_factory.mktemp("fuzz") / "cx.itf.json"
    path.write_text(bad)
    assert _run(["replay", str(path)]) == 2


def _run(argv: list) -> int:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    out = buffer.getvalue().strip()
    assert "Traceback" not in out, out
    if code == 2:
        assert len([line for line in out.splitlines() if line.strip()]) <= 2, out
    return code


def _example():
    from frontier_harness.properties.engine.counterexample import Counterexample
    from frontier_harness.properties.engine.history import Action, History

    return Counterexample(
        "collections",
        "observations_match_model",
        History("total", (Action("update", {"data": "a", "time": 1, "diff": 1}),)),
        "model",
    )
