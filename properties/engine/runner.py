"""The batched runner: a shrinking lane and a screening lane per property and domain.

- Shrinking lane: one Hypothesis example is a small batch of histories checked in
  one implementation call (one Spark job); Hypothesis shrinks a failing batch to
  one history and that history to its minimum.
- Screening lane: histories drawn by the same generators from a seeded `random`
  source, checked thousands per call; a disagreement is reduced by delta debugging
  with the implementation in the loop (`frontier_harness.properties.engine.reduce`).

Every lane takes a `Run`: one property on one domain against one implementation.
The runner knows implementations only through `frontier_harness.properties.engine.implementation`. An
infrastructure failure (the implementation could not run) is retried once after
`recover()`, then aborts the run as `InfrastructureError`; it never becomes a
counterexample.
"""

from __future__ import annotations

import builtins
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, ReadOnlyDatabase

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Speed
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.reduce import reduce_history
from frontier_harness.properties.engine.shrink import shrink_choices
from frontier_harness.properties.engine.source import HypothesisSource, RecordingSource, ReplaySource
from frontier_harness.properties.engine.suite import Outcome, Property, Suite

Progress = Callable[[str, int], None]


class GeneratorModelDisagreement(AssertionError):
    """A generated history the model rejected (its own exception: Hypothesis shrinks it apart)."""


@attrs.frozen
class Run:
    """One property on one domain against one implementation, with the profile and seed: what a lane takes."""

    suite: Suite
    prop: Property
    impl: Implementation
    impl_name: str
    domain: str
    profile: Profile
    seed: int
    progress: Progress | None = None

    @property
    def label(self) -> str:
        return f"{self.suite.name}.{self.prop.name}[{self.domain}]"

    def check(self, histories: Sequence[History]) -> list[Outcome]:
        return check_batch(self.prop, self.impl, histories)

    def draw(self, source: Any) -> History:
        return self.prop.draw(source, self.domain)

    def report(self, lane: str, histories: int) -> None:
        if self.progress:
            self.progress(f"{self.label}{lane}", histories)

    def counterexample(self, history: History, outcome: Outcome, lane: str) -> Counterexample:
        return Counterexample(
            suite=self.suite.name,
            property=self.prop.name,
            history=history,
            impl=self.impl_name,
            message=outcome.message,
            step=outcome.step,
            seed=self.seed,
            lane=lane,
            model_said=outcome.expected,
            impl_said=outcome.actual,
        )


@attrs.frozen
class PropertyResult:
    """What one property did on one domain."""

    suite: str
    property: str
    domain: str
    examples: int
    seconds: float
    events: Counter[str]
    rejected: int = 0
    failure: Counterexample | None = None

    @builtins.property  # `property` is a field here
    def passed(self) -> bool:
        return self.failure is None


@attrs.frozen
class SuiteResult:
    """A suite's property results and the hard cases its generator never reached."""

    suite: str
    results: tuple[PropertyResult, ...]
    missing_events: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and not self.missing_events


def check_batch(
    prop: Property, impl: Implementation, histories: Sequence[History], retry: bool = True
) -> list[Outcome]:
    """`prop.check`, with an implementation crash blamed per history.

    An infrastructure failure is retried once after `impl.recover()` (a flaky
    failure passes), then raised as `InfrastructureError`: never an outcome.
    """
    try:
        return prop.check(impl, histories)
    except Exception as exc:
        reason = impl.infrastructure_failure(exc)
        if reason is None:
            return _blame(prop, impl, histories, exc)
        if not retry:
            raise exc if isinstance(exc, InfrastructureError) else InfrastructureError(reason) from exc
        impl.recover()
        return check_batch(prop, impl, histories, retry=False)


def _blame(
    prop: Property, impl: Implementation, histories: Sequence[History], exc: Exception
) -> list[Outcome]:
    """An implementation that raised on valid input fails; in a batch, each history is tried alone."""
    if len(histories) > 1:
        return [o for h in histories for o in check_batch(prop, impl, [h])]
    return [
        Outcome(ok=False, message=f"implementation raised {type(exc).__name__}: {str(exc)[:500]}", step=0)
    ]


def run_suite(
    suite: Suite,
    impl: Implementation,
    impl_name: str,
    profile: Profile,
    seed: int,
    domains: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> SuiteResult:
    """Every property of `suite` on every domain, both lanes as the profile says."""
    suite.require(impl, impl_name)
    impl.prepare()  # start Spark outside Hypothesis; fail fast without Java
    profile = scaled(profile, suite, impl)
    domains = tuple(domains or suite.domains)
    results = [
        run_property(Run(suite, prop, impl, impl_name, domain, profile, seed, progress))
        for prop in suite.properties
        if prop.runs_in(profile.name)
        for domain in domains
    ]
    reached = set().union(*(r.events for r in results)) if results else set()
    missing = tuple(e for e in suite.required_in(domains) if e not in reached)
    return SuiteResult(suite.name, tuple(results), missing)


def scaled(profile: Profile, suite: Suite, impl: Implementation) -> Profile:
    """In-process implementations get the model's example counts; batched ones the engine's."""
    if impl.speed is Speed.IN_PROCESS:
        return profile
    return attrs.evolve(
        profile,
        max_examples=max(1, round(profile.spark_examples / suite.spark_cost)),
        screening_histories=round(profile.spark_screening_histories / suite.spark_cost),
    )


def run_property(run: Run) -> PropertyResult:
    """Both lanes, in the profile's order; the second runs only if the first passed.

    Screen first (the `ci` and `thorough` profiles against a batched
    implementation): thousands of histories a job, Hypothesis never called on
    the implementation, a failure shrunk through its choices. Otherwise the
    Hypothesis lane first, then the screening lane.
    """
    started = time.perf_counter()
    lanes = [screening_lane] if _screens_first(run) else [shrinking_lane, screening_lane]
    results: list[PropertyResult] = []
    for lane in lanes:
        if lane is screening_lane and run.profile.screening_histories == 0:
            continue
        results.append(lane(run))
        if results[-1].failure is not None:
            break
    return PropertyResult(
        run.suite.name,
        run.prop.name,
        run.domain,
        sum(r.examples for r in results),
        time.perf_counter() - started,
        sum((r.events for r in results), Counter[str]()),
        sum(r.rejected for r in results),
        next((r.failure for r in results if r.failure is not None), None),
    )


def _screens_first(run: Run) -> bool:
    return run.profile.screen_first and run.impl.speed is Speed.BATCHED


def shrinking_lane(run: Run) -> PropertyResult:
    """Hypothesis draws small batches; a failing batch shrinks to one minimal history.

    Shrinking stops at the profile's `shrink_seconds` after the first failure:
    later examples pass unchecked, and the last failing history (Hypothesis's
    smallest so far) is kept.
    """
    tally = {"examples": 0, "rejected": 0}
    events: Counter[str] = Counter()
    found: dict[str, Any] = {}

    def one_batch(data: Any) -> None:
        if "infra" in found:
            raise found["infra"]
        if found.get("deadline", float("inf")) < time.monotonic():
            return
        source = HypothesisSource(data.draw)
        histories = [run.draw(source) for _ in range(source.integer(1, run.profile.batch_size))]
        for h in histories:
            for label in run.prop.events(h):
                events[label] += 1
                hypothesis.event(label)
        try:
            outcomes = run.check(histories)
        except InfrastructureError as exc:
            found["infra"] = exc
            raise
        tally["examples"] += len(histories)
        tally["rejected"] += sum(o.rejected for o in outcomes)
        run.report("", len(histories))
        failing = [(h, o) for h, o in zip(histories, outcomes) if not o.ok]
        if failing:
            found.setdefault("deadline", time.monotonic() + run.profile.shrink_seconds)
            found["failure"] = failing[0]  # Hypothesis's latest failure is its smallest so far
            if failing[0][1].rejected:  # a different bug from a wrong answer: Hypothesis shrinks each apart
                raise GeneratorModelDisagreement(failing[0][1].message)
            raise AssertionError(failing[0][1].message)

    test = given(st.data())(settings(_hypothesis_settings(run.profile))(one_batch))
    if not run.profile.derandomize:
        test = hypothesis.seed(run.seed)(test)
    started = time.perf_counter()
    try:
        test()
    except Exception:
        if "infra" in found:
            raise found["infra"] from None
        if "failure" not in found:
            raise
    failure = None
    if "failure" in found:
        history, outcome = found["failure"]
        failure = run.counterexample(history, outcome, "shrinking")
    return PropertyResult(
        run.suite.name,
        run.prop.name,
        run.domain,
        tally["examples"],
        time.perf_counter() - started,
        events,
        tally["rejected"],
        failure,
    )


def _hypothesis_settings(profile: Profile) -> settings:
    database: ExampleDatabase | None = None
    if profile.database:
        database = DirectoryBasedExampleDatabase(profile.database)
        if profile.derandomize:
            database = ReadOnlyDatabase(database)
    return settings(
        max_examples=profile.max_examples,
        derandomize=profile.derandomize,
        database=database,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )


def screening_lane(run: Run) -> PropertyResult:
    """Histories from a seeded `random` source, thousands a call; a failure shrinks with the implementation."""
    rng, events = random.Random(run.seed), Counter[str]()
    checked = rejected = 0
    started = time.perf_counter()
    profile = run.profile
    while checked < profile.screening_histories:
        count = min(profile.screening_batch, profile.screening_histories - checked)
        sources = [RecordingSource(rng) for _ in range(count)]
        histories = [run.draw(source) for source in sources]
        for h in histories:
            events.update(run.prop.events(h))
        outcomes = run.check(histories)
        checked += count
        rejected += sum(o.rejected for o in outcomes)
        run.report(" screening", count)
        bad = next((i for i, o in enumerate(outcomes) if not o.ok), None)
        if bad is not None:
            failure = shrink_failure(run, sources[bad].choices, outcomes[bad])
            return PropertyResult(
                run.suite.name, run.prop.name, run.domain, checked, time.perf_counter() - started, events,
                rejected, failure,
            )  # fmt: skip
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, checked, time.perf_counter() - started, events, rejected
    )


def shrink_failure(run: Run, choices: list[int], outcome: Outcome) -> Counterexample:
    """A failing screened history made minimal: its choices shrunk, then its actions delta-debugged.

    Both work with the implementation in the loop, one batched call per pass, and
    stop at the profile's `shrink_seconds`, keeping the smallest failure so far. A
    candidate counts only if it fails the same way: a wrong answer is never
    shrunk to a history the model rejects (removing actions can make one).
    """
    deadline = time.monotonic() + run.profile.shrink_seconds

    def fails_the_same_way(histories: Sequence[History]) -> list[bool]:
        return [not o.ok and o.rejected == outcome.rejected for o in run.check(histories)]

    def choices_fail(candidates: Sequence[list[int]]) -> list[bool]:
        return fails_the_same_way([run.draw(ReplaySource(c)) for c in candidates])

    smallest = run.draw(ReplaySource(shrink_choices(choices, choices_fail, deadline)))
    smallest = reduce_history(smallest, fails_the_same_way, deadline)
    return run.counterexample(smallest, run.check([smallest])[0], "screening")
