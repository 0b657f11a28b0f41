"""Every test docs/claims.md names, as showing a claim of README.md or docs/, exists and `.ci/run` runs it.

A name is a pytest node id (`tests/test_x.py::test_y`, with `[case]` for one parameter case; without it,
every case). It must be collected, from a `tests/**/test_*.py` file (what `.ci/run`'s pytest collects),
and no marker may stop it: `.ci/run` runs the fast tests (the README's test command) and then the `slow`
ones (`--run-slow -m slow`), so a `skip`, a holding `skipif` or an `xfail(run=False)` is the only way a
named test would not run. A `nightly` test (`.ci/run` leaves it to the nightly run: CI's 90 minutes) may be
named only on a line that says "(nightly)", so a claim CI does not show says so. Renaming or deleting a named
test fails here, naming it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.collected_tests import NIGHTLY, OUTPUT

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "docs" / "claims.md"
NODE_ID = re.compile(r"`(tests/[\w/]+\.py::[^`\s]+)`")
OUTER = ("PYTEST_ADDOPTS", "PYTEST_XDIST")  # the outer run's options (`.ci/run`'s --junitxml), its worker


def named_tests(text: str) -> set[str]:
    """The node ids a claims page names, in backticks.

    >>> sorted(named_tests("| a | `tests/test_x.py::test_y[ci]`, `tests/cdc/test_z.py::test_w` |"))
    ['tests/cdc/test_z.py::test_w', 'tests/test_x.py::test_y[ci]']
    """
    return set(NODE_ID.findall(text))


def nightly_named(text: str) -> set[str]:
    """The node ids named on a line that says the claim is shown by the nightly run only.

    >>> page = ["| a | `tests/test_x.py::test_y` (nightly) |", "| b | `tests/test_x.py::test_z` |"]
    >>> sorted(nightly_named(chr(10).join(page)))
    ['tests/test_x.py::test_y']
    """
    return {n for line in text.splitlines() if f"({NIGHTLY})" in line for n in named_tests(line)}


@functools.cache
def collected(files: tuple[str, ...]) -> dict[str, list[str]]:
    """What pytest collects from `files` with the slow tests on: node id -> why a marker skips it."""
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "collected.json"
        return collect_into(output, files)


def collect_into(output: Path, files: tuple[str, ...]) -> dict[str, list[str]]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "--run-slow",
        "-p",
        "tests.collected_tests",
    ]
    ran = subprocess.run(
        [*command, "-o", "addopts=-p no:cacheprovider", *files],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith(OUTER)} | {OUTPUT: str(output)},
        capture_output=True,
        text=True,
    )
    assert output.exists(), f"the collection wrote nothing (exit {ran.returncode}):\n{ran.stdout}{ran.stderr}"
    return json.loads(output.read_text())


def not_run(named: set[str], found: dict[str, list[str]], nightly: frozenset[str] = frozenset()) -> list[str]:
    """Each named test `.ci/run` would not run, with why; empty when it runs them all (a `nightly` one named
    as such, in `nightly`, does not count).

    >>> found = {"tests/test_a.py::test_b[x]": [], "tests/test_a.py::test_c": ["skip: no"]}
    >>> not_run({"tests/test_a.py::test_b", "tests/test_a.py::test_c", "tests/a.py::test_d"}, found)
    ['tests/a.py::test_d: not a tests/**/test_*.py file, which .ci/run collects', \
'tests/test_a.py::test_c: skipped by a marker (skip: no)']
    """
    said = []
    for node in sorted(named):
        path = node.split("::")[0]
        cases = [n for n in found if n == node or ("[" not in node and n.startswith(node + "["))]
        if not re.fullmatch(r"tests/(\w+/)*test_\w+\.py", path):
            said.append(f"{node}: not a tests/**/test_*.py file, which .ci/run collects")
        elif not cases:
            said.append(f"{node}: not collected (renamed, deleted, or a case id that changed?)")
        elif skips := sorted(
            {why for n in cases for why in found[n] if not (node in nightly and why.startswith(NIGHTLY))}
        ):
            said.append(f"{node}: skipped by a marker ({'; '.join(skips)})")
    return said


def check_claims(text: str) -> list[str]:
    """What `not_run` says of every test a claims page names, collecting their files once."""
    named = named_tests(text)
    files = tuple(sorted({n.split("::")[0] for n in named if (ROOT / n.split("::")[0]).exists()}))
    return not_run(named, collected(files) if files else {}, frozenset(nightly_named(text)))


def test_every_test_the_claims_name_is_collected_and_run_by_ci_run():
    named = named_tests(CLAIMS.read_text())
    assert len(named) >= 100, f"docs/claims.md names {len(named)} tests: is the pattern still right?"
    assert not check_claims(CLAIMS.read_text())


def test_a_renamed_or_deleted_test_or_case_is_named(tmp_path):
    """The same check over a page whose ids no longer match the tests: the first test docs/claims.md names,
    kept, renamed, deleted and with a case it does not have (one file to collect, not the page's all)."""
    real = next(n for n in sorted(named_tests(CLAIMS.read_text())) if "[" not in n)
    renamed, deleted, case = (
        real.replace("::test_", "::test_renamed_"),
        real + "_gone",
        real + "[no-such-case]",
    )
    page = tmp_path / "claims.md"
    page.write_text("".join(f"| a claim | `{node}` |\n" for node in (real, renamed, deleted, case)))
    said = check_claims(page.read_text())
    assert [line.split(": ")[0] for line in said] == sorted([renamed, deleted, case]), said
    assert all("not collected" in line for line in said)
