"""The `mutate` verb: how many of the target's mutants the suites kill, and which survive.

Exit 0 when every mutant was killed; 1 when one survived, timed out or was
unreached; 2 on usage or bad input; 3 when an infrastructure failure left
mutants unjudged (and nothing survived).
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frontier_harness.properties.cli.arguments import non_negative_int, positive_int
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.errors import HarnessError, UnknownSuite
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.suite import Suite
from frontier_harness.properties.mutate import by_tests, equivalents, output
from frontier_harness.properties.mutate.engine import Engine, Plan, plan_modules
from frontier_harness.properties.mutate.mutants import Mutant, enumerate_mutants
from frontier_harness.properties.mutate.probe import may_reach, probes_of
from frontier_harness.properties.mutate.results import (
    EQUIVALENT,
    INFRASTRUCTURE,
    SURVIVED,
    TIMEOUT,
    UNREACHED,
    MutationRun,
)

DEFAULT_TARGET = "frontier_harness.spark_impl"


def add_parser(verbs: Any) -> argparse.ArgumentParser:
    """Adds `mutate` to the CLI's subparsers."""
    p = verbs.add_parser("mutate", help="mutation testing: which planted mistakes the suites would miss")
    p.add_argument(
        "--target",
        action="append",
        help="package or module to mutate (repeatable; default frontier_harness.spark_impl, or --impl's package)",
    )
    p.add_argument(
        "--suite", action="append", help="suite to judge with (repeatable; name or module:ATTR; default all)"
    )
    p.add_argument("--impl", help="implementation under test: spark (default) or module:factory")
    p.add_argument(
        "--tests",
        metavar="PYTEST_ARGS",
        help="judge each mutant by this pytest command instead of the suites, one process per mutant "
        "(e.g. 'tests/test_promise.py -m \"not spark\"'; see docs/mutate.md)",
    )
    p.add_argument(
        "--equivalent",
        type=Path,
        metavar="TOML",
        help="survivors this file names, with why, are equivalent: out of the score (docs/mutate.md)",
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        help="--tests: processes at once (default: cores)",
    )
    p.add_argument("--since", metavar="GIT_REF", help="mutate only lines changed since this git ref")
    p.add_argument(
        "--at",
        action="append",
        type=file_line,
        metavar="FILE:LINE",
        help="mutate only this line, as listed (e.g. model/reclocking/remap.py:459; repeatable)",
    )
    p.add_argument(
        "--sample",
        type=non_negative_int,
        help="judge a random sample of this many mutants, stratified by file",
    )
    p.add_argument(
        "--seed", type=non_negative_int, help="seeds the checks and --sample (default: the profile's)"
    )
    p.add_argument(
        "--profile", choices=sorted(PROFILES), help="dev, ci or thorough (default: config, else dev)"
    )
    p.add_argument("--list", action="store_true", help="list the mutants and stop (no checks run)")
    p.add_argument("--json", type=Path, help="write every mutant's verdict as JSON")
    p.add_argument("--junit", type=Path, help="write JUnit XML (one testcase per mutant)")
    return p


def run(args: argparse.Namespace, out: Any) -> int:
    config = load_config()
    profile = config.profile(args.profile or config.get("profile")).seeded(args.seed)
    targets = args.target or [_default_target(args.impl)]
    target = " ".join(targets)
    modules, extra = _plan(targets, args.impl)
    mutants = select(modules, args.since, args.sample, profile.seed, args.at)
    listed = equivalents.load(args.equivalent) if args.equivalent is not None else None
    if args.list:
        for mutant in mutants:
            out.print(mutant.describe(), markup=False, highlight=False)
        out.print(f"{len(mutants)} mutants", markup=False)
        return ExitCode.HELD
    if args.tests is not None:
        return _run_tests(args, out, target, modules, mutants, listed)
    named = bool(args.suite)
    probes = [
        p
        for p in probes_of(load_suites(args.suite), args.impl, named)
        if any(may_reach(p, t) for t in targets)
    ]
    _quiet_query_context_logs()
    plan = Plan(target, tuple(modules), tuple(extra), tuple(probes), profile, profile.seed)
    from frontier_harness.properties.adapters import spark as spark_adapter

    engine = Engine(plan, cancel=spark_adapter.cancel_jobs)
    with out.status(f"mutate {target}: {len(mutants)} mutants") as status:
        engine.progress = _progress(out, status, f"mutate {target}: ")
        result = engine.run(mutants, spark_adapter.sessions_started, _saving(args.json, engine))
    return _report(args, out, result, modules, engine.suites_by_module(), listed)


def _plan(targets: list[str], impl: str | None) -> tuple[list, list]:
    """Every target's modules, each once, and the modules outside them an `--impl` factory needs."""
    modules: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for target in targets:
        mine, theirs = plan_modules(target, impl)
        modules.update((m.name, m) for m in mine)
        extra.update((m.name, m) for m in theirs)
    return list(modules.values()), [m for name, m in extra.items() if name not in modules]


def _run_tests(
    args: argparse.Namespace, out: Any, target: str, modules: list, mutants: list, listed: list | None
) -> int:
    """`--tests`: every mutant judged by the pytest command (`frontier_harness.properties.mutate.by_tests`)."""
    if args.suite:
        raise HarnessError("--tests judges with a pytest command, not with suites: drop --suite")
    command = by_tests.TestCommand(tuple(shlex.split(args.tests)))
    with out.status(f"mutate {target}: {len(mutants)} mutants, judged by pytest") as status:
        result = by_tests.run(target, command, modules, mutants, args.jobs, _progress(out, status, ""))
    return _report(args, out, result, modules, {}, listed)


def _report(
    args: argparse.Namespace, out: Any, result: MutationRun, modules: list, suites: dict, listed: list | None
) -> int:
    """The run with the survivors `listed` (`--equivalent`) names marked, printed and written; its exit code."""
    stale: list[str] = []
    if listed is not None:
        sources = {m.display: m.source.splitlines() for m in modules}
        result, stale = equivalents.apply(result, listed, sources)
        if (
            args.since or args.at or args.sample is not None
        ):  # only some mutants ran: an unmatched entry is fine
            stale = [line for line in stale if line.endswith("not equivalent")]
    _print(out, result)
    for line in stale:
        out.print(f"stale --equivalent entry: {line}", markup=False, soft_wrap=True)
    if args.json:
        output.write_json(args.json, result, suites)
    if args.junit:
        output.write_junit(args.junit, result)
    return exit_code(result)


def _progress(out: Any, status: Any, prefix: str, every: float = 30.0) -> Callable[[str], None]:
    """The progress line: a live status on a terminal; elsewhere (CI logs) a printed line every `every` s."""
    if out.is_terminal:
        return lambda text: status.update(prefix + text)
    last = [-every]

    def line(text: str) -> None:
        if time.perf_counter() - last[0] >= every:
            last[0] = time.perf_counter()
            out.print(prefix + text, markup=False, highlight=False, soft_wrap=True)

    return line


def _saving(path: Path | None, engine: Engine, every: float = 60.0) -> Callable[[MutationRun], None]:
    """Writes the run so far to `path` at most every `every` seconds (a long run loses little if stopped)."""
    last = [time.perf_counter()]

    def save(run: MutationRun) -> None:
        if path is not None and time.perf_counter() - last[0] >= every:
            last[0] = time.perf_counter()
            output.write_json(path, run, engine.suites_by_module())

    return save


def select(
    modules: list,
    since: str | None,
    sample: int | None,
    seed: int,
    at: list[tuple[str, int]] | None = None,
) -> list[Mutant]:
    """Every mutant of `modules`, only on the `at` lines (file as listed, line) and on lines
    changed since `since`, then `sample` of them at random."""
    mutants = [mutant for module in modules for mutant in enumerate_mutants(module)]
    if at:
        wanted = set(at)
        mutants = [m for m in mutants if (m.path, m.line) in wanted]
    if since is not None:
        from frontier_harness.properties.mutate.since import changed_lines

        changed = changed_lines(since, [m.path for m in modules])
        paths = {m.name: m.path.resolve() for m in modules}
        mutants = [m for m in mutants if m.line in changed.get(paths[m.module], ())]
    if sample is not None and sample < len(mutants):
        mutants = stratified_sample(mutants, sample, random.Random(seed))
    return mutants


def file_line(text: str) -> tuple[str, int]:
    """An argparse type: `FILE:LINE`, a file as `--list` shows it and a line number.

    >>> file_line("model/reclocking/remap.py:459")
    ('model/reclocking/remap.py', 459)
    """
    path, _, line = text.rpartition(":")
    if not path or not line.isdigit():
        raise argparse.ArgumentTypeError(
            f"expected FILE:LINE (e.g. model/reclocking/remap.py:459), got {text!r}"
        )
    return path, int(line)


def stratified_sample(mutants: list[Mutant], n: int, rng: random.Random) -> list[Mutant]:
    """`n` mutants drawn file by file, each file's share proportional to its mutants (largest
    remainders round), so a large file does not crowd the small ones out of a sample.

    >>> ms = [Mutant("a.py", i, 0, "compare", 0, "a", i, "", "", True, i, i) for i in range(30)]
    >>> ms += [Mutant("b.py", i, 0, "compare", 0, "b", i, "", "", True, i, i) for i in range(10)]
    >>> sorted({m.path: sum(x.path == m.path for x in stratified_sample(ms, 8, random.Random(0)))
    ...         for m in ms}.items())
    [('a.py', 6), ('b.py', 2)]
    """
    by_file: dict[str, list[Mutant]] = {}
    for mutant in mutants:
        by_file.setdefault(mutant.path, []).append(mutant)
    quotas = {path: n * len(group) / len(mutants) for path, group in by_file.items()}
    counts = {path: int(q) for path, q in quotas.items()}
    by_remainder = sorted(quotas, key=lambda path: (counts[path] - quotas[path], path))
    for path in by_remainder[: n - sum(counts.values())]:
        counts[path] += 1
    return sorted(m for path, group in sorted(by_file.items()) for m in rng.sample(group, counts[path]))


def load_suites(names: list[str] | None) -> list[Suite]:
    """Registered suites by name, or a user's `module:ATTR` suite; all registered ones by default."""
    from frontier_harness.properties.checks.registry import SUITES, get_suite

    if not names:
        return list(SUITES.values())
    return [_user_suite(n) if ":" in n else get_suite(n) for n in names]


def _user_suite(spec: str) -> Suite:
    module_name, _, attribute = spec.partition(":")
    try:
        suite = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise UnknownSuite(
            f"--suite {spec!r}: cannot load {attribute!r} from {module_name!r}: {exc}"
        ) from exc
    if not isinstance(suite, Suite):
        raise UnknownSuite(f"--suite {spec!r}: {type(suite).__name__} is not a Suite")
    return suite


def _default_target(impl: str | None) -> str:
    if impl and ":" in impl:
        return impl.partition(":")[0].split(".")[0]
    return DEFAULT_TARGET


def _quiet_query_context_logs() -> None:
    """PySpark logs every analysis error with its whole plan; under mutation they are expected."""
    import logging

    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        return
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _print(out: Any, run: MutationRun) -> None:
    out.print(output.files_table(run))
    for line in output.failed_baselines(run):
        out.print(f"failed unmutated, so it judges no mutant: {line}", markup=False, soft_wrap=True)
    titles = (
        (SURVIVED, "survivors"),
        (TIMEOUT, "timeouts"),
        (UNREACHED, "unreached"),
        (EQUIVALENT, "equivalent"),
    )
    for status, title in titles:
        lines = output.listing(run.results, status)
        if lines:
            out.print(f"{title} ({len(lines)}):", markup=False)
            for line in lines:
                out.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    out.print(output.summary(run), markup=False)


def exit_code(run: MutationRun) -> int:
    counts = run.counts()
    if counts[SURVIVED] or counts[TIMEOUT] or counts[UNREACHED]:
        return ExitCode.FAILED
    return ExitCode.INFRASTRUCTURE if counts[INFRASTRUCTURE] else ExitCode.HELD
