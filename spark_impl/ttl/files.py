"""The store's durable files: JSON replaced atomically, and append-only lines.

With `sync` (the default) every change is fsynced (and a rename's directory too)
before it counts as done; the batched observer turns it off, since its crashes
are simulated in the same process, whose OS cache survives them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any, sync: bool) -> None:
    """Writes a temporary file, (fsyncs it,) renames it over `path` (and fsyncs the directory)."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        json.dump(data, f)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if sync:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def read_json(path: Path, default: Any) -> Any:
    """The JSON at `path`, or `default` if there is none."""
    return json.loads(path.read_text()) if path.exists() else default


def append_line(path: Path, line: str, sync: bool) -> None:
    """Appends one line (and fsyncs it)."""
    with open(path, "a") as f:
        f.write(line + "\n")
        if sync:
            f.flush()
            os.fsync(f.fileno())
