"""The batched runner: a shrinking lane and a screening lane per property and domain.

- Shrinking lane: one Hypothesis example is a small batch of histories checked in
  one implementation call (one Spark job); Hypothesis shrinks a failing batch to
  one history, then delta debugging over its actions (`frontier_harness.properties.engine.reduce`)
  makes it 1-minimal.
- Screening lane: histories drawn by the same generators from a seeded `random`
  source, checked thousands per call; a disagreement is shrunk through its
  choices, then delta-debugged, with the implementation in the loop.

Every lane takes a `Run`: one property on one domain against one implementation.
The runner knows implementations only through `frontier_harness.properties.engine.implementation`. An
infrastructure failure (the implementation could not run) is retried once after
`recover()`, then aborts the run as `InfrastructureError`; it never becomes a
counterexample. A batch that raises is bisected to the history that raises
(`check_batch`), which is then blamed on whoever raised (`frontier_harness.properties.engine.diagnostics`).
A failure is handed to the run's `found` hook the moment it is found and each
time it shrinks, so the CLI writes the file at once and rewrites it in place;
shrinking (bisection included) spends one budget per failure
(`frontier_harness.properties.engine.budget`: a count of implementation calls under `ci`).
"""

from __future__ import annotations

import builtins
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import attrs
import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from frontier_harness.model.errors import ModelError
from frontier_harness.properties.engine.batch import UNCHECKED, check_batch
from frontier_harness.properties.engine.budget import ShrinkBudget
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.diagnostics import describe
from frontier_harness.properties.engine.errors import BadHistory, ContractViolation, InvalidHistory
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Speed
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.reduce import reduce_history, spans
from frontier_harness.properties.engine.shrink import shrink_choices
from frontier_harness.properties.engine.source import HypothesisSource, RecordingSource, ReplaySource
from frontier_harness.properties.engine.suite import Outcome, Property, Suite, events_of, shared_observations
from frontier_harness.properties.engine.verdict import Verdict, verdict_of


@attrs.frozen
class Tick:
    """Where one property on one domain is: `done` histories of `total`, the last `n` of them in `lane`
    (`hypothesis`, the shrinking lane, or `screening`).

    `total` is the profile's count: while the Hypothesis lane runs it is an upper bound (an example is
    a batch of 1 to `batch_size` histories), once the lane ends it is exact. `place` is this property
    and domain's number, of how many the suite runs. `trial` is one history's verdict, when a suite
    reports its histories one by one (the streaming suite: each a real query); `shrinking` when the
    history was checked after a failure was seen (its number may pass the total).
    """

    suite: str
    property: str
    domain: str
    lane: str
    done: int
    total: int
    n: int = 0
    place: tuple[int, int] = (1, 1)
    trial: str | None = None
    shrinking: bool = False


Progress = Callable[[Tick], None]
# Called with a counterexample the moment a lane finds it (FOUND), and each time shrinking makes it
# smaller (SHRUNK), so a file can be written at once and rewritten in place.
Found = Callable[["Counterexample", str], None]
FOUND, SHRUNK = "found", "shrunk"


class GeneratorModelDisagreement(AssertionError):
    """A generated history the model rejected (its own exception, so Hypothesis reports it as what it is)."""


@attrs.define
class Tally:
    """Histories one run has checked so far, of its expected `total`, and the lane running."""

    done: int = 0
    total: int = 0
    lane: str = "hypothesis"
    found: bool = False  # a failing trial was announced before its batch ended (`Run.check`)


# The running check's trial hook (`report_trial`); set by `Run.check` for the batch it checks.
_TRIAL: ContextVar[Callable[[Outcome], None] | None] = ContextVar("trial", default=None)


def report_trial(outcome: Outcome) -> Outcome:
    """For a suite whose histories are slow one by one (a streaming trial is a real query): tells the
    run's progress the verdict of the next history of the batch being checked; returns `outcome`."""
    hook = _TRIAL.get()
    if hook is not None:
        hook(outcome)
    return outcome


def shrink_budget(run: Run) -> ShrinkBudget:
    """A run's shrink budget: the suite's `shrink_calls` under a profile that shrinks by calls (`ci`),
    within the profile's wall-clock `shrink_seconds` (its whole budget in the other profiles)."""
    calls = run.suite.shrink_calls if run.profile.shrink_by_calls else None
    return ShrinkBudget(run.profile.shrink_seconds, calls)


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
    budget: ShrinkBudget = attrs.field(default=attrs.Factory(lambda run: shrink_budget(run), takes_self=True))
    found: Found | None = None
    place: tuple[int, int] = (1, 1)
    tally: Tally = attrs.Factory(Tally)

    @property
    def label(self) -> str:
        return f"{self.suite.name}.{self.prop.name}[{self.domain}]"

    def check(self, histories: Sequence[History]) -> list[Outcome]:
        """`check_batch`; a verdict the suite reports on its own (`report_trial`) reaches the progress, and
        the run's first failing one is announced (`FOUND`) at once, before the rest of its batch is checked
        (a streaming batch is minutes of real queries)."""
        trials = iter(enumerate(histories, self.tally.done + 1))

        def trial(outcome: Outcome) -> None:
            number, history = next(trials, (0, None))
            self._trial(number, history, outcome)

        token = _TRIAL.set(trial)
        try:
            return check_batch(
                self.prop, self.impl, histories, self.suite, self.budget.start, self.budget.spend
            )
        finally:
            _TRIAL.reset(token)

    def _trial(self, number: int, history: History | None, outcome: Outcome) -> None:
        self.tick(0, number, outcome)
        if history is None or outcome.ok or outcome.unresolved or self.budget.started or self.tally.found:
            return
        self.tally.found = True
        self.announce(history, outcome, self.tally.lane, FOUND)

    def draw(self, source: Any) -> History:
        return self.prop.draw(source, self.domain)

    def report(self, histories: int) -> None:
        self.tally.done += histories
        self.tick(histories)

    def tick(self, n: int = 0, number: int = 0, trial: Outcome | None = None) -> None:
        """Hands the progress a `Tick`: `n` more histories checked, or the verdict of history `number`."""
        if self.progress is None:
            return
        verdict = None if trial is None else "held" if trial.ok else f"failed: {trial.message}"
        done = number or self.tally.done
        shrinking = self.budget.started is not None
        self.progress(
            Tick(self.suite.name, self.prop.name, self.domain, self.tally.lane, done, self.tally.total, n,
                 self.place, verdict, shrinking)
        )  # fmt: skip

    def announce(self, history: History, outcome: Outcome, lane: str, event: str) -> Counterexample:
        """The counterexample of `history`, handed to the `found` hook (`FOUND` or `SHRUNK`) first."""
        cx = self.counterexample(history, outcome, lane)
        if self.found is not None:
            self.found(cx, event)
        return cx

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
            trace=outcome.trace,
            job=getattr(self.impl, "streaming_job", None),  # the user's `--job`, which `replay` runs again
            together=outcome.together,
            stopped=self.budget.stopped,
        )


@attrs.frozen
class PropertyResult:
    """What one property did on one domain: its verdict rests on `examples`, the histories checked.

    `not_applicable` says why the property does not apply to the implementation; `not_run` why it did
    not run (a run cut short). A result with neither that checked no history is "not run" too.
    """

    suite: str
    property: str
    domain: str
    examples: int
    seconds: float
    events: Counter[str]
    rejected: int = 0
    failure: Counterexample | None = None
    not_applicable: str | None = None
    not_run: str | None = None

    @builtins.property
    def verdict(self) -> Verdict:
        return verdict_of(self.failure is not None, self.examples, self.not_applicable, self.not_run)

    @builtins.property  # `property` is a field here
    def passed(self) -> bool:
        """Held, or not applicable: never after zero histories."""
        return not self.verdict.fails

    @builtins.property
    def reason(self) -> str:
        """Why it has no verdict either way ("not run", "not applicable"); empty otherwise."""
        if self.verdict is Verdict.NOT_APPLICABLE:
            return self.not_applicable or ""
        if self.verdict is Verdict.NOT_RUN:
            return self.not_run or "it checked 0 histories"
        return ""


@attrs.frozen
class SuiteResult:
    """A suite's property results, and its required hard cases that were not reached, by why.

    `missing_events` fail the run: never generated in a run that ran to its end under a profile whose
    counts reach them (`Profile.judges_reach`). `not_shown_events` were not reached in a run too small to
    (a `dev` run): named, not failing. `not_run_events` belong to a run cut short (a failure, `--fail-fast`):
    not judged at all.
    """

    suite: str
    results: tuple[PropertyResult, ...]
    missing_events: tuple[str, ...]
    not_shown_events: tuple[str, ...] = ()
    not_run_events: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and not self.missing_events

    @property
    def histories(self) -> int:
        """The most histories one property checked: what a "not shown" hard case was looked for in."""
        return max((r.examples for r in self.results), default=0)


def replay(suite: Suite, impl: Implementation, cx: Counterexample) -> Outcome:
    """The counterexample's history checked again on both sides (a group's histories in one call).

    `InvalidHistory` (exit 2) when the history cannot be run: an action or
    argument the suite does not know, or a history the model rejects though the
    file did not record a generator/model disagreement (one that did replays as
    that disagreement).
    """
    outcomes = check_batch(suite.property(cx.property), impl, cx.histories, suite)  # a group in one call
    outcome = next((o for o in outcomes if not o.ok), outcomes[0])
    if isinstance(outcome.error, BadHistory):
        raise InvalidHistory(str(outcome.error))
    if outcome.disagreement and not cx.disagreement:
        said = "rejects it" if isinstance(outcome.error, ModelError) else "raised"
        raise InvalidHistory(
            f"the model {said}: {describe(outcome.error) if outcome.error else outcome.message}"
        )
    return outcome


def run_suite(
    suite: Suite,
    impl: Implementation,
    impl_name: str,
    profile: Profile,
    seed: int,
    domains: Sequence[str] | None = None,
    progress: Progress | None = None,
    found: Found | None = None,
    fail_fast: bool = False,
    finished: Callable[[PropertyResult], None] | None = None,
) -> SuiteResult:
    """Every property of `suite` on every domain, both lanes as the profile says; `finished` hears of
    each property and domain as it ends.

    A failing property does not stop the run (a CI run reports everything),
    unless `fail_fast`: then the first failure ends it, and the properties after
    it are "not run". A property that does not apply to `impl` (`Property.applies`)
    is "not applicable" and does not run.
    """
    suite.require(impl, impl_name)
    impl.prepare()  # start Spark outside Hypothesis; fail fast without Java
    profile = scaled(profile, suite, impl)
    domains = tuple(domains or suite.domains)
    results: list[PropertyResult] = []
    runs = [(p, d) for p in suite.properties if p.runs_in(profile.name) for d in domains]
    stopped: str | None = None
    with shared_observations():  # properties that draw the same histories share one observation of each
        for place, (prop, domain) in enumerate(runs, 1):
            where = (place, len(runs))
            run = Run(suite, prop, impl, impl_name, domain, profile, seed, progress, found=found, place=where)
            results.append(_property_result(run, stopped))
            if finished is not None:
                finished(results[-1])
            if fail_fast and results[-1].verdict is Verdict.FAILED:
                stopped = f"--fail-fast: {results[-1].property}[{results[-1].domain}] failed first"
    return judged_reach(suite, domains, results, profile)


def not_run(suite: Suite, domains: Sequence[str] | None, profile: Profile, reason: str) -> SuiteResult:
    """A suite the run did not reach (`--fail-fast` stopped before it): each property and domain it would
    have run, "not run" with `reason`, and its hard cases not judged."""
    domains = tuple(domains or suite.domains)
    results = [
        PropertyResult(suite.name, p.name, d, 0, 0.0, Counter(), not_run=reason)
        for p in suite.properties
        if p.runs_in(profile.name)
        for d in domains
    ]
    return SuiteResult(suite.name, tuple(results), (), not_run_events=suite.required_in(domains))


def _property_result(run: Run, stopped: str | None) -> PropertyResult:
    """`run_property`, unless the property does not apply to the implementation or the run stopped."""
    reason = run.prop.not_applicable(run.impl)
    if reason is None and stopped is None:
        return run_property(run)
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, 0, 0.0, Counter(), not_applicable=reason, not_run=stopped
    )


def judged_reach(
    suite: Suite, domains: Sequence[str], results: Sequence[PropertyResult], profile: Profile
) -> SuiteResult:
    """The suite's result, its unreached hard cases sorted by why (`SuiteResult`): not judged when a
    property failed or did not run, named but not failing under a profile too small to reach them."""
    held = [r for r in results if r.verdict is Verdict.HELD]
    missing = unreached(suite, domains, held)
    if not all(r.passed for r in results):
        return SuiteResult(suite.name, tuple(results), (), not_run_events=missing)
    if not held:  # every property not applicable: no hard case to look for
        return SuiteResult(suite.name, tuple(results), ())
    if not profile.judges_reach:
        return SuiteResult(suite.name, tuple(results), (), not_shown_events=missing)
    return SuiteResult(suite.name, tuple(results), missing)


def unreached(suite: Suite, domains: Sequence[str], results: Sequence[PropertyResult]) -> tuple[str, ...]:
    """Each required hard case never generated in a domain that has it, as `case [domain]`.

    A case is required in every domain of the run its `event_domains` names (all by
    default): reached in one domain, it says nothing about another's generator.
    """
    reached = {(r.domain, e) for r in results for e in r.events}
    return tuple(
        f"{e} [{d}]"
        for e in suite.required_in(domains)
        for d in domains
        if d in suite.event_domains.get(e, domains) and (d, e) not in reached
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


def run_property(run: Run) -> PropertyResult:
    """Both lanes, in the profile's order; the second runs only if the first passed.

    Screen first (the `ci` and `thorough` profiles against a batched
    implementation): thousands of histories a job, Hypothesis never called on
    the implementation, a failure shrunk through its choices. Otherwise the
    Hypothesis lane first, then the screening lane.
    """
    started = time.perf_counter()
    lanes = [screening_lane] if _screens_first(run) else [shrinking_lane, screening_lane]
    lanes = [lane for lane in lanes if lane is shrinking_lane or run.profile.screening_histories > 0]
    if directed_histories(run):
        lanes = [directed_lane, *lanes]
    results: list[PropertyResult] = []
    for i, lane in enumerate(lanes):
        run.tally.total = run.tally.done + _expected(run, lanes[i:])
        run.tally.lane = LANE_NAMES[lane]
        run.tick()
        results.append(lane(run))
        if results[-1].failure is not None:
            break
    run.tally.total = run.tally.done
    run.tick()
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


def _expected(run: Run, lanes: Sequence[Callable[[Run], PropertyResult]]) -> int:
    """Histories `lanes` check at most: a Hypothesis example is a batch of up to `batch_size`."""
    profile = run.profile
    hypothesis = profile.max_examples * profile.batch_size if shrinking_lane in lanes else 0
    directed = len(directed_histories(run)) if directed_lane in lanes else 0
    return directed + hypothesis + (profile.screening_histories if screening_lane in lanes else 0)


def directed_histories(run: Run) -> list[History]:
    """The property's directed histories (`Property.directed`) for the hard cases required in the run's
    domain, each drawn from a source seeded by the run's seed alone (the same histories every run of a
    seed), a history directed at two cases checked once.

    >>> from types import SimpleNamespace as Run
    >>> from frontier_harness.properties.engine.history import Action
    >>> crash = lambda source, domain: History(domain, (Action("crash", {"at": source.integer(0, 9)}),))
    >>> prop = Run(directed={"crash": crash, "restart after a crash": crash, "not required": crash})
    >>> suite = Run(required_in=lambda domains: ("crash", "restart after a crash"))
    >>> [h.actions[0].args for h in directed_histories(Run(prop=prop, suite=suite, domain="total", seed=0))]
    [{'at': 6}]
    """
    required = set(run.suite.required_in((run.domain,)))
    drawn: dict[str, History] = {}
    for event, draw in sorted(run.prop.directed.items()):
        if event in required:
            history = draw(RecordingSource(random.Random(run.seed)), run.domain)
            drawn.setdefault(history.key, history)
    return list(drawn.values())


def directed_lane(run: Run) -> PropertyResult:
    """The directed histories (`directed_histories`), checked in one call before any drawn at random.

    They were drawn for a hard case, not through the property's generator, so a failure among them
    shrinks by delta debugging over its actions (`reduced`), not through its choices.
    """
    started, histories = time.perf_counter(), directed_histories(run)
    events = Counter(e for h in histories for e in events_of(run.prop.events, h))
    outcomes = run.check(histories)
    checked = [(h, o) for h, o in zip(histories, outcomes) if o is not UNCHECKED]
    run.report(len(checked))
    failure = None
    failing = [(h, o) for h, o in checked if not o.ok and not o.unresolved]
    if failing:
        history, outcome = min(failing, key=lambda pair: len(pair[0].actions))
        run.announce(history, outcome, "directed", FOUND)
        together = outcome.together
        failure = (
            shrink_group(run, history, outcome, "directed")
            if together
            else reduced(run, history, outcome, "directed")
        )
    seconds, rejected = time.perf_counter() - started, sum(o.rejected for _, o in checked)
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, len(checked), seconds, events, rejected, failure
    )


def _screens_first(run: Run) -> bool:
    return run.profile.screen_first and run.impl.speed is Speed.BATCHED


def shrinking_lane(run: Run) -> PropertyResult:
    """Hypothesis draws small batches until one fails; that history is shrunk as a screened one is.

    Hypothesis generates (its coverage-guided search, its database of past
    failures) but does not shrink: its shrinker calls the implementation once per
    candidate, where the harness's shrinker (`shrink_failure`: the history's
    recorded choices, then delta debugging over its actions) checks hundreds of
    candidates in one batched call, within the profile's `shrink_seconds`. So a
    counterexample is as small, and as quickly had, in either lane.
    """
    tally = {"examples": 0, "rejected": 0}
    events: Counter[str] = Counter()
    found: dict[str, Any] = {}

    def one_batch(batch: list[tuple[History, list[int]]]) -> None:
        if "abort" in found:
            raise found["abort"]
        if "failure" in found:  # Hypothesis replays the failing example once to report it
            raise AssertionError(found["failure"][2].message)
        histories = [history for history, _ in batch]
        for h in histories:
            for label in run.prop.events(h):
                events[label] += 1
                hypothesis.event(label)
        try:
            outcomes = run.check(histories)
        except (InfrastructureError, ContractViolation) as exc:  # never shrunk: no history is to blame
            found["abort"] = exc
            raise
        tally["examples"] += len(histories)
        tally["rejected"] += sum(o.rejected for o in outcomes)
        run.report(len(histories))
        bad = smallest_failing([choices for _, choices in batch], outcomes)
        if bad is not None:
            run.announce(histories[bad], outcomes[bad], "shrinking", FOUND)
            found["failure"] = (histories[bad], batch[bad][1], outcomes[bad])
            if outcomes[bad].rejected:  # a generator/model disagreement, not a wrong answer
                raise GeneratorModelDisagreement(outcomes[bad].message)
            raise AssertionError(outcomes[bad].message)

    database = example_database(run)
    test = given(drawn_batch(run))(settings(_hypothesis_settings(run.profile, database))(one_batch))
    if database is None:  # seeded as the screening lane is (`hypothesis.seed` drops a database)
        test = hypothesis.seed(run.seed)(test)
    started = time.perf_counter()
    try:
        test()
    except Exception:
        if "abort" in found:
            raise found["abort"] from None
        if "failure" not in found:
            raise
    failure = None
    if "failure" in found:
        history, choices, outcome = found["failure"]
        failure = shrink_failure(run, history, choices, outcome, "shrinking")
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


def drawn_batch(run: Run) -> st.SearchStrategy[list[tuple[History, list[int]]]]:
    """Up to the profile's `batch_size` histories of `run`'s property, each with its recorded choices.

    Drawn in a composite, not through `st.data()`: `data.draw` wraps every draw in a check that the
    strategy left `random` alone (two copies of its state), and our generators draw one integer at a
    time. Measured on 2 cores, 300 integers an example: 4.9 s for 200 examples through `data.draw`,
    2.1 s in a composite; the model's Hypothesis lanes of `check --profile ci` spent about a third of
    their time in that check.
    """

    def draw(draw_one: Callable[[Any], Any]) -> list[tuple[History, list[int]]]:
        count = HypothesisSource(draw_one).integer(1, run.profile.batch_size)
        sources = [HypothesisSource(draw_one) for _ in range(count)]
        return [(run.draw(source), source.choices) for source in sources]

    return st.composite(draw)()


def _hypothesis_settings(profile: Profile, database: ExampleDatabase | None) -> settings:
    """The lane's Hypothesis settings, with the property's own example database if it keeps one
    (`example_database`). Never Hypothesis's `derandomize`: it seeds from the source text of the lane's
    function (`one_batch`, one for every property), so any edit of it changed a derandomized run's draws;
    the run's seed fixes them instead."""
    return settings(
        max_examples=profile.max_examples,
        database=database,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],  # the harness shrinks
    )


def example_database(run: Run) -> ExampleDatabase | None:
    """The profile's example database for this property and domain, a directory of its own (none: the
    profile keeps none, or is derandomized: a fixed run replays nothing, as with Hypothesis's `derandomize`).

    A database run draws with Hypothesis's own randomness (a seed would drop the database) and replays
    what earlier runs found: `thorough`'s nightly search. Hypothesis keys a database by the test function,
    and the lane's is one for every property: in one directory, each replayed every other one's examples.

    >>> from types import SimpleNamespace as Run
    >>> nightly = Run(profile=Run(database="db", derandomize=False), label="laws.join[total]")
    >>> example_database(nightly).path.as_posix()
    'db/laws.join[total]'
    >>> example_database(Run(profile=Run(database="db", derandomize=True), label="laws.join[total]")) is None
    True
    """
    if not run.profile.database or run.profile.derandomize:
        return None
    return DirectoryBasedExampleDatabase(os.path.join(run.profile.database, run.label))


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
            events.update(events_of(run.prop.events, h))
        outcomes = run.check(histories)
        ran = sum(o is not UNCHECKED for o in outcomes)  # what the verdict rests on
        checked += ran
        rejected += sum(o.rejected for o in outcomes)
        run.report(ran)
        bad = smallest_failing([source.choices for source in sources], outcomes)
        if bad is not None:
            run.announce(histories[bad], outcomes[bad], "screening", FOUND)
            failure = shrink_failure(run, histories[bad], sources[bad].choices, outcomes[bad], "screening")
            return PropertyResult(
                run.suite.name, run.prop.name, run.domain, checked, time.perf_counter() - started, events,
                rejected, failure,
            )  # fmt: skip
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, checked, time.perf_counter() - started, events, rejected
    )


# What a `Tick` calls each lane (the progress display shows it).
LANE_NAMES: dict[Callable[[Run], PropertyResult], str] = {
    directed_lane: "directed",
    shrinking_lane: "hypothesis",
    screening_lane: "screening",
}


def smallest_failing(choices: Sequence[list[int]], outcomes: Sequence[Outcome]) -> int | None:
    """The index of the failing outcome whose history was drawn from the fewest choices (shortlex), None
    if none failed: shrinking starts from the smallest failure a batch found, not from the first; a failure
    of one history before one only together with others (`Outcome.together`).

    Measured on a planted summary bug (`tests/test_suite_summary.py`, 200 screened histories): from the
    first failure, 28 Spark jobs (50 s) to shrink it to 4 actions; from the smallest, 12 jobs (21 s), to 2.

    >>> from types import SimpleNamespace as O
    >>> ok, bad = O(ok=True, unresolved=False, together=()), O(ok=False, unresolved=False, together=())
    >>> smallest_failing([[5, 1], [3], [2, 0], [1]], [bad, ok, bad, ok])
    2
    """
    failing = [i for i, o in enumerate(outcomes) if not o.ok and not o.unresolved]
    return min(failing, key=lambda i: (bool(outcomes[i].together), len(choices[i]), choices[i]), default=None)


def shrink_failure(
    run: Run, history: History, choices: list[int], outcome: Outcome, lane: str
) -> Counterexample:
    """A failing history made minimal, found in `lane`: its choices shrunk, then its actions delta-debugged
    (a failure only together with other histories: `shrink_group`).

    Both work with the implementation in the loop, one batched call per pass, and
    stop when the run's shrink budget is spent, keeping the smallest failure so far.
    A candidate counts only if it fails the same way, alone: a wrong answer is never
    shrunk to a history the model rejects (removing actions can make one). Each
    smaller failure is announced (`SHRUNK`) as it is found.
    """
    if outcome.together:
        return shrink_group(run, history, outcome, lane)
    run.budget.start()
    judge = _SameFailure(run, outcome, lane)

    def choices_fail(candidates: Sequence[list[int]]) -> list[bool]:
        return judge([run.draw(ReplaySource(c)) for c in candidates])

    def improved(better: list[int]) -> None:
        judge.announce(run.draw(ReplaySource(better)))

    shrunk = shrink_choices(choices, choices_fail, run.budget.exhausted, improved, run.suite.shrink_batch)
    smallest = run.draw(ReplaySource(shrunk))
    return reduced(run, smallest, judge.outcome_of(smallest), lane, judge)


def shrink_group(run: Run, history: History, outcome: Outcome, lane: str) -> Counterexample:
    """A failure only together (`Outcome.together`) made minimal as a group: first the fewest of its
    histories that still fail together, then each one's actions delta-debugged with the others fixed.

    Each candidate group is checked in a call of its own (two groups in one call could interfere with
    each other); it still fails when it fails only together again, the same way (`_GroupFails`).
    """
    run.budget.start()
    judge = _GroupFails(run, outcome, lane)
    group = judge.fewest(history, outcome.together)
    for i in range(len(group)):
        smaller = reduce_history(group[i], _member_fails(judge, group, i), run.budget.exhausted, batch=1)
        group = (*group[:i], smaller, *group[i + 1 :])
    carrier = judge.outcome_of(group)
    return run.counterexample(group[0], carrier, lane)


def _member_fails(
    judge: _GroupFails, group: tuple[History, ...], i: int
) -> Callable[[Sequence[History]], list[bool]]:
    """Whether each candidate for the group's history `i` still fails together with the others."""
    return lambda candidates: [judge((*group[:i], c, *group[i + 1 :])) for c in candidates]


class _GroupFails:
    """Which candidate groups fail only together as the original did: one call each, every history of it
    holding alone but the first, which carries the failure of them all (`batch._together`), of the
    original's kind. Each is announced (`SHRUNK`: the file is rewritten when it is smaller)."""

    def __init__(self, run: Run, outcome: Outcome, lane: str):
        self.run, self.outcome, self.lane = run, outcome, lane
        self.failures: dict[tuple[str, ...], Outcome] = {}

    def __call__(self, group: tuple[History, ...]) -> bool:
        with shared_observations():  # observed afresh, together: each alone may be remembered as held
            carrier, *others = self.run.check(list(group))
        same = (
            len(carrier.together) == len(group) - 1
            and all(o.ok for o in others)
            and _kind(carrier) == _kind(self.outcome)
        )
        if same:
            self.failures[_key(group)] = carrier
            self.run.announce(group[0], carrier, self.lane, SHRUNK)
        return same

    def fewest(self, history: History, others: tuple[History, ...]) -> tuple[History, ...]:
        """The fewest histories of the group (two at least) that still fail together: delta debugging over
        its members, halves first, then single ones."""
        group = (history, *others)
        self.failures[_key(group)] = self.outcome
        shrunk = True
        while shrunk and len(group) > 2 and not self.run.budget.exhausted():
            shrunk = False
            for span in spans(len(group)):
                candidate = tuple(h for i, h in enumerate(group) if i not in span)
                if len(candidate) >= 2 and self(candidate):
                    group, shrunk = candidate, True
                    break
                if self.run.budget.exhausted():
                    break
        return group

    def outcome_of(self, group: tuple[History, ...]) -> Outcome:
        return self.failures.get(_key(group), self.outcome)


def _key(group: Sequence[History]) -> tuple[str, ...]:
    return tuple(h.key for h in group)


def reduced(
    run: Run, history: History, outcome: Outcome, lane: str, judge: _SameFailure | None = None
) -> Counterexample:
    """The failure delta-debugged over its actions (`reduce_history`) within the run's shrink budget;
    every lane's failures end here, so a counterexample is as small in one lane as in another."""
    run.budget.start()
    judge = judge or _SameFailure(run, outcome, lane)
    judge.failures.setdefault(history.key, outcome)
    smallest = reduce_history(history, judge, run.budget.exhausted, judge.announce, run.suite.shrink_batch)
    return run.counterexample(smallest, judge.outcome_of(smallest), lane)


class _SameFailure:
    """Which candidates fail as the original did (`StillFails`), remembering each failure's outcome so a
    smaller one is announced with what both sides said, without another call."""

    def __init__(self, run: Run, outcome: Outcome, lane: str):
        self.run, self.outcome, self.lane = run, outcome, lane
        self.failures: dict[str, Outcome] = {}

    def __call__(self, histories: Sequence[History]) -> list[bool]:
        verdicts = []
        for history, o in zip(histories, self.run.check(histories)):
            same = not o.ok and _kind(o) == _kind(self.outcome) and not o.unresolved and not o.together
            if same:
                self.failures[history.key] = o
            verdicts.append(same)
        return verdicts

    def outcome_of(self, history: History) -> Outcome:
        return self.failures.get(history.key, self.outcome)

    def announce(self, history: History) -> None:
        self.run.announce(history, self.outcome_of(history), self.lane, SHRUNK)


def _kind(outcome: Outcome) -> tuple[bool, str | None, str | None]:
    """How an outcome fails: a rejection or not, the exception's type if one was raised, and the label
    of the first divergence (a wrong answer never shrinks into a crash, nor into a wrong answer about
    something else: the shrunk history shows the same discrepancy)."""
    error = type(outcome.error).__name__ if outcome.error is not None else None
    return outcome.rejected, error, _divergent_label(outcome)


def _divergent_label(outcome: Outcome) -> str | None:
    expected, actual = outcome.expected, outcome.actual
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        return None
    differing = sorted((k for k in set(expected) | set(actual) if expected.get(k) != actual.get(k)), key=repr)
    labels = [str(k[1]) for k in differing if isinstance(k, tuple) and len(k) == 2 and k[0] == outcome.step]
    named = [label for label in labels if outcome.message.startswith(label)]  # the one the message names
    return next(iter(named or labels), None)
