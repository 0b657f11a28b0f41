"""The batched runner: a shrinking lane and a screening lane per property and domain.

- Shrinking lane: one Hypothesis example is a small batch of histories checked in
  one implementation call (one Spark job); Hypothesis shrinks a failing batch to
  one history and that history to its minimum.
- Screening lane: histories drawn by the same generators from a seeded `random`
  source, checked thousands per call; a disagreement is reduced by delta debugging
  with the implementation in the loop (`properties.reduce`).

Infrastructure failures (Spark died, Java missing) abort the run as
`InfrastructureError`; they are never turned into counterexamples.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase

from properties.counterexample import Counterexample
from properties.history import History
from properties.profiles import Profile
from properties.source import HypothesisSource, RandomSource
from properties.suite import Outcome, Property, Suite
from spark_impl.errors import InfrastructureError, SparkUnavailable, is_infrastructure_failure

Progress = Callable[[str, int], None]


@attrs.frozen
class PropertyResult:
    """What one property did on one domain."""

    suite: str
    property: str
    domain: str
    examples: int
    seconds: float
    events: Counter
    invalid: int = 0
    failure: Counterexample | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


@attrs.frozen
class SuiteResult:
    """A suite's property results and the hard cases its generator never reached."""

    suite: str
    results: tuple
    missing_events: tuple

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and not self.missing_events


def check_batch(prop: Property, impl: Any, histories: Sequence[History], retry: bool = True) -> list[Outcome]:
    """`prop.check`, with an implementation crash blamed per history.

    An infrastructure failure is retried once after `impl.recover()` (a flaky
    failure passes), then re-raised as `InfrastructureError`: never an outcome.
    """
    try:
        return prop.check(impl, histories)
    except Exception as exc:
        if not isinstance(exc, InfrastructureError) and not is_infrastructure_failure(exc):
            return _blame(prop, impl, histories, exc)
        if not retry or not hasattr(impl, "recover"):
            raise exc if isinstance(exc, InfrastructureError) else SparkUnavailable(exc) from exc
        impl.recover()
        return check_batch(prop, impl, histories, retry=False)


def _blame(prop: Property, impl: Any, histories: Sequence[History], exc: Exception) -> list[Outcome]:
    """An implementation that raised on valid input fails; in a batch, each history is tried alone."""
    if len(histories) > 1:
        return [o for h in histories for o in check_batch(prop, impl, [h])]
    return [
        Outcome(ok=False, message=f"implementation raised {type(exc).__name__}: {str(exc)[:500]}", step=0)
    ]


def run_suite(
    suite: Suite,
    impl: Any,
    impl_name: str,
    profile: Profile,
    seed: int,
    domains: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> SuiteResult:
    """Every property of `suite` on every domain, both lanes as the profile says."""
    if not _runs_at_model_speed(impl):
        profile = attrs.evolve(
            profile,
            max_examples=max(1, round(profile.spark_examples / suite.spark_cost)),
            screening_histories=round(profile.screening_histories / suite.spark_cost),
        )
    getattr(impl, "prepare", lambda: None)()  # start Spark outside Hypothesis; fail fast without Java
    domains = tuple(domains or suite.domains)
    results = [
        run_property(suite, prop, impl, impl_name, domain, profile, seed, progress)
        for prop in suite.properties
        for domain in domains
    ]
    reached = set().union(*(r.events for r in results)) if results else set()
    missing = tuple(e for e in suite.required_in(domains) if e not in reached)
    return SuiteResult(suite.name, tuple(results), missing)


def _runs_at_model_speed(impl: Any) -> bool:
    """The model and implementations built on it (planted bugs) get the model's example counts."""
    from properties.implementations import ModelImplementation

    return isinstance(impl, ModelImplementation)


def run_property(
    suite: Suite,
    prop: Property,
    impl: Any,
    impl_name: str,
    domain: str,
    profile: Profile,
    seed: int,
    progress: Progress | None = None,
) -> PropertyResult:
    """The shrinking lane, then (if it passed) the screening lane."""
    started = time.perf_counter()
    shrunk = shrinking_lane(suite, prop, impl, impl_name, domain, profile, seed, progress)
    if shrunk.failure is not None or profile.screening_histories == 0:
        return attrs.evolve(shrunk, seconds=time.perf_counter() - started)
    screened = screening_lane(suite, prop, impl, impl_name, domain, profile, seed, progress)
    return PropertyResult(
        suite.name,
        prop.name,
        domain,
        shrunk.examples + screened.examples,
        time.perf_counter() - started,
        shrunk.events + screened.events,
        shrunk.invalid + screened.invalid,
        screened.failure,
    )


def shrinking_lane(suite, prop, impl, impl_name, domain, profile, seed, progress) -> PropertyResult:
    tally = {"examples": 0, "invalid": 0}
    events: Counter = Counter()
    found: dict = {}

    def one_batch(data: Any) -> None:
        if "infra" in found:
            raise found["infra"]
        source = HypothesisSource(data.draw)
        histories = [prop.draw(source, domain) for _ in range(source.integer(1, profile.batch_size))]
        for h in histories:
            for label in prop.events(h):
                events[label] += 1
                hypothesis.event(label)
        try:
            outcomes = check_batch(prop, impl, histories)
        except InfrastructureError as exc:
            found["infra"] = exc
            raise
        tally["examples"] += len(histories)
        tally["invalid"] += sum(o.invalid for o in outcomes)
        if progress:
            progress(f"{suite.name}.{prop.name}[{domain}]", len(histories))
        failing = [(h, o) for h, o in zip(histories, outcomes) if not o.ok]
        if failing:
            found["failure"] = failing[0]
            raise AssertionError(failing[0][1].message)

    test = given(st.data())(settings(_hypothesis_settings(profile))(one_batch))
    if not profile.derandomize:
        test = hypothesis.seed(seed)(test)
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
        failure = _counterexample(suite, prop, impl_name, history, outcome, seed, "shrinking")
    return PropertyResult(
        suite.name,
        prop.name,
        domain,
        tally["examples"],
        time.perf_counter() - started,
        events,
        tally["invalid"],
        failure,
    )


def _hypothesis_settings(profile: Profile) -> settings:
    database = None
    if profile.database:
        database = DirectoryBasedExampleDatabase(profile.database)
    if profile.derandomize and database is not None:
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


def screening_lane(suite, prop, impl, impl_name, domain, profile, seed, progress) -> PropertyResult:
    source, events = RandomSource(seed), Counter()
    checked = invalid = 0
    started = time.perf_counter()
    while checked < profile.screening_histories:
        count = min(profile.screening_batch, profile.screening_histories - checked)
        histories = [prop.draw(source, domain) for _ in range(count)]
        for h in histories:
            events.update(prop.events(h))
        outcomes = check_batch(prop, impl, histories)
        checked += count
        invalid += sum(o.invalid for o in outcomes)
        if progress:
            progress(f"{suite.name}.{prop.name}[{domain}] screening", count)
        bad = next((h for h, o in zip(histories, outcomes) if not o.ok), None)
        if bad is not None:
            return PropertyResult(
                suite.name,
                prop.name,
                domain,
                checked,
                time.perf_counter() - started,
                events,
                invalid,
                reduce_failure(suite, prop, impl, impl_name, bad, seed),
            )
    return PropertyResult(
        suite.name, prop.name, domain, checked, time.perf_counter() - started, events, invalid
    )


def reduce_failure(
    suite: Suite, prop: Property, impl: Any, impl_name: str, history: History, seed: int | None
) -> Counterexample:
    """Delta-debugs a failing history with the implementation in the loop; the minimal one's counterexample."""
    from properties.reduce import reduce_history

    def still_fails(candidates: Sequence[History]) -> list[bool]:
        return [not o.ok for o in check_batch(prop, impl, candidates)]

    smallest = reduce_history(history, still_fails)
    outcome = check_batch(prop, impl, [smallest])[0]
    return _counterexample(suite, prop, impl_name, smallest, outcome, seed, "screening")


def _counterexample(suite, prop, impl_name, history, outcome: Outcome, seed, lane) -> Counterexample:
    return Counterexample(
        suite=suite.name,
        property=prop.name,
        history=history,
        impl=impl_name,
        message=outcome.message,
        step=outcome.step,
        seed=seed,
        lane=lane,
        model_said=outcome.expected,
        impl_said=outcome.actual,
    )
