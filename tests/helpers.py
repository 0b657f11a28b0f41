"""Small helpers the suite tests share: quick profiles and replaying a written counterexample."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.profiles import PROFILES

# Tests choose their lanes: Hypothesis first, screening only where a test asks for it.
QUICK = attrs.evolve(
    PROFILES["ci"],
    max_examples=40,
    batched_examples=8,
    screening_histories=0,
    batched_screening_histories=0,
    screen_first=False,
    shrink_seconds=900,  # tests assert the shrunk size, not how fast it shrinks on a loaded machine
)


def write_and_replay(cx, tmp_path: Path, impl: str) -> int:
    """Writes the counterexample, reads it back, and replays it on the CLI; returns the exit code."""
    path = counterexample.write(cx, tmp_path)
    assert counterexample.read(path).history == cx.history
    return main(["replay", str(path), "--impl", impl])


@contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[None]:
    """`module.name` replaced by `value` for the duration (planted bugs that swap one rule)."""
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


def alive(pid: int) -> bool:
    """Running: neither gone nor a zombie (read from /proc, which a reaped process leaves at any moment; an
    orphan's zombie is init's to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(seconds: float, *pids: int, paths: tuple[Path, ...] = ()) -> bool:
    """Whether every process of `pids` has ended (`alive`) and every path of `paths` is gone, polled for up
    to `seconds`: what a process's death does to others is done within moments, not at once."""
    deadline = time.monotonic() + seconds
    while any(map(alive, pids)) or any(p.exists() for p in paths):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True
