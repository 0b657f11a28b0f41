"""Mutants judged by a test command: each mutant served in a fresh pytest process, killed when a test fails.

The suites' probes judge a mutant by running checks on Spark; an oracle fed written observations (offset
logs, store listings, a job's rows, recorded trials) is judged in a second by the tests that feed them.
`mutate --tests ARGS` runs `python -m pytest -x ARGS`:

1. once unmutated, traced (`pytest_plugin`): it must pass, and it says which of the target's lines ran;
2. once per mutant whose line ran, in a new process where every import of the mutated module gets the
   mutant (`pytest_plugin.MutantFinder`), `jobs` processes at a time.

A mutant is *killed* when pytest exits non-zero with the mutant loaded (but for a usage error, 4, or no
tests run, 5), *survived* when it passes with
the mutant loaded, *timeout* past `TIMEOUT_FACTOR` times the baseline (at least `TIMEOUT_FLOOR` s),
*unreached* when the baseline never ran its line, and *infrastructure* when the process never loaded the
mutant (its module was imported before the plugin, or nothing imported it): never a kill, never a pass.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.mutate.mutants import Mutant
from frontier_harness.properties.mutate.pytest_plugin import MUTANT_ENV, OUT_ENV, TRACE_ENV
from frontier_harness.properties.mutate.reach import Reached
from frontier_harness.properties.mutate.results import (
    INFRASTRUCTURE,
    KILLED,
    SURVIVED,
    TIMEOUT,
    UNREACHED,
    MutantResult,
    MutationRun,
)
from frontier_harness.properties.mutate.sources import SourceModule

TIMEOUT_FLOOR, TIMEOUT_FACTOR = 60.0, 10.0
PLUGIN = "frontier_harness.properties.mutate.pytest_plugin"
# pytest's exit codes that say nothing about the mutant (a test failing, or collection raising, is 1 or 2).
NOT_A_VERDICT = {4: "pytest: usage error", 5: "pytest: no tests ran"}


class BaselineFailed(HarnessError):
    """The test command fails (or collects nothing) unmutated: it cannot judge a mutant."""


@attrs.frozen
class Outcome:
    """One pytest process: its exit code, wall time, and what its processes reported."""

    returncode: int | None  # None: killed at the time limit
    seconds: float
    loaded: bool
    error: str
    lines: frozenset[tuple[str, int]]
    output: str


@attrs.frozen
class TestCommand:
    """`python -m pytest -x ARGS` with the plugin, run from `cwd`."""

    args: tuple[str, ...]
    cwd: Path = Path(".")

    def run(self, env: dict[str, str], limit: float | None = None) -> Outcome:
        """One process (and its own children, e.g. xdist workers) in a session of its own, killed at `limit`."""
        argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", PLUGIN, *self.args]
        with tempfile.TemporaryDirectory(prefix="fh-mutate-") as out:
            started = time.perf_counter()
            child = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env={**os.environ, **env, OUT_ENV: out},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            try:
                output, _ = child.communicate(timeout=limit)
                code: int | None = child.returncode
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                output, _ = child.communicate()
                code = None
            return _outcome(code, time.perf_counter() - started, Path(out), output)


def _outcome(code: int | None, seconds: float, out: Path, output: str) -> Outcome:
    reports = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    return Outcome(
        code,
        seconds,
        any(r["loaded"] for r in reports),
        "; ".join(sorted({r["error"] for r in reports if r["error"]})),
        frozenset((f, line) for r in reports for f, line in r["lines"]),
        output,
    )


def baseline(command: TestCommand, modules: Sequence[SourceModule]) -> Outcome:
    """The command unmutated, traced over `modules`' files; `BaselineFailed` unless it passes."""
    files = sorted(str(m.path) for m in modules)
    outcome = command.run({TRACE_ENV: json.dumps(files)})
    if outcome.returncode != 0:
        tail = "\n".join(outcome.output.splitlines()[-15:])
        raise BaselineFailed(
            f"--tests {' '.join(command.args)!r} exits {outcome.returncode} unmutated, so it judges no mutant:\n{tail}"
        )
    return outcome


def judge(command: TestCommand, module: SourceModule, mutant: Mutant, limit: float) -> MutantResult:
    """One mutant's verdict from one pytest process that served it."""
    spec = {"module": module.name, "path": str(module.path), "is_package": module.is_package}
    spec["mutant"] = attrs.asdict(mutant)
    outcome = command.run({MUTANT_ENV: json.dumps(spec)}, limit)
    if outcome.returncode is None:  # killed before it could report: the mutant counts as not killed
        return MutantResult(mutant, TIMEOUT, outcome.seconds, "tests", total_seconds=outcome.seconds)
    if outcome.error or not outcome.loaded or outcome.returncode in NOT_A_VERDICT:
        why = outcome.error or NOT_A_VERDICT.get(outcome.returncode, f"no test imported {module.name}")
        return MutantResult(mutant, INFRASTRUCTURE, outcome.seconds, "tests", message=why)
    status = SURVIVED if outcome.returncode == 0 else KILLED
    failed = _first_failure(outcome.output) if status == KILLED else ""
    return MutantResult(mutant, status, outcome.seconds, failed, "tests", total_seconds=outcome.seconds)


def _first_failure(output: str) -> str:
    """The first `FAILED test::name` (or `ERROR ...`) line pytest printed, else its exit summary."""
    lines = output.splitlines()
    named = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return (named or lines[-1:] or [""])[0][:200]


def run(
    target: str,
    command: TestCommand,
    modules: Sequence[SourceModule],
    mutants: Sequence[Mutant],
    jobs: int,
    progress: Callable[[str], None] = lambda text: None,
) -> MutationRun:
    """The baseline, then every reached mutant judged, `jobs` at a time; results in the mutants' order."""
    started = time.perf_counter()
    base = baseline(command, modules) if mutants else None
    by_name = {m.name: m for m in modules}
    limit = max(TIMEOUT_FLOOR, TIMEOUT_FACTOR * (base.seconds if base else 0.0))
    reached = Reached.of(base.lines if base else ())
    done = [0]

    def one(mutant: Mutant) -> MutantResult:
        module = by_name[mutant.module]
        if not reached.reaches(mutant, str(module.path)):
            result = MutantResult(mutant, UNREACHED)
        else:
            result = judge(command, module, mutant, limit)
        done[0] += 1
        progress(f"{done[0]}/{len(mutants)} — {mutant.path}:{mutant.line} {mutant.operator}: {result.status}")
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = tuple(pool.map(one, mutants))
    return MutationRun(target, "tests", 0, results, time.perf_counter() - started, 0)
