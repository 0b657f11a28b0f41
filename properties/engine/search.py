"""The search lanes: how a run looks for a failing history of one property on one domain.

- `directed`: the property's directed histories, one small history per required hard case, checked
  in one call before any drawn at random (`Property.directed`);
- `hypothesis`: one Hypothesis example is a small batch of histories checked in one implementation
  call (one Spark job); Hypothesis generates (its coverage-guided search, its database), the harness
  shrinks;
- `screening`: histories drawn by the same generators from a seeded `random` source, thousands a call.

A lane's failure is made minimal (`frontier_harness.properties.engine.minimal`; a failure that shows
only together with other histories, `frontier_harness.properties.engine.together`), within the run's
shrink budget. The name of the lane that found it is written in its counterexample file (`lane`).
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Speed
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.minimal import reduced, shrink_failure
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.results import HISTORIES, TRIALS, PropertyResult
from frontier_harness.properties.engine.run import FOUND, Run
from frontier_harness.properties.engine.source import HypothesisSource, RecordingSource
from frontier_harness.properties.engine.stop import Stopped
from frontier_harness.properties.engine.suite import Outcome, events_of
from frontier_harness.properties.engine.together import shrink_group
from frontier_harness.properties.engine.trials import UNCHECKED

DIRECTED, HYPOTHESIS, SCREENING = "directed", "hypothesis", "screening"  # the lanes, by name


class GeneratorModelDisagreement(AssertionError):
    """A generated history the model rejected (its own exception, so Hypothesis reports it as what it is)."""


def run_property(run: Run) -> PropertyResult:
    """Both lanes, in the profile's order; the second runs only if the first passed.

    Screen first (the `ci` and `thorough` profiles against a batched
    implementation): thousands of histories a job, Hypothesis never called on
    the implementation, a failure shrunk through its choices. Otherwise the
    Hypothesis lane first, then the screening lane. A lane that `--fail-fast` ends (`Stopped`: another lane
    failed first) ends the run "stopped (fail-fast)", with the count it had checked (`stopped`).
    """
    started = time.perf_counter()
    lanes = [screening_lane] if _screens_first(run) else [hypothesis_lane, screening_lane]
    lanes = [lane for lane in lanes if lane is hypothesis_lane or run.profile.screening_histories > 0]
    if directed_histories(run):
        lanes = [directed_lane, *lanes]
    results: list[PropertyResult] = []
    try:
        for i, lane in enumerate(lanes):
            run.tally.total = run.tally.done + _expected(run, lanes[i:])
            run.tally.lane = LANE_NAMES[lane]
            run.tick()
            results.append(lane(run))
            if results[-1].failure is not None:
                break
    except Stopped:
        return stopped(run, results, time.perf_counter() - started)
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
        unit=TRIALS if run.tally.trials else HISTORIES,
        required=required_here(run),
    )


def stopped(run: Run, results: Sequence[PropertyResult], seconds: float) -> PropertyResult:
    """A run `--fail-fast` ended: the histories (or trials) it had checked, of the most it would have."""
    unit = TRIALS if run.tally.trials else HISTORIES
    checked, total = run.tally.checked, max(run.tally.total, run.tally.checked)
    return PropertyResult(
        run.suite.name,
        run.prop.name,
        run.domain,
        checked,
        seconds,
        sum((r.events for r in results), Counter[str]()),
        sum(r.rejected for r in results),
        unit=unit,
        required=required_here(run),
        stopped=f"after {checked} of {total} {unit}: another lane failed first",
    )


def required_here(run: Run) -> tuple[str, ...]:
    """The hard cases the suite requires in the run's domain (`results.unreached` judges them)."""
    d = run.domain
    return tuple(e for e in run.suite.required_in((d,)) if d in run.suite.event_domains.get(e, (d,)))


def _expected(run: Run, lanes: Sequence[Callable[[Run], PropertyResult]]) -> int:
    """Histories `lanes` check at most: a Hypothesis example is a batch of up to `batch_size`."""
    profile = run.profile
    hypothesis = profile.max_examples * profile.batch_size if hypothesis_lane in lanes else 0
    directed = len(directed_histories(run)) if directed_lane in lanes else 0
    return directed + hypothesis + (profile.screening_histories if screening_lane in lanes else 0)


def directed_histories(run: Run) -> list[History]:
    """The property's directed histories (`Property.directed`) for the hard cases required in the run's
    domain, each drawn from a source seeded by the run's seed alone (the same histories every run of a
    seed), a history directed at two cases checked once; the shortest first (the cheapest trials answer
    first: a wave that fails stops the lane), ties in the order of their cases' names.

    >>> from types import SimpleNamespace as Run
    >>> from frontier_harness.properties.engine.history import Action
    >>> crash = lambda source, domain: History(domain, (Action("crash", {"at": source.integer(0, 9)}),))
    >>> long = lambda source, domain: History(domain, (Action("produce", {}), Action("crash", {})))
    >>> prop = Run(directed={"crash": crash, "restart after a crash": crash, "a long one": long, "not required": crash})
    >>> suite = Run(required_in=lambda domains: ("crash", "restart after a crash", "a long one"))
    >>> [h.actions[0] for h in directed_histories(Run(prop=prop, suite=suite, domain="total", seed=0))]
    [Action(name='crash', args={'at': 6}), Action(name='produce', args={})]
    """
    required = set(run.suite.required_in((run.domain,)))
    drawn: dict[str, History] = {}
    for event, draw in sorted(run.prop.directed.items()):
        if event in required:
            history = draw(RecordingSource(random.Random(run.seed)), run.domain)
            drawn.setdefault(history.key, history)
    return sorted(drawn.values(), key=lambda history: len(history.actions))


def directed_lane(run: Run) -> PropertyResult:
    """The directed histories (`directed_histories`), checked in one call before any drawn at random.

    They were drawn for a hard case, not through the property's generator, so a failure among them
    shrinks by delta debugging over its actions (`reduced`), not through its choices.
    """
    started, histories = time.perf_counter(), directed_histories(run)
    outcomes = run.check(histories)
    events = Counter(e for h, o in zip(histories, outcomes) for e in reached(run, h, o))
    checked = [(h, o) for h, o in zip(histories, outcomes) if o is not UNCHECKED]
    run.report(len(checked))
    failure = None
    failing = [(h, o) for h, o in checked if not o.ok and not o.unresolved]
    if failing:
        history, outcome = min(failing, key=lambda pair: len(pair[0].actions))
        run.announce(history, outcome, DIRECTED, FOUND)
        together = outcome.together
        failure = (
            shrink_group(run, history, outcome, DIRECTED)
            if together
            else reduced(run, history, outcome, DIRECTED, call=histories)
        )
    seconds, rejected = time.perf_counter() - started, sum(o.rejected for _, o in checked)
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, len(checked), seconds, events, rejected, failure
    )


def reached(run: Run, history: History, outcome: Outcome) -> list[str]:
    """The hard cases `history` reached when checked: those its outcome says the observation showed
    (`Outcome.reached`), else those `Property.events` reads from the history; none for a history that did
    not run to an observation: not checked (`UNCHECKED`), or failing as one the model rejected (never run)
    or whose check raised (what it reached before is not known). Bad input drawn on purpose that both
    sides rejected (`Outcome.both_rejected`) ran, and held.

    >>> from types import SimpleNamespace as Run
    >>> run = Run(prop=Run(events=lambda h: ["drawn"]))
    >>> h = History("total", ())
    >>> reached(run, h, Outcome(ok=True)), reached(run, h, Outcome(ok=True, reached=("seen",)))
    (['drawn'], ['seen'])
    >>> reached(run, h, UNCHECKED), reached(run, h, Outcome.implementation_raised(KeyError("k"), ()))
    ([], [])
    >>> reached(run, h, Outcome(ok=True, rejected=True))  # both sides rejected bad input drawn on purpose
    ['drawn']
    """
    if outcome.unresolved or (not outcome.ok and (outcome.rejected or outcome.error is not None)):
        return []
    if outcome.reached is not None:
        return list(outcome.reached)
    return events_of(run.prop.events, history)


def _screens_first(run: Run) -> bool:
    return run.profile.screen_first and run.impl.speed is Speed.BATCHED


def hypothesis_lane(run: Run) -> PropertyResult:
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
        try:
            outcomes = run.check(histories)
        except (InfrastructureError, HarnessError) as exc:  # never shrunk: no history is to blame
            found["abort"] = exc
            raise
        for h, o in zip(histories, outcomes):
            for label in reached(run, h, o):
                events[label] += 1
                hypothesis.event(label)
        ran = _ran(outcomes)
        tally["examples"] += ran
        tally["rejected"] += sum(o.rejected for o in outcomes)
        run.report(ran)
        bad = smallest_failing([choices for _, choices in batch], outcomes)
        if bad is not None:
            run.announce(histories[bad], outcomes[bad], HYPOTHESIS, FOUND)
            found["failure"] = (histories[bad], batch[bad][1], outcomes[bad], histories)
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
        history, choices, outcome, call = found["failure"]
        failure = minimal_failure(run, history, choices, outcome, HYPOTHESIS, call)
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
    """Histories from a seeded `random` source, thousands a call (a first short one: `Profile.screening_call`);
    a failure shrinks with the implementation."""
    rng, events = random.Random(run.seed), Counter[str]()
    checked = rejected = 0
    started = time.perf_counter()
    profile = run.profile
    calls = 0
    while checked < profile.screening_histories:
        count = min(profile.screening_call(calls == 0), profile.screening_histories - checked)
        calls += 1
        sources = [RecordingSource(rng) for _ in range(count)]
        histories = [run.draw(source) for source in sources]
        outcomes = run.check(histories)
        for h, o in zip(histories, outcomes):
            events.update(reached(run, h, o))
        ran = _ran(outcomes)
        checked += ran
        rejected += sum(o.rejected for o in outcomes)
        run.report(ran)
        bad = smallest_failing([source.choices for source in sources], outcomes)
        if bad is not None:
            run.announce(histories[bad], outcomes[bad], SCREENING, FOUND)
            failure = minimal_failure(
                run, histories[bad], sources[bad].choices, outcomes[bad], SCREENING, histories
            )
            return PropertyResult(
                run.suite.name, run.prop.name, run.domain, checked, time.perf_counter() - started, events,
                rejected, failure,
            )  # fmt: skip
    return PropertyResult(
        run.suite.name, run.prop.name, run.domain, checked, time.perf_counter() - started, events, rejected
    )


# Each lane's name: what a `Tick` (the progress display) and a counterexample file (`lane`) call it.
LANE_NAMES: dict[Callable[[Run], PropertyResult], str] = {
    directed_lane: DIRECTED,
    hypothesis_lane: HYPOTHESIS,
    screening_lane: SCREENING,
}


def minimal_failure(
    run: Run,
    history: History,
    choices: list[int],
    outcome: Outcome,
    lane: str,
    call: Sequence[History] = (),
) -> Counterexample:
    """A failure found in `lane` in a `call` of histories made minimal: through its choices
    (`minimal.shrink_failure`), or as a group when it shows only together with other histories of its call
    (a batch that raised, `together.shrink_group`; a wrong answer it does not give alone,
    `together.shrink_interference`)."""
    if outcome.together:
        return shrink_group(run, history, outcome, lane)
    return shrink_failure(run, history, choices, outcome, lane, call)


def _ran(outcomes: Sequence[Outcome]) -> int:
    """How many of a call's histories were checked (not `UNCHECKED`): what a verdict rests on."""
    return sum(o is not UNCHECKED for o in outcomes)


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
