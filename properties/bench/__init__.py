"""`frontier-harness bench`: figures measured side by side in one run.

Each capability contributes a module with `figures(scale) -> list[Figure]`; a
figure is a measured rate or size and, where it has one, the in-run baseline
it is compared with, so the printed ratio needs no other run. `scale` is 1.0
for the issue's sizes and smaller for a quick look (`--scale 0.01`). A new
benchmark is a module here and one line in `NAMES`; `bench --markdown
docs/figures.md` then writes its section of the figures page
(`frontier_harness.properties.cli.bench`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType

import attrs


@attrs.frozen
class Figure:
    """A named measurement; `baseline` names the figure it is divided by, if any."""

    name: str
    value: float
    unit: str
    note: str = ""
    baseline: str | None = None
    goal: str = ""


def timed(fn: Callable[[], object]) -> float:
    """Wall-clock seconds for one call."""
    import time

    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# The benchmarks, in print order: each a module of this package (one line registers one).
NAMES = (
    "collections",
    "screening",
    "ttl",
    "ingestion",
    "expiration",
    "reclocking",
    "streaming",
    "checkpoint",
    "stateful",
    "processor",
    "killed",
    "upgrade",
    "spark_overhead",
    "spark_start",
    "check_ci",
)


def modules(names: Sequence[str] = NAMES) -> list[ModuleType]:
    """The benchmark modules called `names` (each a module of this package), in print order."""
    return [
        importlib.import_module(f"frontier_harness.properties.bench.{name}")
        for name in NAMES
        if name in names
    ]
