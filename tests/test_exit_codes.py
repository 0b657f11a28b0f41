"""Exit codes by whose fault: counts that would check nothing are refused at parse time (2), and an
exception the harness never should raise is exit 4 with its traceback, never 1 (a counterexample)."""

from __future__ import annotations

import pytest

from frontier_harness.properties.cli import list_suites
from frontier_harness.properties.cli import main as cli


@pytest.mark.parametrize("flag", ["--screening", "--max-examples", "--batched-examples"])
def test_a_count_of_zero_is_refused_in_one_line(flag, capsys):
    assert cli.main(["check", "--suite", "laws", flag, "0"]) == 2
    out = capsys.readouterr().out.strip()
    assert out == f"error: argument {flag}: expected a whole number >= 1, got 0"


def test_a_profile_of_zero_examples_in_pyproject_is_refused_naming_the_field(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.frontier-harness.profiles.dev]\nmax_examples = 0\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--suite", "laws"]) == 2
    assert "max_examples must be a whole number >= 1, got 0" in capsys.readouterr().out


def test_an_unexpected_exception_is_exit_4_with_its_traceback(monkeypatch, capsys):
    def broken(args, out):
        return {}["a key the harness forgot"]

    monkeypatch.setattr(list_suites, "run", broken)
    assert cli.main(["list"]) == 4
    out = capsys.readouterr().out
    assert "Traceback" in out and "in broken" in out
    assert "internal error: KeyError: 'a key the harness forgot': please report it" in out
