"""A mutation run for people and for CI: a table by file, the survivors, JSON and JUnit.

The survivors are listed one per line as `file:line  operator  original -> mutated`:
the list a user works from (strengthen a suite, or explain the mutant as
equivalent). Unreached mutants are listed the same way: lines no history runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

import attrs
from rich.table import Table

from frontier_harness.properties.mutate.results import (
    EQUIVALENT,
    INFRASTRUCTURE,
    KILLED,
    STATUSES,
    SURVIVED,
    TIMEOUT,
    UNREACHED,
    MutantResult,
    MutationRun,
    score,
)


def files_table(run: MutationRun) -> Table:
    """Per file: how many mutants ended how, and the score; a total row last."""
    table = Table(title=f"frontier-harness mutate {run.target} ({run.profile})")
    table.add_column("file")
    for column in ("mutants", *STATUSES, "score"):
        table.add_column(column, justify="right")
    for path in run.paths:
        table.add_row(path, *_counts_row(run, path))
    table.add_row("[bold]total[/]", *_counts_row(run, None), end_section=True)
    return table


def _counts_row(run: MutationRun, path: str | None) -> list[str]:
    counts = run.counts(path)
    value = score(counts)
    return [str(sum(counts.values())), *(str(counts[s]) for s in STATUSES), _percent(value)]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def summary(run: MutationRun) -> str:
    """One line: the score, the median time to kill, the run's time and Spark sessions."""
    counts = run.counts()
    median = run.median_seconds_to_kill
    return (
        f"score {_percent(run.score)} ({counts[KILLED]} killed of "
        f"{counts[KILLED] + counts[SURVIVED] + counts[TIMEOUT]} scored; {counts[UNREACHED]} unreached, "
        f"{counts[EQUIVALENT]} equivalent, {counts[INFRASTRUCTURE]} infrastructure), median time to kill "
        f"{'-' if median is None else f'{median:.1f}s'}, {run.seconds:.0f}s, "
        f"{run.sessions_started} Spark session(s) started"
    )


def failed_baselines(run: MutationRun) -> list[str]:
    """`probe: failure` for every probe that failed unmutated: its mutants are judged by no check (they count
    as unreached), so the run says why before it lists them."""
    return [f"{b.probe.name}: {b.failure}" for b in run.baseline if b.failure]


def listing(results: Sequence[MutantResult], status: str) -> list[str]:
    """`file:line  operator  original -> mutated` for every mutant that ended with `status` (an equivalent
    one with why)."""
    return [
        r.mutant.describe() + (f"  ({r.message})" if status == EQUIVALENT else "")
        for r in results
        if r.status == status
    ]


def to_json(run: MutationRun, suites_by_module: dict) -> dict:
    """Everything about the run, JSON-able: per mutant its verdict and what decided it."""
    return {
        "target": run.target,
        "profile": run.profile,
        "seed": run.seed,
        "seconds": round(run.seconds, 3),
        "spark_sessions_started": run.sessions_started,
        "score": run.score,
        "median_seconds_to_kill": run.median_seconds_to_kill,
        "counts": {s: run.counts()[s] for s in STATUSES},
        "suites_by_module": suites_by_module,
        "baseline": [
            {
                "check": b.probe.name,
                "seconds": round(b.seconds, 3),
                "lines": len(b.reached.lines),
                "failure": b.failure,
            }
            for b in run.baseline
        ],
        "mutants": [_mutant_json(r) for r in run.results],
    }


def _mutant_json(r: MutantResult) -> dict:
    mutant = attrs.asdict(r.mutant)
    verdict = attrs.asdict(r, filter=lambda a, _: a.name != "mutant")
    return {**mutant, **verdict, "seconds": round(r.seconds, 3), "total_seconds": round(r.total_seconds, 3)}


def write_json(path: Path, run: MutationRun, suites_by_module: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(run, suites_by_module), indent=1) + "\n")


def write_junit(path: Path, run: MutationRun) -> None:
    """One testcase per mutant, grouped by file: survived fails, unreached is skipped, infrastructure errs."""
    root = ET.Element("testsuites", name="frontier-harness mutate")
    for file in run.paths:
        results = [r for r in run.results if r.mutant.path == file]
        node = ET.SubElement(root, "testsuite", name=file, tests=str(len(results)))
        for r in results:
            m = r.mutant
            name = f"{m.line}:{m.column} {m.operator} {m.original} -> {m.mutated}"
            case = ET.SubElement(node, "testcase", classname=file, name=name, time=f"{r.total_seconds:.3f}")
            if r.status in (SURVIVED, TIMEOUT):
                ET.SubElement(case, "failure", message=f"{r.status}: no check failed under this mutant")
            elif r.status == EQUIVALENT:
                ET.SubElement(case, "skipped", message=f"equivalent: {r.message}")
            elif r.status == UNREACHED:
                ET.SubElement(case, "skipped", message="unreached: no generated history runs this line")
            elif r.status == INFRASTRUCTURE:
                ET.SubElement(case, "error", message=f"infrastructure: {r.message}")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
