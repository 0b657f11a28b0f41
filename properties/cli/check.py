"""`frontier-harness check`, and `frontier_harness.check`, the same run from Python.

The verb runs the suites' pairings (`frontier_harness.properties.cli.run`: in two processes, with the live
display), prints the results table and exits 0 when everything held, 1 on a failure or a required hard
case never reached, 2 when a property did not run. `check()` runs them in this process and returns the
results; it never exits.

>>> check("collections", impl="model")
Traceback (most recent call last):
...
frontier_harness.properties.engine.errors.HarnessError: nothing to judge: every property of collections compares with model's own answer
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from frontier_harness.properties.cli import run as runs
from frontier_harness.properties.cli.arguments import domain_name, run_options
from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.junit import write_junit
from frontier_harness.properties.engine.results import SuiteResult


def add_parser(verbs: Any) -> None:
    verb = verbs.add_parser("check", help="run property suites")
    verb.add_argument("--suite", action="append", help="suite to run (repeatable; default all)")
    verb.add_argument(
        "--domain",
        action="append",
        type=domain_name,
        help="time domain to run over (repeatable; default each suite's)",
    )
    run_options(verb, default_profile=None)


def run(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.checks.registry import SUITES, get_suite

    suites = [get_suite(name) for name in (args.suite or SUITES)]
    results, written = runs.run_suites(args, out, load_config(), suites, args.domain)
    out.print(report.results_table(results))
    if args.junit:
        write_junit(args.junit, results, written)
    return runs.suites_exit_code(out, results)


def check(
    suites: str | Sequence[str] | None = None,
    *,
    impl: str | None = None,
    job: str | None = None,
    profile: str = "ci",
    seed: int | None = None,
    out: Path | str | None = None,
    domains: Sequence[str] | None = None,
    fail_fast: bool = False,
    upgrade_to: str | None = None,
) -> list[SuiteResult]:
    """Runs `suites` (a name, names, or every suite) and returns one `SuiteResult` per pairing that judged.

    `impl` is `model`, `spark` or `module:factory` (default: each suite's pairings);
    `job` a `module:factory` of a streaming job for the `streaming` or `stateful` suite, and of the job
    running now for the `upgrade` suite, whose new job is `upgrade_to`;
    `profile` a profile name (with `[tool.frontier-harness]`'s overrides); `out`
    where counterexample files go (default `[tool.frontier-harness] out`).
    A result `passed` when every property held and every hard case was reached.
    """
    config = load_config()
    files = report.CounterexampleFiles(Path(out or config.get("out")), None)
    profile_made = config.profile(profile).seeded(seed)
    return runs.run(suites, impl, job, profile_made, files, domains, fail_fast, upgrade_to)
