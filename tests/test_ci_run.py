"""`.ci/run` is what a user sees: the README's test command, verbatim, in a fresh virtualenv; without
Java 17 it fails in one line (never a green run that skipped Spark)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CI_RUN = ROOT / ".ci" / "run"
# the slow part's workers: one more than the cores
WORKERS = int(subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout) + 1


def readme_test_command() -> str:
    """The second command of the README's "Setup: two commands" block, as a user copies it."""
    block = re.search(r"## Setup: two commands.*?```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README.md has no 'Setup: two commands' block"
    commands = [line for line in block.group(1).splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2, commands
    return commands[1]


def test_ci_run_runs_the_readmes_test_command_verbatim():
    script = CI_RUN.read_text()
    extraction = next(line for line in script.splitlines() if line.startswith("command="))
    extracted = subprocess.run(
        ["bash", "-c", f'{extraction}; echo "$command"'], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert extracted == readme_test_command()
    assert 'run_part "the README\'s test command" junit-tests.xml "$command"' in script
    assert '-m venv "$venv"' in script


def test_ci_run_without_java_17_fails_in_one_line(tmp_path):
    """A PATH whose `java` is missing: exit 3 and one line naming what to install, no virtualenv made."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sed", "head", "dirname", "mktemp", "awk"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"} | {"PATH": str(bin_dir)}
    ran = subprocess.run([str(bin_dir / "bash"), str(CI_RUN)], env=env, capture_output=True, text=True)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert ran.stdout.strip().splitlines() == [
        ".ci/run: Java 17 not found (java -version: none): Spark needs it; "
        "install openjdk-17-jre-headless or set JAVA_HOME"
    ]


def test_a_run_that_skips_a_test_for_any_reason_says_so_in_its_last_line(tmp_path):
    """The conftest's last line names every skip by why (here the README test's own, outside a git
    checkout), not only the slow tests and Spark's: a green run never hides a test it did not run."""
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_addoption, pytest_collection_modifyitems, "
        "pytest_runtest_logreport, pytest_unconfigure  # noqa: F401\n"
    )
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n\ndef test_skipped():\n    pytest.skip('not a git checkout')\n\n\n"
        "@pytest.mark.slow\ndef test_slow():\n    pass\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: minutes each\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    last = ran.stdout.strip().splitlines()[-1]
    assert (
        last == "NOT RUN: 1 slow tests skipped (run with --run-slow); 1 test skipped: not a git checkout"
    ), ran.stdout


FAKE_PYTHON = """#!/bin/bash
# `$PYTHON -m venv DIR` makes a venv whose python logs each run and exits $FAKE_EXIT (the calibration: a line)
dir=$3
mkdir -p "$dir/bin"
printf 'export PATH=%s/bin:$PATH\\n' "$dir" > "$dir/bin/activate"
cat > "$dir/bin/python" <<'INNER'
#!/bin/bash
if [ "$1" = "-c" ]; then echo "calibration: fake"; exit 0; fi
echo "python $* | $PYTEST_ADDOPTS" >> "$LOG"
code=${FAKE_EXIT:-5}
case "$*" in *--run-slow*) code=${FAKE_SLOW_EXIT:-$code} ;; esac
exit $code
INNER
printf '#!/bin/bash\\nexit 0\\n' > "$dir/bin/pip"
chmod +x "$dir/bin/python" "$dir/bin/pip"
"""


def _fake_ci(tmp_path, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`.ci/run` in a tree whose README's test command is `echo fast && python -m pytest -n 2`, with a
    Python whose venv logs each pytest run (and exits as `env` says): what it ran and what it printed."""
    (tmp_path / ".ci").mkdir(parents=True)
    shutil.copy(CI_RUN, tmp_path / ".ci" / "run")
    (tmp_path / "README.md").write_text(
        "## Setup: two commands\n\n```sh\n# install with test dependencies, then test\n"
        "echo fast && python -m pytest -n 2\n```\n"
    )
    fake = tmp_path / "fake-python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    log = tmp_path / "pytest.log"
    ran = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run"), "-x"],
        env={**os.environ, "PYTHON": str(fake), "LOG": str(log), **env},
        capture_output=True,
        text=True,
    )
    return ran, log.read_text().splitlines() if log.exists() else []


def test_ci_run_runs_the_readmes_command_then_the_slow_tests_alone_and_says_how_long_each_took(tmp_path):
    """Two parts in one fresh venv: the README's command (its pytest skips the slow tests), then that pytest
    with `--run-slow -m 'slow and not nightly'` (longest first), each with its own JUnit file and the extra arguments; pytest's exit 5 is not
    a failure; the last lines give each part's wall time and exit beside the calibration measured before."""
    ran, pytests = _fake_ci(tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert pytests == [
        "python -m pytest -n 2 | --junitxml=.frontier-harness/junit-tests.xml -x",
        "python -m pytest -n 2 --run-slow -m slow and not nightly --dist load --maxschedchunk 1"
        f" -n {WORKERS} | --junitxml=.frontier-harness/junit-slow.xml -x",
    ]
    last = ran.stdout.strip().splitlines()[-2:]
    assert re.fullmatch(
        r"\.ci/run: the README's test command: \d+ s, exit 0 \(calibration: fake\)", last[0]
    ), last
    assert re.fullmatch(r"\.ci/run: the slow tests: \d+ s, exit 0 \(calibration: fake\)", last[1]), last


def test_ci_run_runs_the_slow_tests_after_a_failing_first_part_and_fails_with_either(tmp_path):
    first, pytests = _fake_ci(tmp_path / "a", FAKE_EXIT="1", FAKE_SLOW_EXIT="0")
    assert first.returncode == 1 and len(pytests) == 2, first.stdout
    second, _ = _fake_ci(tmp_path / "b", FAKE_EXIT="0", FAKE_SLOW_EXIT="1")
    assert second.returncode == 1 and "the slow tests: " in second.stdout.splitlines()[-1], second.stdout
