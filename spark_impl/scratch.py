"""The process's scratch directories: what the harness makes for a user's job to build in (its contract check,
the oracles' batch runs) and for its warm processes' launchers, each fresh, all under one root that is
removed when the process that made it exits (a multiprocessing child, which leaves without `atexit`, too).

Invariant: nothing `directory` makes outlives its process's normal exit; a forked child, which inherits the
root, neither adds to it nor removes it. Before, each `check` left a dozen such directories in /tmp.

>>> made = directory("job-")
>>> made.is_dir() and made.name.startswith("job-") and made.parent == _roots[os.getpid()]
True
"""

from __future__ import annotations

import atexit
import multiprocessing.util
import os
import shutil
import tempfile
from pathlib import Path

_roots: dict[int, Path] = {}  # pid -> the root that process made


def directory(prefix: str) -> Path:
    """A new, empty directory named `prefix...` under this process's root (made on first use)."""
    pid = os.getpid()
    if pid not in _roots:
        _roots[pid] = Path(tempfile.mkdtemp(prefix="frontier-harness-"))
        atexit.register(_remove, pid)
        multiprocessing.util.Finalize(None, _remove, args=(pid,), exitpriority=10)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_roots[pid]))


def _remove(pid: int) -> None:
    """Removes the root `pid` made, in that process only (a forked child's exit leaves its parent's)."""
    if pid == os.getpid() and pid in _roots:
        shutil.rmtree(_roots.pop(pid), ignore_errors=True)
