"""The CLI's contract: exit codes, one-line errors, determinism, infrastructure reported as such."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample


def test_list_names_every_suite(capsys):
    assert main(["list"]) == 0
    assert "laws" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--suite", "nope"],
        ["check", "--profile", "weird"],
        ["replay", "/no/such/file.itf.json"],
        ["frobnicate"],
        ["check", "--seed", "x"],
        ["check", "--impl", "no_such_module:factory", "--suite", "collections"],
    ],
)
def test_bad_input_exits_2_with_one_line(argv, capsys):
    assert main(argv) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith("error:") and "Traceback" not in out


def test_check_laws_passes_and_is_deterministic(capsys):
    args = ["check", "--suite", "laws", "--profile", "ci", "--domain", "partitioned", "--max-examples", "20"]
    args += ["--screening", "500"]  # ci's seed and derandomized draws, fewer of them: the same verdicts twice
    assert main(args) == 0
    first = _verdicts(capsys.readouterr().out)
    assert main(args) == 0
    assert _verdicts(capsys.readouterr().out) == first


def test_piped_check_prints_a_line_per_property_and_domain_as_it_ends(capsys):
    """A CI log (not a terminal) hears of each property and domain when it ends, not only of the suite."""
    assert main(["check", "--suite", "ttl_codec", "--impl", "model", "--profile", "dev"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ttl_codec.")]
    names = {f"ttl_codec.{p.name} [{d}]" for p in get_suite("ttl_codec").properties for d in ("total",)}
    assert lines and all(line.split(" against")[0] in names for line in lines), lines
    assert all(" against model: " in line and line.endswith(", held") for line in lines), lines


def _verdicts(out: str) -> list[str]:
    return [
        line.split("│")[1:4] and "".join(line.split("│")[1:5] + line.split("│")[-2:-1])
        for line in out.splitlines()
        if "held" in line or "FAILED" in line
    ]


def test_planted_failure_exits_1_and_writes_a_replayable_file(tmp_path, capsys):
    out = tmp_path / "cx"
    code = main(
        [
            "check",
            "--suite",
            "collections",
            "--domain",
            "total",
            "--profile",
            "dev",
            "--impl",
            "tests.planted:model_keeps_zero_diffs",
            "--out",
            str(out),
            "--junit",
            str(tmp_path / "j.xml"),
        ]
    )
    assert code == 1
    files = list(out.glob("*.itf.json"))
    assert len(files) == 1 and "<failure" in (tmp_path / "j.xml").read_text()
    assert main(["replay", str(files[0])]) == 1
    capsys.readouterr()
    assert main(["replay", str(files[0]), "--impl", "model"]) == 0
    found = counterexample.read(files[0])
    held = " ".join(capsys.readouterr().out.split())
    assert (
        "holds now" in held and f"when it was found ({found.impl}): {' '.join(found.message.split())}" in held
    )


def test_missing_java_is_infrastructure_exit_3(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_REMOTE")}
    env["PATH"] = os.path.dirname(sys.executable)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "frontier_harness.properties.cli.main",
            "check",
            "--suite",
            "collections",
            "--profile",
            "dev",
            "--out",
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and "Java" in lines[0] and "install" in lines[0]
    assert not list(tmp_path.glob("*.itf.json"))


def test_impl_is_the_implementation_under_test_for_a_laws_suite(capsys, tmp_path):
    """`--impl` on the laws suite checks the named implementation (it used to check the model)."""
    argv = ["check", "--suite", "laws", "--domain", "product(total,total)", "--profile", "dev"]
    assert main([*argv, "--impl", "tests.planted:lex_product", "--out", str(tmp_path)]) == 1
    assert "laws against tests.planted:lex_product" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, named",
    [
        (["check", "--suite", "laws", "--impl", "spark"], "time_domain, antichain, advance_by"),
        (["check", "--suite", "remap", "--impl", "spark"], "checks the model's own laws only"),
        (["check", "--suite", "reclock", "--impl", "pandas_impl:factory"], "observe_reclock"),
    ],
)
def test_a_suite_that_cannot_run_against_impl_refuses_with_exit_2(argv, named, capsys):
    assert main(argv) == 2
    out = capsys.readouterr().out
    assert out.startswith("error:") and named in out


def test_without_suite_an_impl_runs_the_suites_it_supports_and_names_the_others(capsys):
    argv = ["check", "--impl", "pandas_impl:factory", "--profile", "dev", "--domain", "total"]
    assert main([*argv, "--max-examples", "40", "--screening", "2000"]) == 0
    out = capsys.readouterr().out
    assert "collections against pandas_impl:factory" in out
    assert "not run: suite 'reclock' calls observe_reclock, which 'pandas_impl:factory' lacks" in out


@pytest.mark.parametrize(
    "argv,gated",
    [
        ([], None),  # every suite but `prove`, whose obligations verify proves itself
        (["--suite", "collections", "--suite", "ttl"], ["collections", "ttl"]),
    ],
)
def test_verify_gates_on_every_suite_but_prove_or_on_those_suite_names(argv, gated, monkeypatch, tmp_path):
    from frontier_harness.properties.checks.registry import SUITES
    from frontier_harness.properties.cli import run as runs
    from frontier_harness.properties.solver import check as obligations

    ran = []
    monkeypatch.setattr(
        runs, "run_suites", lambda args, out, config, suites, domains: ran.extend(suites) or ([], {})
    )
    monkeypatch.setattr(obligations, "prove", lambda *args: [])
    main(["verify", *argv, "--corpus", str(tmp_path)])
    assert [s.name for s in ran] == (gated or [name for name in SUITES if name != "prove"])
