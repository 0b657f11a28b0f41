"""The lines changed since a git ref: what `mutate --since REF` mutates.

Lines added or changed in the working tree against `REF` (`git diff -U0`),
and every line of files git does not track yet. A mutant is selected when its
line is one of them.

>>> sorted(added_lines(["+++ b/x.py", "@@ -3 +3,2 @@", "+++ b/y.py", "@@ -9,2 +8,0 @@"])["x.py"])
[3, 4]
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from frontier_harness.properties.engine.errors import HarnessError

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class BadRef(HarnessError):
    """A `--since` ref git cannot diff against (or no git repository)."""


def changed_lines(ref: str, files: Sequence[Path]) -> dict[Path, set[int]]:
    """Per file (absolute), the line numbers added or changed since `ref`."""
    if not files:
        return {}
    files = [f.resolve() for f in files]  # git diffs real paths, never through frontier_harness/'s links
    root = Path(_git(["rev-parse", "--show-toplevel"], files[0].parent).strip())
    diff = _git(["diff", "-U0", "--no-color", "--no-ext-diff", ref, "--", *map(str, files)], root)
    out = {root / name: lines for name, lines in added_lines(diff.splitlines()).items()}
    untracked = _git(["ls-files", "--others", "--exclude-standard", "--", *map(str, files)], root)
    for name in untracked.splitlines():
        path = root / name
        out[path] = set(range(1, len(path.read_text(encoding="utf-8").splitlines()) + 1))
    return {path.resolve(): lines for path, lines in out.items()}


def added_lines(diff: Iterable[str]) -> dict[str, set[int]]:
    """Parses `git diff -U0` output: per new-side file name, the new-side line numbers of each hunk."""
    out: dict[str, set[int]] = {}
    current = None
    for line in diff:
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
            if current is not None:
                out.setdefault(current, set())
        elif (match := HUNK.match(line)) and current is not None:
            start, count = int(match.group(1)), int(match.group(2) or 1)
            out[current].update(range(start, start + count))
    return out


def _git(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise BadRef("--since needs git on PATH") from exc
    if done.returncode != 0:
        raise BadRef(f"--since: git {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done.stdout
