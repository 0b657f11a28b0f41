"""The README and docs/ cannot go stale: what they name exists, the Layout is the tree, the walkthrough runs.

- every repository path that README.md and docs/*.md name (a path whose first
  part is a top-level entry of the repository, a backticked `x/y.py`, a
  relative link) exists, and every backticked `frontier_harness.…` name imports;
- the README's Layout tree lists the directories of `git ls-files`, no more and
  none fewer, down to the depth it lists;
- the README stays at most 2,000 words;
- the `>>>` examples in docs/ run (doctest);
- the walkthrough's shell block runs as written, in a copy of the repository,
  with each command's exit code the one its `# exit N` comment states;
- every `frontier-harness` command in the README's shell blocks is one the CLI
  accepts, and every one outside the walkthrough runs (`slow`: with small counts,
  its placeholders filled in) and exits as the README says.
"""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_WORDS = 2000

# A run of path segments: `model/ttl/`, `spark_impl/time/collection.py`, `tests/test_suite_*.py`,
# `properties/checks/<capability>/` (a `<placeholder>` or `*` is a wildcard).
PATH = re.compile(r"(?<![\w./$<>*-])((?:\.?[\w<>*-]+/)+[\w.<>*-]*)")
BACKTICKED = re.compile(r"`([^`\s]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
SUFFIXES = (".py", ".md", ".toml", ".sh", ".yml", ".yaml", ".cfg")
DOTTED = re.compile(r"frontier_harness(?:\.\w+)+")


def git_ls_files() -> list[str]:
    """The repository's tracked files (skips the test outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.split("\0") if f]


def tracked_directories(files: list[str]) -> set[str]:
    """Every directory that holds a tracked file, at any depth, as `a/b` (no trailing slash)."""
    dirs = set()
    for f in files:
        parts = f.split("/")[:-1]
        dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return dirs


def named_paths(text: str, top_level: set[str]) -> set[str]:
    """The repository paths a document names, wildcards and placeholders as globs."""
    found = {m for m in PATH.findall(text) if m.split("/")[0] in top_level}
    found |= {m for m in BACKTICKED.findall(text) if "/" in m and m.endswith(SUFFIXES)}
    return {re.sub(r"<[^>]*>", "*", p).rstrip(".") for p in found if "://" not in p and not p.startswith("/")}


def exists(path: str) -> bool:
    return any(ROOT.glob(path.rstrip("/"))) if "*" in path else (ROOT / path).exists()


def test_every_path_the_readme_and_docs_name_exists():
    top_level = {f.split("/")[0] for f in git_ls_files()} | {"docs"}
    missing = []
    for doc in DOCS:
        text = doc.read_text()
        missing += [f"{doc.name}: {p}" for p in sorted(named_paths(text, top_level)) if not exists(p)]
        links = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
        missing += [f"{doc.name}: link {t}" for t in links if not (doc.parent / t.split("#")[0]).exists()]
    assert not missing, "named but absent:\n" + "\n".join(missing)


def resolves(name: str) -> bool:
    """Whether `name` is a module, or an attribute path inside the longest importable module prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_every_frontier_harness_name_the_readme_and_docs_use_resolves():
    names = {n for doc in DOCS for t in BACKTICKED.findall(doc.read_text()) for n in DOTTED.findall(t)}
    assert names, "the pattern found no names: is it still right?"
    assert not [n for n in sorted(names) if not resolves(n)]


def layout_tree() -> list[str]:
    """The directories the README's Layout block lists, as `a/b`, in order."""
    section = README.read_text().split("\n## Layout", 1)[1]
    block = section.split("```\n", 2)[1]
    stack: list[str] = []
    listed = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        name = line.split()[0]
        assert indent % 2 == 0 and name.endswith("/"), f"Layout line is not `  name/  text`: {line!r}"
        depth = indent // 2
        assert depth <= len(stack), f"Layout line indented past its parent: {line!r}"
        stack[depth:] = [name.rstrip("/")]
        listed.append("/".join(stack))
    return listed


def test_the_layout_tree_is_the_tree_of_git_ls_files():
    listed = layout_tree()
    dirs = tracked_directories(git_ls_files()) | {"docs"}
    deepest = max(p.count("/") for p in listed)
    assert len(listed) == len(set(listed)), "a directory is listed twice"
    assert not sorted(set(listed) - dirs), "listed in the Layout but not in git ls-files"
    assert not sorted(d for d in dirs - set(listed) if d.count("/") <= deepest), (
        "in git ls-files but missing from the Layout"
    )


def test_the_readme_stays_short():
    assert len(README.read_text().split()) <= MAX_README_WORDS


@pytest.mark.parametrize("doc", [d for d in DOCS if ">>>" in d.read_text()], ids=lambda d: d.name)
def test_the_examples_in_the_docs_run(doc):
    result = doctest.testfile(str(doc), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed


# --- the walkthrough ---------------------------------------------------------------------------

EXIT = re.compile(r"#.*\bexit (\d)\b")


def walkthrough() -> list[tuple[str, int]]:
    """The walkthrough's commands, each with the exit code its comment states (0 when none).

    Skipped, as the README says: `pip install` (the test runs the checkout's code
    in place) and the final `verify` (every suite; minutes, and tested elsewhere).
    """
    section = README.read_text().split("### Walkthrough", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or line.startswith("pip install"):
            continue
        if line.startswith("frontier-harness verify"):
            continue
        code = EXIT.search(line)
        commands.append((line, int(code.group(1)) if code else 0))
    return commands


def copy_tracked(dest: Path) -> Path:
    """The tracked files as they are in the work tree (symlinks kept), copied under `dest`."""
    for name in git_ls_files():
        source, target = ROOT / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        elif source.is_file():
            shutil.copy2(source, target)
    return dest


def copy_of_repository(dest: Path) -> Path:
    """`copy_tracked`, committed in a fresh git repository."""
    copy_tracked(dest)
    git = ["git", "-c", "user.name=walkthrough", "-c", "user.email=walkthrough@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "copy"]):
        subprocess.run([*git, *args], cwd=dest, check=True)
    return dest


def runner_env(repo: Path, bin_dir: Path) -> dict[str, str]:
    """`frontier-harness` resolved to the copy's own code, not the installed checkout."""
    bin_dir.mkdir()
    script = bin_dir / "frontier-harness"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m frontier_harness.properties.cli "$@"\n')
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(repo)}


def test_the_walkthrough_parses_into_plant_check_replay_fix_replay():
    commands = [(line.split()[0], code) for line, code in walkthrough()]
    assert commands[:2] == [("sed", 0), ("if", 0)]
    assert [c for c in commands if c[0] in ("frontier-harness", "git")] == [
        ("frontier-harness", 1),
        ("frontier-harness", 1),
        ("git", 0),
        ("frontier-harness", 0),
    ]


@pytest.mark.spark
def test_the_walkthrough_runs_as_written(tmp_path):
    from frontier_harness.spark_impl import session

    if not session.java_available():
        pytest.skip("Java is not installed")
    repo = copy_of_repository(tmp_path / "repo")
    env = runner_env(repo, tmp_path / "bin")
    which = subprocess.run(
        [sys.executable, "-c", "import frontier_harness; print(frontier_harness.__file__)"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert which.stdout.startswith(str(repo)), "the copy's code must be what runs"
    for line, expected in walkthrough():
        ran = subprocess.run(
            ["bash", "-c", line], cwd=repo, env=env, capture_output=True, text=True, timeout=1800
        )
        assert ran.returncode == expected, (
            f"{line}\nexit {ran.returncode}\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
        )
        if line.startswith("sed "):
            diff = subprocess.run(["git", "diff", "--quiet", "spark_impl/time/collection.py"], cwd=repo)
            assert diff.returncode == 1, "the walkthrough's bug was not planted"


# --- every command of the README -----------------------------------------------------------------

CLI = "frontier-harness "
PLACEHOLDERS = ("FILE", "CHECKPOINT_DIR", "SINK_DIR")
# What "small counts" means per verb: the same command, a fraction of the histories, trials and work.
# `verify` runs its suites through `check`'s code (`run_suites`), which the README's `check --profile ci`
# runs over every suite; its own parts (the proofs, the corpus, the one table, the exit) need one suite.
SMALL = {
    "check": ["--screening", "320", "--max-examples", "3", "--batched-examples", "1"],
    "verify": [
        "--screening",
        "320",
        "--max-examples",
        "3",
        "--batched-examples",
        "1",
        "--suite",
        "collections",
    ],
    "bench": ["--scale", "0.001", "--only", "collections"],
}


def readme_commands(outside_the_walkthrough: bool = False) -> list[str]:
    """The `frontier-harness` lines of the README's shell blocks, their comments cut."""
    text = README.read_text()
    if outside_the_walkthrough:
        walk = text.split("### Walkthrough", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
        text = text.replace(walk, "")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    lines = [line.split(" #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line.startswith(CLI)]


def test_every_readme_command_is_one_the_cli_accepts():
    from frontier_harness.properties.cli.main import build_parser

    commands = readme_commands()
    assert len(commands) >= 12, "the README's shell blocks were not found: is the pattern still right?"
    for command in commands:
        build_parser().parse_args(shlex.split(command)[1:])  # a bad verb or flag raises HarnessError


def filled_in(command: str, where: dict[str, str]) -> list[str]:
    """The command's words with its placeholders replaced and the verb's small counts added.

    >>> filled_in("frontier-harness bench --json b.json", {})
    ['frontier-harness', 'bench', '--json', 'b.json', '--scale', '0.001', '--only', 'collections']
    """
    words = shlex.split(re.sub("|".join(PLACEHOLDERS), lambda m: where[m[0]], command))
    return [*words, *SMALL.get(words[1], [])]


@pytest.mark.slow  # every verb once, in a copy of the repository: minutes
@pytest.mark.spark
@pytest.mark.parametrize(
    "command",
    readme_commands(outside_the_walkthrough=True),
    ids=lambda command: command.removeprefix(CLI),
)
def test_every_readme_command_runs_with_small_counts(command, tmp_path):
    """Each command outside the walkthrough (one test each: the workers share them out), in a copy of the
    repository whose `origin/main` is its HEAD (so `mutate --since origin/main` has nothing to mutate).
    `check` and `verify` run at small counts: they never find a counterexample, and name the hard cases
    such counts miss "not shown"."""
    from frontier_harness.properties.bench.streaming import write_log
    from frontier_harness.properties.engine import counterexample
    from frontier_harness.properties.engine.counterexample import Counterexample
    from frontier_harness.properties.engine.history import Action, History
    from frontier_harness.spark_impl import session

    if not session.java_available():
        pytest.skip("Java is not installed")
    repo = copy_of_repository(tmp_path / "repo")
    subprocess.run(["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=repo, check=True)
    env = runner_env(repo, tmp_path / "bin")
    files = repo / ".frontier-harness" / "counterexamples"
    holds = History("total", (Action("update", {"data": "a", "time": 0, "diff": 1}),))
    written = counterexample.write(
        Counterexample("collections", "observations_match_model", holds, "spark"), files
    )
    written.rename(files / "FILE.itf.json")
    checkpoint = write_log(tmp_path / "checkpoint", 12)
    where = {"FILE": "FILE", "CHECKPOINT_DIR": str(checkpoint), "SINK_DIR": str(checkpoint / "sink")}
    argv = filled_in(command, where)
    ran = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=3600)
    shown = f"{shlex.join(argv)}\nexit {ran.returncode}\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
    assert sorted(p.name for p in files.iterdir()) == ["FILE.itf.json"], shown
    assert ran.returncode == 0 or (argv[1] in ("check", "verify") and ran.returncode == 1), shown
