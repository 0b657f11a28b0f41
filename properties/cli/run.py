"""Running suites from Python: `check`, which `frontier_harness.check` exports and the pytest fixture calls.

A run plans its lanes (`planned`: each suite against `impl` when one is given,
else against the model where some property judges it and against the suite's
default), runs every lane that judges something, and writes each counterexample
file the moment it is found (rewritten in place as it shrinks). It returns the
results and never exits: it raises the harness's typed errors, `HarnessError`
(usage, bad input, an implementation's broken contract: the CLI's exit 2) and
`InfrastructureError` (it could not run: exit 3). The CLI's `check` plans its
lanes here too, and adds the second process and the live display.

A lane judges only what compares with something other than itself: the model's
lane of `collections` runs nothing, since every property of that suite takes the
model's answer as the reference.

>>> from frontier_harness.properties.checks.registry import get_suite
>>> [(lane.impl_name, lane.judges) for lane in planned([get_suite("collections")], "model", None, False, print)]
[('model', False)]
>>> check("collections", impl="model")
Traceback (most recent call last):
...
frontier_harness.properties.engine.errors.HarnessError: nothing to judge: every property of collections compares with model's own answer
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.errors import HarnessError, UnsupportedImplementation
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Observation
from frontier_harness.properties.engine.lanes import MODEL, Lane, lanes
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.runner import SuiteResult
from frontier_harness.properties.engine.suite import Suite


def check(
    suites: str | Sequence[str] | None = None,
    *,
    impl: str | None = None,
    job: str | None = None,
    profile: str = "ci",
    seed: int = 0,
    out: Path | str | None = None,
    domains: Sequence[str] | None = None,
    fail_fast: bool = False,
) -> list[SuiteResult]:
    """Runs `suites` (a name, names, or every suite) and returns one `SuiteResult` per lane that judged.

    `impl` is `model`, `spark` or `module:factory` (default: each suite's lanes);
    `job` a `module:factory` of a streaming job for the `streaming` or `stateful` suite;
    `profile` a profile name (with `[tool.frontier-harness]`'s overrides); `out`
    where counterexample files go (default `[tool.frontier-harness] out`).
    A result `passed` when every property held and every hard case was reached.
    """
    config = load_config()
    files = report.CounterexampleFiles(Path(out or config.get("out")), None)
    return run(suites, impl, job, attrs.evolve(config.profile(profile), seed=seed), files, domains, fail_fast)


def run(
    suites: str | Sequence[str] | None,
    impl: str | None,
    job: str | None,
    profile: Profile,
    files: report.CounterexampleFiles,
    domains: Sequence[str] | None = None,
    fail_fast: bool = False,
) -> list[SuiteResult]:
    """`check` with the profile made and the files' writer given (the pytest fixture reads its paths)."""
    from frontier_harness.properties.checks.registry import SUITES, get_suite
    from frontier_harness.properties.engine import runner

    names = [suites] if isinstance(suites, str) else list(suites or SUITES)
    judging = [
        lane for lane in planned([get_suite(n) for n in names], impl, job, suites is not None) if lane.judges
    ]
    if not judging:
        raise HarnessError(
            f"nothing to judge: every property of {', '.join(names)} compares with {impl or MODEL}'s own answer"
        )
    results = []
    for lane in judging:
        result = runner.run_suite(
            lane.suite,
            lane.impl,
            lane.impl_name,
            profile,
            profile.seed,
            domains,
            found=files.announce,
            fail_fast=fail_fast,
        )
        for failure in (r.failure for r in result.results if r.failure is not None):
            files.final(failure)
        results.append(result)
        if fail_fast and not result.passed:
            break
    return results


def planned(
    suites: Sequence[Suite],
    impl: str | None,
    job: str | None,
    named: bool,
    skipped: Callable[[str], object] = lambda reason: None,
    note: Callable[[str], object] = lambda message: None,
) -> list[Lane]:
    """Each suite's lanes: against `impl` for every suite, else the model (where it is judged) and the default.

    A suite `named` by the caller that cannot run against `impl`, or a suite that
    cannot run against its own default, refuses (`UnsupportedImplementation`); the
    other lanes that cannot run are handed to `skipped` with the reason and not run.
    Under `job` the streaming and stateful suites' lanes run the user's job alone (`_job_lanes`).
    """
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.adapters.job import JOB_SUITES

    if job and not any(s.name in JOB_SUITES for s in suites):
        raise HarnessError(
            "--job applies to the streaming and stateful suites: add --suite streaming or stateful"
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
        for lane in _job_lanes(suite, impl, job, named, load, note) if job else lanes(suite, impl, load):
            reason = suite.unsupported(lane.impl, lane.impl_name)
            if reason is None:
                runs.append(lane)
            elif named if impl else lane.impl_name == suite.default_impl:
                raise UnsupportedImplementation(f"{reason}: it cannot run against --impl {lane.impl_name}")
            else:
                skipped(reason)
    if not runs:
        raise UnsupportedImplementation(f"no suite can run against --impl {impl}")
    return runs


def _job_lanes(
    suite: Suite,
    impl: str | None,
    job: str,
    named: bool,
    load: Callable[[str], Implementation],
    note: Callable[[str], object],
) -> list[Lane]:
    """Under `job` the streaming and stateful suites run the user's job alone, named by it (`job:M:F`,
    `stateful-job:M:F`), with the suite's trial count for a user's job (`under_job`); other suites their
    default lanes. A job of the other suite's kind leaves a suite its default lanes, unless it was `named`
    (`WrongKindOfJob`: exit 2)."""
    from frontier_harness.properties.adapters.job import JOB_SUITES, WrongKindOfJob, spec_of

    if suite.name not in JOB_SUITES:
        return lanes(suite, impl, load)
    spec = spec_of(job, stateful=suite.name == "stateful")
    try:
        implementation = load(spec)
    except WrongKindOfJob as exc:
        if named:
            raise
        note(f"{suite.name} runs its default lanes: {exc}")
        return lanes(suite, impl, load)
    under_job = getattr(suite, "under_job", None)
    return [Lane(under_job() if under_job else suite, spec, implementation)]


def with_job(suite: Suite, impl: Implementation, job: str | None, impl_spec: str | None) -> Implementation:
    """The streaming and stateful suites under a `job` run the user's job on Spark; other suites keep `impl`."""
    from frontier_harness.properties.adapters.job import JOB_SUITES, load_job

    if not job or suite.name not in JOB_SUITES or getattr(impl, "streaming_job", None) == job:
        return impl
    if impl_spec not in (None, "spark"):
        raise HarnessError(f"--job runs on Spark: it cannot be combined with --impl {impl_spec}")
    return load_job(job, stateful=suite.name == "stateful")


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
