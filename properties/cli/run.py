"""Running suites: their pairings planned, run and written, from the CLI's `check` and `verify` (with the
second process and the live display) and from Python (`frontier_harness.check`, the pytest fixture).

A run plans its pairings (`planned`: each suite against `impl` when one is given,
else against the model where some property judges it and against the suite's
default), runs every pairing that judges something, and writes each counterexample
file the moment it is found (rewritten in place as it shrinks). `run` returns the
results and never exits: it raises the harness's typed errors, `HarnessError`
(usage, bad input, an implementation's broken contract: the CLI's exit 2) and
`InfrastructureError` (it could not run: exit 3).

A pairing judges only what compares with something other than itself: the model's
pairing of `collections` runs nothing, since every property of that suite takes the
model's answer as the reference.

>>> from frontier_harness.properties.checks.registry import get_suite
>>> [(pairing.impl_name, pairing.judges) for pairing in planned([get_suite("collections")], "model", None, False, print)]
[('model', False)]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from frontier_harness.properties.cli.arguments import profile_of
from frontier_harness.properties.cli.progress import pairing_display
from frontier_harness.properties.cli.validate_checkpoint import is_log_check
from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.config import Config
from frontier_harness.properties.engine.errors import HarnessError, UnsupportedImplementation
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Observation
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.pairings import MODEL, Pairing, PairingResult, pairings
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.results import TRIALS, PropertyResult, SuiteResult
from frontier_harness.properties.engine.stop import Stop
from frontier_harness.properties.engine.suite import Suite
from frontier_harness.properties.engine.verdict import Verdict

UPGRADE = "upgrade"  # the suite whose --job is switched to --upgrade-to


def run(
    suites: str | Sequence[str] | None,
    impl: str | None,
    job: str | None,
    profile: Profile,
    files: report.CounterexampleFiles,
    domains: Sequence[str] | None = None,
    fail_fast: bool = False,
    upgrade_to: str | None = None,
) -> list[SuiteResult]:
    """`check` with the profile made and the files' writer given (the pytest fixture reads its paths)."""
    from frontier_harness.properties.checks.registry import SUITES, get_suite
    from frontier_harness.properties.engine import runner
    from frontier_harness.properties.engine.runner import SuiteRequest

    names = [suites] if isinstance(suites, str) else list(suites or SUITES)
    judging = [
        pairing
        for pairing in planned(
            [get_suite(n) for n in names], impl, job, suites is not None, upgrade_to=upgrade_to
        )
        if pairing.judges
    ]
    if not judging:
        raise HarnessError(
            f"nothing to judge: every property of {', '.join(names)} compares with {impl or MODEL}'s own answer"
        )
    results = []
    stop = Stop() if fail_fast else None  # the first failure of any pairing ends the run
    for pairing in judging:
        result = runner.run_suite(
            SuiteRequest(
                pairing.suite,
                pairing.impl,
                pairing.impl_name,
                profile,
                profile.seed,
                domains,
                found=files.announce,
                fail_fast=fail_fast,
                stop=stop,
            )
        )
        for failure in (r.failure for r in result.results if r.failure is not None):
            files.final(failure)
        results.append(result)
        if fail_fast and not result.passed:
            break
    return results


def suites_exit_code(out: Console, results: Sequence[PairingResult]) -> ExitCode:
    """1 when a property failed or a required hard case was never reached; else 2, with a line naming
    each, when a property did not run (a verdict that rests on no history is never "held"); else 0."""
    if any(r.verdict is Verdict.FAILED for pairing in results for r in pairing.result.results) or any(
        pairing.result.missing_events for pairing in results
    ):
        return ExitCode.FAILED
    not_run = [
        (pairing, r)
        for pairing in results
        for r in pairing.result.results
        if r.verdict in (Verdict.NOT_RUN, Verdict.STOPPED)
    ]
    for pairing, r in not_run:
        out.print(
            f"{r.verdict}: {r.suite}.{r.property}[{r.domain}] against {pairing.impl}: {r.reason}",
            markup=False,
        )
    return ExitCode.USAGE if not_run else ExitCode.HELD


def against(args: argparse.Namespace, out: Console, suites: list[Suite]) -> list[Pairing]:
    """Each suite's pairings (`planned`); a pairing that cannot run is named, not run."""
    return planned(
        suites,
        args.impl,
        getattr(args, "job", None),
        bool(getattr(args, "suite", None)),
        lambda reason: out.print(f"not run: {reason}", markup=False),
        lambda message: out.print(message, markup=False, soft_wrap=True),
        getattr(args, "upgrade_to", None),
    )


def run_suites(
    args: argparse.Namespace, out: Console, config: Config, suites: list[Suite], domains: list[str] | None
) -> tuple[list[PairingResult], dict]:
    """Runs every pairing of `suites`, prints and writes each counterexample (at once, then as it shrinks,
    then finished, the moment its property ends); returns the results, in the pairings' order, and the
    files, keyed by (suite, implementation, property, domain). A run of both kinds of pairing shares them
    with a second process (`shared_pairings`, `frontier_harness.properties.cli.background`), each taking
    the next one when it is free; under `--fail-fast` both share one `Stop`: the first failure in either
    ends every lane of both, and the pairings not yet taken are not run."""
    from frontier_harness.properties.adapters.spark import unshare_jvm
    from frontier_harness.properties.cli.background import Turns, shared_stop

    profile = profile_of(args, config)
    files = report.CounterexampleFiles(args.out or Path(config.get("out")), out)
    planned = against(args, out, suites)
    order = shared_pairings(args, planned)
    stop = shared_stop() if args.fail_fast else None
    turns = Turns(len(order) if order else len(planned))
    written: dict = {}
    failed = lambda impl, r: report_failure(out, files, impl, r, written, args.verbose)  # noqa: E731
    background = _start_background(
        args, out, profile, domains, files, [planned[i] for i in order], turns, stop, failed
    )
    results: dict[int, PairingResult] = {}
    try:
        while (k := turns.take(stop)) is not None:
            i = order[k] if order else k
            results[i] = run_pairing(planned[i], out, profile, profile.seed, domains, files, stop, failed)
            if stop is not None and not results[i].passed:
                stop.set(f"{planned[i].suite.name} against {planned[i].impl_name}")
        if background is not None:
            results.update((order[k], result) for k, result in background.results().items())
    finally:
        if background is not None:
            background.stop()
            unshare_jvm()
    for i, pairing in enumerate(planned):
        if i in results:
            continue
        if order and pairing.judges and (stop is None or not stop.is_set):
            raise InfrastructureError(f"{pairing.suite.name} against {pairing.impl_name} returned no result")
        if pairing.judges:
            results[i] = not_run_pairing(pairing, profile, domains, "--fail-fast: a failure was found first")
        else:
            results[i] = run_pairing(
                pairing, out, profile, profile.seed, domains
            )  # judges nothing: runs nothing
    return [results[i] for i in range(len(planned))], written


def not_run_pairing(
    pairing: Pairing, profile: Profile, domains: list[str] | None, reason: str
) -> PairingResult:
    """A planned pairing the run did not reach: each of its properties and domains "not run", named."""
    from frontier_harness.properties.engine.results import not_run

    return PairingResult(
        pairing.impl_name, not_run(pairing.suite, domains, profile, reason), pairing.reference_only
    )


def shared_pairings(args: argparse.Namespace, planned: list[Pairing]) -> list[int]:
    """The pairings two processes share, in the order they take them (`background.turn_order`): every
    judging one, when the run has both kinds (`background.in_background`: the model's and the serial-job
    suites', and the others); none (all here, one after another) when it is one kind or under `--job`
    (a wrapped job)."""
    from frontier_harness.properties.cli.background import in_background, turn_order

    if getattr(args, "job", None):
        return []
    judging = [pairing for pairing in planned if pairing.judges]
    kinds = {in_background(pairing) for pairing in judging}
    return turn_order(planned) if kinds == {True, False} else []


def _start_background(
    args: argparse.Namespace,
    out: Console,
    profile: Profile,
    domains: list[str] | None,
    files: report.CounterexampleFiles,
    pairings_there: list[Pairing],
    turns: Any,
    stop: Stop | None,
    failed: Callable[[str, PropertyResult], None],
):
    from frontier_harness.properties.adapters.spark import SparkImplementation, share_jvm
    from frontier_harness.properties.cli.background import Background, Job, PairingSpec
    from frontier_harness.properties.cli.progress import finished_line

    if not pairings_there:
        return None
    spark = {"master": args.master, "remote": args.remote, "verbose": args.verbose}
    if any(isinstance(pairing.impl, SparkImplementation) for pairing in pairings_there):
        spark["gateway"] = share_jvm()  # one JVM for both processes: its JIT's work, its memory
    job = Job(
        tuple(PairingSpec(pairing.suite.name, pairing.impl_name) for pairing in pairings_there),
        profile,
        profile.seed,
        tuple(domains) if domains else None,
        spark if any(spark.values()) else {},
    )

    def finished(name: str, r: PropertyResult) -> None:
        finished_line(out, name)(r)
        failed(name, r)

    return Background(
        job,
        finished,
        files.announce,
        lambda pairing, seconds: pairing_line(out, pairing, seconds),
        turns,
        stop,
    )


def report_failures(
    out: Console,
    files: report.CounterexampleFiles,
    pairing: PairingResult,
    written: dict,
    verbose: bool = False,
) -> None:
    """Each failure of `pairing` (`report_failure`)."""
    for r in pairing.result.results:
        report_failure(out, files, pairing.impl, r, written, verbose)


def report_failure(
    out: Console,
    files: report.CounterexampleFiles,
    impl: str,
    r: PropertyResult,
    written: dict,
    verbose: bool = False,
) -> None:
    """A failing property's report, the moment it ends (not when the run does): its final file written, a
    line naming it, its shrunk size and file, its table printed, the replay command shown; under `verbose`,
    each shrink pass that ran with the candidates it kept of those it tried."""
    if r.failure is None:
        return
    path = files.final(r.failure)
    written[(r.suite, impl, r.property, r.domain)] = path
    size = f"{r.failure.size} actions" + (
        f" in {len(r.failure.histories)} histories" if r.failure.together else ""
    )
    out.print(
        f"FAILED {r.suite}.{r.property}[{r.domain}] against {impl}: shrunk to {size}, {path}",
        markup=False,
        soft_wrap=True,
    )
    out.print(report.counterexample_table(r.failure, log=is_log_check(r.failure)))
    if r.failure.stopped:  # the wall clock, not the budget, ended its shrinking: said, never silent
        out.print(f"{r.suite}.{r.property}[{r.domain}]: {r.failure.stopped}", markup=False)
    if verbose and r.failure.shrink_passes:
        passes = "; ".join(r.failure.shrink_passes)
        out.print(f"{r.suite}.{r.property}[{r.domain}] shrink passes: {passes}", markup=False)
    out.print(report.replay_hint(r.failure, path), markup=False, soft_wrap=True)


def run_pairing(
    pairing: Pairing,
    out: Console,
    profile: Profile,
    seed: int,
    domains: list[str] | None,
    files: report.CounterexampleFiles | None = None,
    stop: Stop | None = None,
    failed: Callable[[str, PropertyResult], None] | None = None,
) -> PairingResult:
    """One pairing; a pairing that judges nothing (the model as its own reference) does not run. Under a
    `stop` (`--fail-fast`) the first failure of any lane ends it; `failed` hears of each property's result
    the moment it ends (its failure reported then)."""
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

    if not pairing.judges:
        return PairingResult(
            pairing.impl_name, SuiteResult(pairing.suite.name, (), ()), pairing.reference_only
        )
    started = time.perf_counter()
    found = files.announce if files is not None else None
    with pairing_display(out, pairing.suite.name, pairing.impl_name) as hooks:

        def finished(r: PropertyResult) -> None:
            hooks.finished(r)
            if failed is not None:
                failed(pairing.impl_name, r)

        result = run_suite(
            SuiteRequest(
                pairing.suite,
                pairing.impl,
                pairing.impl_name,
                profile,
                seed,
                domains,
                hooks.progress,
                found,
                stop is not None,
                finished,
                stop,
            )
        )
    done = PairingResult(pairing.impl_name, result, pairing.reference_only)
    pairing_line(out, done, time.perf_counter() - started)
    return done


def pairing_line(out: Console, pairing: PairingResult, seconds: float) -> None:
    """`SUITE against IMPL: N histories in S s, F failed`; a trial suite's count is its trials, each
    counted once though every property judges it (the properties share one observation of each)."""
    results = pairing.result.results
    failed = sum(r.verdict is Verdict.FAILED for r in results)
    trials = [r for r in results if r.unit == TRIALS]
    if trials:
        by_domain: dict[str, int] = {}
        for r in trials:
            by_domain[r.domain] = max(by_domain.get(r.domain, 0), r.examples)
        checked = f"{sum(by_domain.values())} trials"
    else:
        checked = f"{sum(r.examples for r in results)} histories"
    out.print(
        f"{pairing.suite} against {pairing.impl}: {checked} in {seconds:.1f}s, {failed} failed", markup=False
    )


def planned(
    suites: Sequence[Suite],
    impl: str | None,
    job: str | None,
    named: bool,
    skipped: Callable[[str], object] = lambda reason: None,
    note: Callable[[str], object] = lambda message: None,
    upgrade_to: str | None = None,
) -> list[Pairing]:
    """Each suite's pairings: against `impl` for every suite, else the model (where it is judged) and the default.

    A suite `named` by the caller that cannot run against `impl`, or a suite that
    cannot run against its own default, refuses (`UnsupportedImplementation`); the
    other pairings that cannot run are handed to `skipped` with the reason and not run.
    Under `job` the streaming and stateful suites' pairings run the user's job alone, and the upgrade suite's
    the job switched to `upgrade_to` (`_job_pairings`).
    """
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.adapters.job import JOB_SUITES

    if job and not any(s.name in (*JOB_SUITES, UPGRADE) for s in suites):
        raise HarnessError(
            "--job applies to the streaming, stateful and cdc suites (and upgrade, with --upgrade-to): "
            "add --suite streaming, stateful, cdc or upgrade"
        )
    if upgrade_to and not (job and any(s.name == UPGRADE for s in suites)):
        raise HarnessError(
            "--upgrade-to names the new job of --suite upgrade: add --suite upgrade and --job OLD"
        )
    if job and impl not in (None, "spark"):
        raise HarnessError(f"--job runs on Spark: it cannot be combined with --impl {impl}")
    loaded: dict[str, Implementation] = {}

    def load(spec: str) -> Implementation:
        if spec not in loaded:
            loaded[spec] = load_implementation(spec)
        return loaded[spec]

    runs = []
    for suite in suites:
        chosen = (
            _job_pairings(suite, impl, job, named, load, note, upgrade_to)
            if job
            else pairings(suite, impl, load)
        )
        for pairing in chosen:
            reason = suite.unsupported(pairing.impl, pairing.impl_name)
            if reason is None:
                runs.append(pairing)
            elif named if impl else pairing.impl_name == suite.default_impl:
                raise UnsupportedImplementation(f"{reason}: it cannot run against --impl {pairing.impl_name}")
            else:
                skipped(reason)
    if not runs:
        raise UnsupportedImplementation(f"no suite can run against --impl {impl}")
    return runs


def _job_pairings(
    suite: Suite,
    impl: str | None,
    job: str,
    named: bool,
    load: Callable[[str], Implementation],
    note: Callable[[str], object],
    upgrade_to: str | None = None,
) -> list[Pairing]:
    """Under `job` the streaming and stateful suites run the user's job alone, named by it (`job:M:F`,
    `stateful-job:M:F`, `cdc-job:M:F`), with the suite's trial count for a user's job (`under_job`), and the
    upgrade suite the job switched to `upgrade_to` (`upgrade-job:OLD->NEW`); other suites their default pairings.
    A job of another suite's kind leaves a suite its default pairings, unless it was `named` (`WrongKindOfJob`:
    exit 2), as does the upgrade suite without `upgrade_to`."""
    from frontier_harness.properties.adapters.job import JOB_SUITES, WrongKindOfJob
    from frontier_harness.properties.adapters.upgrade import upgrade_spec

    if suite.name == UPGRADE and upgrade_to:
        spec = upgrade_spec(job, upgrade_to)
        return [Pairing(suite, spec, load(spec))]
    if suite.name == UPGRADE and named:
        raise HarnessError("--suite upgrade under --job needs --upgrade-to MODULE:FACTORY, the new job")
    if suite.name not in JOB_SUITES:
        return pairings(suite, impl, load)
    spec = JOB_SUITES[suite.name] + job
    try:
        implementation = load(spec)
    except WrongKindOfJob as exc:
        if named:
            raise
        note(f"{suite.name} runs against its default implementations: {exc}")
        return pairings(suite, impl, load)
    under_job = getattr(suite, "under_job", None)
    return [Pairing(under_job() if under_job else suite, spec, implementation)]


def with_job(suite: Suite, impl: Implementation, job: str | None, impl_spec: str | None) -> Implementation:
    """The streaming, stateful and cdc suites under a `job` run the user's job on Spark; other suites keep
    `impl`."""
    from frontier_harness.properties.adapters.job import JOB_SUITES, load_suite_job

    if not job or suite.name not in JOB_SUITES or getattr(impl, "streaming_job", None) == job:
        return impl
    if impl_spec not in (None, "spark"):
        raise HarnessError(f"--job runs on Spark: it cannot be combined with --impl {impl_spec}")
    return load_suite_job(suite.name, job)


def model_observation(suite: str, history: History) -> Observation:
    """What the model observes of `history` in `suite`: what an implementation's `observe_<suite>` must return.

    >>> from frontier_harness.properties.engine.history import Action
    >>> model_observation("collections", History("total", (Action("read", {"time": 0}),)))
    {(0, 'read'): frozenset(), (1, 'final'): frozenset()}
    """
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import get_suite

    observer = f"observe_{suite}"
    if observer not in get_suite(suite).calls:
        raise UnsupportedImplementation(f"suite {suite!r} has no observer: it checks the model's own laws")
    return getattr(load_implementation(MODEL), observer)(history.time_domain, [history])[0]
