"""`.ci/run` is what a user sees: the README's test command, verbatim, in a fresh virtualenv; without
Java 17 it fails in one line (never a green run that skipped Spark)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CI_RUN = ROOT / ".ci" / "run"


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
    assert 'bash -c "$command"' in script and '-m venv "$venv"' in script


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
