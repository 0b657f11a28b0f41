"""`frontier-harness`: check, verify, replay, prove, validate-checkpoint, mutate, list, bench.

Exit codes: 0 all held (over a count of histories that is never zero); 1 a property
failed (or a replayed counterexample still fails); 2 usage, bad input, a broken
contract, or a property that checked nothing ("not run"); 3 infrastructure (no Java,
Spark died, a planned lane that never came back); 4 an internal error of the harness,
with its traceback, to report.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import attrs
from rich.console import Console
from rich.markup import escape

from frontier_harness.properties.cli import run
from frontier_harness.properties.cli.arguments import (
    domain_name,
    non_negative_int,
    positive_float,
    positive_int,
)
from frontier_harness.properties.cli.machine import took
from frontier_harness.properties.cli.progress import lane_display
from frontier_harness.properties.engine import counterexample, report
from frontier_harness.properties.engine.config import Config, load_config
from frontier_harness.properties.engine.errors import HarnessError, InternalError
from frontier_harness.properties.engine.exit_codes import ExitCode, exit_code_of
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.junit import write_junit
from frontier_harness.properties.engine.lanes import (
    MODEL,
    Lane,
    LaneResult,
    reference_of,
    runs_against,
)
from frontier_harness.properties.engine.profiles import PROFILES, Profile
from frontier_harness.properties.engine.runner import SuiteResult
from frontier_harness.properties.engine.suite import Suite
from frontier_harness.properties.engine.verdict import Verdict


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line and exit 2, never a traceback
        raise HarnessError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="frontier-harness", description=__doc__.splitlines()[0])
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--remote", help="Spark Connect URL (default: $SPARK_REMOTE)")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also show Spark's own log (always in .frontier-harness/spark.log)",
    )
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=_Parser)

    check = verbs.add_parser("check", help="run property suites")
    check.add_argument("--suite", action="append", help="suite to run (repeatable; default all)")
    check.add_argument(
        "--domain",
        action="append",
        type=domain_name,
        help="time domain to run over (repeatable; default each suite's)",
    )
    _run_options(check, default_profile=None)

    verify = verbs.add_parser(
        "verify", help="pre-merge gate: every suite (ci), every proof, the regression corpus"
    )
    _run_options(verify, default_profile="ci")
    verify.add_argument(
        "--corpus", type=Path, help="regression corpus of counterexample files (default: counterexamples/)"
    )
    verify.add_argument(
        "--timeout", type=positive_float, default=10.0, help="solver timeout per case, in seconds"
    )

    from frontier_harness.properties.cli import prove

    prove.add_parser(verbs)

    from frontier_harness.properties.cli.mutate import add_parser as add_mutate

    add_mutate(verbs)

    replay = verbs.add_parser("replay", help="re-run a counterexample file on model and implementation")
    replay.add_argument("file", type=Path)
    replay.add_argument("--impl", help="override the implementation recorded in the file")
    _job_option(replay)
    replay.add_argument(
        "--plot", type=Path, metavar="FILE.png", help="also draw the counterexample (needs the plot extra)"
    )
    replay.add_argument(
        "--trace", action="store_true", help="print the traceback when the implementation raises"
    )

    from frontier_harness.properties.cli.validate_checkpoint import add_parser as add_validate

    add_validate(verbs)

    verbs.add_parser("list", help="suites and their properties")

    from frontier_harness.properties.cli.bench import add_parser as add_bench

    add_bench(verbs)
    return parser


def _run_options(verb: argparse.ArgumentParser, default_profile: str | None) -> None:
    verb.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=default_profile,
        help="dev, ci or thorough (default: [tool.frontier-harness] profile, else dev)",
    )
    verb.add_argument("--seed", type=non_negative_int, default=0)
    verb.add_argument(
        "--max-examples",
        type=positive_int,
        help="Hypothesis examples for suites checked against the model (at least 1)",
    )
    verb.add_argument(
        "--batched-examples",
        type=positive_int,
        help="Hypothesis examples for suites checked against an implementation (at least 1)",
    )
    verb.add_argument(
        "--screening",
        type=positive_int,
        help="histories the screening lane checks per property and domain (at least 1)",
    )
    verb.add_argument("--impl", help="implementation under test: spark (default), model, or module:factory")
    _job_option(verb)
    verb.add_argument(
        "--out", type=Path, help="where counterexample files go (default .frontier-harness/counterexamples)"
    )
    verb.add_argument("--junit", type=Path, help="write JUnit XML here")
    verb.add_argument(
        "--fail-fast", action="store_true", help="stop at the first failure (default: run everything)"
    )


def _job_option(verb: argparse.ArgumentParser) -> None:
    verb.add_argument(
        "--job",
        metavar="MODULE:FACTORY",
        help="your streaming job (transform, write, read) in the streaming or stateful suite's trials (frontier_harness.properties.checks.streaming.job)",
    )


def _with_job(
    args: argparse.Namespace,
    suite: Suite,
    impl: Implementation,
    cx: counterexample.Counterexample | None = None,
) -> Implementation:
    """The streaming and stateful suites under `--job` (or the job a replayed file recorded) run the user's
    job on Spark; other suites are unchanged."""
    job = getattr(args, "job", None) or (cx.job if cx is not None else None)
    return run.with_job(suite, impl, job, args.impl)


def _profile(args: argparse.Namespace, config: Config) -> Profile:
    profile = config.profile(args.profile or config.get("profile"))
    overrides = {
        "max_examples": args.max_examples,
        "batched_examples": args.batched_examples,
        "screening_histories": args.screening,
        "batched_screening_histories": args.screening,
    }
    return attrs.evolve(profile, seed=args.seed, **{k: v for k, v in overrides.items() if v is not None})


def main(argv: Sequence[str] | None = None) -> int:
    out = report.console()
    try:
        args = build_parser().parse_args(argv)
        _configure_spark(args)
        verbs = {
            "check": _check,
            "verify": _verify,
            "replay": _replay,
            "prove": _prove,
            "validate-checkpoint": _validate_checkpoint,
            "list": _list,
            "bench": _bench,
            "mutate": _mutate,
        }
        started = time.perf_counter()
        code = verbs[args.verb](args, out)
        if args.verb in ("check", "verify"):  # the wall time, with what it was measured on
            out.print(took(args.verb, time.perf_counter() - started), markup=False)
        return code
    except Exception as exc:
        return report_error(out, exc)


def report_error(out: Console, exc: Exception) -> ExitCode:
    """Whose fault `exc` is (`exit_code_of`), said in one line for bad input (2) and infrastructure (3);
    anything else is the harness's own bug (4), printed with its traceback to report. Never 1: only a
    counterexample fails a run."""
    code = exit_code_of(exc)
    if code is ExitCode.USAGE:
        out.print(f"error: {exc}", markup=False, soft_wrap=True)
    elif code is ExitCode.INFRASTRUCTURE:
        out.print(f"[bold]infrastructure:[/] {escape(str(exc))}", markup=True, soft_wrap=True)
    else:
        if isinstance(exc, InternalError):  # raised in the background process: its traceback, as text
            trace, what = exc.traceback, str(exc)
        else:
            trace, what = "".join(traceback.format_exception(exc)), f"{type(exc).__name__}: {exc}"
        out.print(trace.rstrip(), markup=False, highlight=False, soft_wrap=True)
        out.print(f"internal error: {what}: please report it, with the traceback above", markup=False)
    return code


def _configure_spark(args: argparse.Namespace) -> None:
    if args.master or args.remote or args.verbose:
        from frontier_harness.properties.adapters.spark import configure

        configure(master=args.master, remote=args.remote, verbose=args.verbose)


def _check(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.checks.registry import SUITES, get_suite

    config = load_config()
    suites = [get_suite(name) for name in (args.suite or SUITES)]
    results, written = _run_suites(args, out, config, suites, args.domain)
    out.print(report.results_table(results))
    if args.junit:
        write_junit(args.junit, results, written)
    return suites_exit_code(out, results)


def suites_exit_code(out: Console, results: Sequence[LaneResult]) -> ExitCode:
    """1 when a property failed or a required hard case was never reached; else 2, with a line naming
    each, when a property did not run (a verdict that rests on no history is never "held"); else 0."""
    if any(r.verdict is Verdict.FAILED for lane in results for r in lane.result.results) or any(
        lane.result.missing_events for lane in results
    ):
        return ExitCode.FAILED
    not_run = [(lane, r) for lane in results for r in lane.result.results if r.verdict is Verdict.NOT_RUN]
    for lane, r in not_run:
        out.print(
            f"not run: {r.suite}.{r.property}[{r.domain}] against {lane.impl}: {r.reason}", markup=False
        )
    return ExitCode.USAGE if not_run else ExitCode.HELD


def _against(args: argparse.Namespace, out: Console, suites: list[Suite]) -> list[Lane]:
    """Each suite's lanes (`run.planned`); a lane that cannot run is named, not run."""
    return run.planned(
        suites,
        args.impl,
        getattr(args, "job", None),
        bool(getattr(args, "suite", None)),
        lambda reason: out.print(f"not run: {reason}", markup=False),
        lambda message: out.print(message, markup=False, soft_wrap=True),
    )


def _run_suites(
    args: argparse.Namespace, out: Console, config: Config, suites: list[Suite], domains: list[str] | None
) -> tuple[list[LaneResult], dict]:
    """Runs every lane of `suites`, prints and writes each counterexample (at once, then as it shrinks);
    returns the results, in the lanes' order, and the files, keyed by (suite, implementation, property,
    domain). The model's lanes and the serial-job suites' run in a second process meanwhile
    (`frontier_harness.properties.cli.background`), unless `--fail-fast` or `--job`."""
    profile = _profile(args, config)
    files = report.CounterexampleFiles(args.out or Path(config.get("out")), out)
    planned = _against(args, out, suites)
    there = _background_lanes(args, planned)
    background = _start_background(args, out, profile, domains, files, [planned[i] for i in there])
    results: dict[int, LaneResult] = {}
    written: dict = {}
    try:
        for i, lane in enumerate(planned):
            if i in there:
                continue
            if args.fail_fast and not all(r.passed for r in results.values()):
                results[i] = _not_run(lane, profile, domains, "--fail-fast: an earlier lane failed")
                continue
            results[i] = _run_lane(lane, out, profile, args.seed, domains, files, args.fail_fast)
            _report_failures(out, files, results[i], written)
        if background is not None:
            for i, result in zip(there, background.results(), strict=True):  # one for each, or it raised
                results[i] = result
                _report_failures(out, files, result, written)
    finally:
        if background is not None:
            background.stop()
    return [results[i] for i in range(len(planned))], written


def _not_run(lane: Lane, profile: Profile, domains: list[str] | None, reason: str) -> LaneResult:
    """A planned lane the run did not reach: each of its properties and domains "not run", named."""
    from frontier_harness.properties.engine.runner import not_run

    return LaneResult(lane.impl_name, not_run(lane.suite, domains, profile, reason), lane.reference_only)


def _background_lanes(args: argparse.Namespace, planned: list[Lane]) -> list[int]:
    """Which of `planned` run in the second process: none when the run is one kind of lane (nothing to
    overlap), under `--fail-fast` (the first failure ends the run) or under `--job` (a wrapped job)."""
    from frontier_harness.properties.cli.background import in_background

    if args.fail_fast or getattr(args, "job", None):
        return []
    there = [i for i, lane in enumerate(planned) if in_background(lane)]
    here = [lane for i, lane in enumerate(planned) if i not in there and lane.judges]
    return there if there and here else []


def _start_background(
    args: argparse.Namespace,
    out: Console,
    profile: Profile,
    domains: list[str] | None,
    files: report.CounterexampleFiles,
    lanes_there: list[Lane],
):
    from frontier_harness.properties.cli.background import Background, Job, LaneSpec
    from frontier_harness.properties.cli.progress import finished_line

    if not lanes_there:
        return None
    spark = {"master": args.master, "remote": args.remote, "verbose": args.verbose}
    job = Job(
        tuple(LaneSpec(lane.suite.name, lane.impl_name) for lane in lanes_there),
        profile,
        args.seed,
        tuple(domains) if domains else None,
        spark if any(spark.values()) else {},
    )
    return Background(
        job,
        lambda name, r: finished_line(out, name)(r),
        files.announce,
        lambda lane, seconds: _lane_line(out, lane, seconds),
    )


def _report_failures(
    out: Console, files: report.CounterexampleFiles, lane: LaneResult, written: dict
) -> None:
    """Each failure of `lane`: its final file written, its table printed, the replay command shown."""
    for r in lane.result.results:
        if r.failure is not None:
            path = files.final(r.failure)
            written[(r.suite, lane.impl, r.property, r.domain)] = path
            out.print(report.counterexample_table(r.failure))
            if r.failure.stopped:  # the wall clock, not the budget, ended its shrinking: said, never silent
                out.print(f"{r.suite}.{r.property}[{r.domain}]: {r.failure.stopped}", markup=False)
            out.print(report.replay_hint(r.failure, path), markup=False, soft_wrap=True)


def _run_lane(
    lane: Lane,
    out: Console,
    profile: Profile,
    seed: int,
    domains: list[str] | None,
    files: report.CounterexampleFiles | None = None,
    fail_fast: bool = False,
) -> LaneResult:
    """One lane; a lane that judges nothing (the model as its own reference) does not run."""
    from frontier_harness.properties.engine.runner import run_suite

    if not lane.judges:
        return LaneResult(lane.impl_name, SuiteResult(lane.suite.name, (), ()), lane.reference_only)
    started = time.perf_counter()
    found = files.announce if files is not None else None
    with lane_display(out, lane.suite.name, lane.impl_name) as hooks:
        result = run_suite(
            lane.suite,
            lane.impl,
            lane.impl_name,
            profile,
            seed,
            domains,
            hooks.progress,
            found,
            fail_fast,
            hooks.finished,
        )
    done = LaneResult(lane.impl_name, result, lane.reference_only)
    _lane_line(out, done, time.perf_counter() - started)
    return done


def _lane_line(out: Console, lane: LaneResult, seconds: float) -> None:
    failed = sum(r.verdict is Verdict.FAILED for r in lane.result.results)
    histories = sum(r.examples for r in lane.result.results)
    out.print(
        f"{lane.suite} against {lane.impl}: {histories} histories in {seconds:.1f}s, {failed} failed",
        markup=False,
    )


def _verify(args: argparse.Namespace, out: Console) -> int:
    """Every suite under the ci profile, every z3 obligation, every file of the regression corpus."""
    from frontier_harness.properties.checks.registry import SUITES
    from frontier_harness.properties.cli.prove import exit_code
    from frontier_harness.properties.cli.verify import replay_corpus, summary_table
    from frontier_harness.properties.solver import check as obligations
    from frontier_harness.properties.solver.encoding import FAITHFUL

    config = load_config()
    results, written = _run_suites(args, out, config, [s for s in SUITES.values() if s.name != "prove"], None)
    stopped = args.fail_fast and not all(r.passed for r in results)
    if stopped:
        out.print("--fail-fast: a suite failed; proofs and the corpus not run", markup=False)
    proofs = [] if stopped else obligations.prove(None, FAITHFUL, 0, args.timeout, None)
    corpus = [] if stopped else replay_corpus(args.corpus or Path(config.get("corpus")))
    out.print(summary_table(results, proofs, corpus, stopped))
    if args.junit:
        write_junit(args.junit, results, written, proofs, corpus)
    if any(c.invalid for c in corpus):
        return ExitCode.USAGE
    proved = exit_code(proofs) if proofs else ExitCode.HELD
    if (
        not all(r.passed for r in results)  # a failure, or a property that did not run
        or proved in (ExitCode.FAILED, ExitCode.USAGE)  # refuted, or proving nothing (no case, or trivial)
        or any(not c.passed for c in corpus)
    ):
        return ExitCode.FAILED
    return ExitCode.INFRASTRUCTURE if proved == ExitCode.INFRASTRUCTURE else ExitCode.HELD


def _prove(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.cli.prove import run

    return run(args, out)


def _validate_checkpoint(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.cli.validate_checkpoint import run

    return run(args, out, Path(load_config().get("out")))


def _mutate(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.cli.mutate import run

    return run(args, out)


def _replay(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.engine.runner import replay

    cx = counterexample.read(args.file)
    suite, spec = get_suite(cx.suite), args.impl or cx.impl
    impl = _with_job(args, suite, load_implementation(spec), cx)
    suite.require(impl, spec)
    impl.prepare()
    outcome = replay(suite, impl, cx)
    out.print(report.counterexample_table(cx, outcome))
    if args.trace:
        out.print("\n".join(report.trace_lines(cx, outcome)), markup=False, highlight=False)
    if args.plot:
        from frontier_harness.properties.cli.plot import no_plot_message, plot

        drawn = plot(cx, outcome, args.plot)
        out.print(f"drawn to {drawn}" if drawn else no_plot_message(cx), markup=False)
    if outcome.ok:
        out.print("[green]holds now[/]: the counterexample no longer reproduces")
        return ExitCode.HELD
    out.print(f"[red]still fails[/]: {outcome.message}", soft_wrap=True)
    return ExitCode.FAILED


def _list(args: argparse.Namespace, out: Console) -> int:
    """Each property, the implementations the default run judges with it, and what it compares with."""
    from rich.table import Table

    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import SUITES

    model = load_implementation(MODEL)
    table = Table(title="suites")
    for column in ("suite", "property", "runs against", "reference", "what it checks"):
        table.add_column(column)
    for suite in SUITES.values():
        for prop in suite.properties:
            table.add_row(
                suite.name,
                prop.name,
                runs_against(suite, prop, model),
                reference_of(suite, prop).value,
                prop.doc.strip().splitlines()[0],
            )
    out.print(table)
    return ExitCode.HELD


def _bench(args: argparse.Namespace, out: Console) -> int:
    from frontier_harness.properties.cli.bench import run

    return run(args, out)


if __name__ == "__main__":
    sys.exit(main())
