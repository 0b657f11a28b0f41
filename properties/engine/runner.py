"""The runner: every property of a suite on every domain against one implementation, as one typed
request (`SuiteRequest`) asks, and a counterexample replayed.

The runner takes its parts by role: each property on each domain is a `Run`
(`frontier_harness.properties.engine.run`) searched by the lanes the profile says
(`frontier_harness.properties.engine.search`: directed, hypothesis, screening); a failure is made
minimal (`frontier_harness.properties.engine.minimal`; one that shows only together with other
histories, `frontier_harness.properties.engine.together`); the results are assembled with the
required hard cases judged (`frontier_harness.properties.engine.results`). It knows implementations
only through `frontier_harness.properties.engine.implementation`. An infrastructure failure (the
implementation could not run) is retried once after `recover()`, then aborts the run as
`InfrastructureError`; it never becomes a counterexample. A batch that raises is bisected to the
history that raises (`check_batch`), which is then blamed on whoever raised
(`frontier_harness.properties.engine.diagnostics`).

A scheduler that runs several requests at once (both cores) hands each its own hooks: a request holds
everything one run needs and shares nothing with another but, under `--fail-fast`, the run's `Stop`
(`frontier_harness.properties.engine.stop`): the first failure of any of them ends the others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import attrs

from frontier_harness.model.errors import ModelError
from frontier_harness.properties.engine.batch import check_batch
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.diagnostics import describe, set_up
from frontier_harness.properties.engine.errors import HISTORY_ERRORS, InvalidHistory
from frontier_harness.properties.engine.implementation import Implementation, Speed
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.results import PropertyResult, SuiteResult, judged_reach
from frontier_harness.properties.engine.run import Found, Progress, Run
from frontier_harness.properties.engine.search import run_property
from frontier_harness.properties.engine.stop import Stop
from frontier_harness.properties.engine.suite import Outcome, Property, Suite, shared_observations
from frontier_harness.properties.engine.verdict import Verdict


@attrs.frozen
class SuiteRequest:
    """What one run of a suite is asked: the suite against `impl` (named `impl_name`), under `profile`
    and `seed`, over `domains` (default the suite's), stopping at the first failure under `fail_fast`
    (`stop`, shared with the run's other requests: the first failure of any ends them all; a fresh one
    when none is given); and who hears of it: `progress` of each `Tick`, `found` of each counterexample as
    it is found and shrinks, `finished` of each property and domain as it ends."""

    suite: Suite
    impl: Implementation
    impl_name: str
    profile: Profile
    seed: int
    domains: Sequence[str] | None = None
    progress: Progress | None = None
    found: Found | None = None
    fail_fast: bool = False
    finished: Callable[[PropertyResult], None] | None = None
    stop: Stop | None = None


def replay(suite: Suite, impl: Implementation, cx: Counterexample) -> Outcome:
    """The counterexample's history checked again on both sides (a group's histories in one call).

    `InvalidHistory` (exit 2) when the history cannot be run: an action or
    argument the suite does not know, or a history the model rejects though the
    file did not record a generator/model disagreement (one that did replays as
    that disagreement).
    """
    suite = suite.for_implementation(impl)
    outcomes = check_batch(suite.property(cx.property), impl, cx.histories, suite)  # a group in one call
    outcome = next((o for o in outcomes if not o.ok), outcomes[0])
    if isinstance(outcome.error, HISTORY_ERRORS):
        raise InvalidHistory(str(outcome.error))
    if outcome.disagreement and not cx.disagreement:
        said = "rejects it" if isinstance(outcome.error, ModelError) else "raised"
        raise InvalidHistory(
            f"the model {said}: {describe(outcome.error) if outcome.error else outcome.message}"
        )
    return outcome


def run_suite(request: SuiteRequest) -> SuiteResult:
    """Every property of the request's suite on every domain, the lanes as the profile says; `finished`
    hears of each property and domain as it ends.

    A failing property does not stop the run (a CI run reports everything),
    unless `fail_fast`: then the first failure (of this request or another sharing its `stop`) ends it:
    a property running is "stopped (fail-fast)", the properties after it are "not run" (but the one
    whose failure a trial suite's peer judging found, which runs to report it: `Run.peers`). A property
    that does not apply to `impl` (`Property.applies`) is "not applicable" and does not run.
    """
    suite, impl, impl_name, seed = request.suite, request.impl, request.impl_name, request.seed
    suite.require(impl, impl_name)
    set_up(impl, impl_name)  # start Spark outside Hypothesis; fail fast without Java
    suite = suite.for_implementation(impl)  # histories and hard cases of what `impl` is (a job's plan)
    profile = scaled(request.profile, suite, impl)
    domains = tuple(request.domains or suite.domains)
    results: list[PropertyResult] = []
    runs = [(p, d) for p in suite.properties if p.runs_in(profile.name) for d in domains]
    stop = request.stop if request.stop is not None or not request.fail_fast else Stop()
    first: str | None = None
    with shared_observations():  # properties that draw the same histories share one observation of each
        for place, (prop, domain) in enumerate(runs, 1):
            where = (place, len(runs))
            run = Run(
                suite, prop, impl, impl_name, domain, profile, seed, request.progress, found=request.found,
                place=where, stop=stop, peers=_peers(prop, domain, runs[place:], impl),
            )  # fmt: skip
            results.append(_property_result(run, _not_run(run, first)))
            if request.finished is not None:
                request.finished(results[-1])
            if stop is not None and results[-1].verdict is Verdict.FAILED and first is None:
                first = f"{results[-1].property}[{results[-1].domain}]"
    return judged_reach(suite, domains, results, profile)


def _peers(
    prop: Property, domain: str, later: Sequence[tuple[Property, str]], impl: Implementation
) -> tuple[Property, ...]:
    """The properties run after `prop` on `domain` that draw its histories and apply to `impl`: a trial
    suite's run judges each of its trials by them too under `--fail-fast` (`Run.peers`)."""
    return tuple(
        p for p, d in later if d == domain and p.draw == prop.draw and p.not_applicable(impl) is None
    )


def _not_run(run: Run, first: str | None) -> str | None:
    """Why `run` does not start: `--fail-fast` stopped the run before it (unless its own failure, found by
    a peer's judging, set the stop)."""
    if run.stop is None or not run.stop.stops(run.key):
        return None
    return f"--fail-fast: {first or 'another lane'} failed first"


def _property_result(run: Run, stopped: str | None) -> PropertyResult:
    """`run_property`, unless the property does not apply to the implementation or the run stopped."""
    reason = run.prop.not_applicable(run.impl)
    if reason is None and stopped is None:
        return run_property(run)
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, 0, 0.0, Counter(), not_applicable=reason, not_run=stopped
    )


def scaled(profile: Profile, suite: Suite, impl: Implementation) -> Profile:
    """In-process implementations get the model's example counts; batched ones the engine's, divided by
    the suite's cost but never rounded to zero: a lane the profile runs checks at least one history.

    >>> from types import SimpleNamespace as S
    >>> from frontier_harness.properties.engine.profiles import PROFILES
    >>> scaled(PROFILES["dev"], S(batched_cost=1000.0), S(speed=Speed.BATCHED)).screening_histories
    1
    """
    if impl.speed is Speed.IN_PROCESS:
        return profile
    return attrs.evolve(
        profile,
        max_examples=max(1, round(profile.batched_examples / suite.batched_cost)),
        screening_histories=_divided(profile.batched_screening_histories, suite.batched_cost),
    )


def _divided(count: int, cost: float) -> int:
    return 0 if count == 0 else max(1, round(count / cost))
