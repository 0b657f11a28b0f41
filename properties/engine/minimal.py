"""A failure made minimal, with the implementation in the loop: its recorded choices shrunk
(`frontier_harness.properties.engine.shrink`), then its actions delta-debugged
(`frontier_harness.properties.engine.reduce`), one batched call per pass, within the run's shrink budget
(`frontier_harness.properties.engine.budget`: a count of implementation calls under `ci`). A candidate
counts only if it fails the same way (`failure_kind`), and the failure kept fails alone: candidates share a
call, and where an implementation's histories share more than the call (ttl_spark_state's run in lockstep on
one query, a restart of one a restart of all), a candidate may fail only beside the others of its call. The
kept failure is checked once more alone, and when it holds there, the actions are delta-debugged again one
candidate a call."""

from __future__ import annotations

from collections.abc import Sequence

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.reduce import reduce_history
from frontier_harness.properties.engine.run import SHRUNK, Run
from frontier_harness.properties.engine.shrink import shrink_choices
from frontier_harness.properties.engine.source import ReplaySource
from frontier_harness.properties.engine.suite import Outcome, shared_observations


def shrink_failure(
    run: Run, history: History, choices: list[int], outcome: Outcome, lane: str
) -> Counterexample:
    """A failing history made minimal, found in `lane`: its choices shrunk, then its actions delta-debugged
    (a failure only together with other histories is `together.shrink_group`'s).

    Both work with the implementation in the loop, one batched call per pass, and
    stop when the run's shrink budget is spent, keeping the smallest failure so far.
    A candidate counts only if it fails the same way, alone: a wrong answer is never
    shrunk to a history the model rejects (removing actions can make one). Each
    smaller failure is announced (`SHRUNK`) as it is found.
    """
    run.budget.start()
    judge = SameFailure(run, outcome, lane)

    def choices_fail(candidates: Sequence[list[int]]) -> list[bool]:
        return judge([run.draw(ReplaySource(c)) for c in candidates])

    def improved(better: list[int]) -> None:
        judge.announce(run.draw(ReplaySource(better)))

    shrunk = shrink_choices(
        choices, choices_fail, run.budget.exhausted, improved, run.suite.shrink_batch, run.budget.tally
    )
    smallest = run.draw(ReplaySource(shrunk))
    return reduced(run, smallest, judge.outcome_of(smallest), lane, judge, found=history)


def reduced(
    run: Run,
    history: History,
    outcome: Outcome,
    lane: str,
    judge: SameFailure | None = None,
    found: History | None = None,
) -> Counterexample:
    """The failure delta-debugged over its actions (`reduce_history`) within the run's shrink budget;
    every lane's failures end here, so a counterexample is as small in one lane as in another. A result
    that holds alone is delta-debugged again from the failure as `found`, one candidate a call."""
    run.budget.start()
    judge = judge or SameFailure(run, outcome, lane)
    judge.failures.setdefault(history.key, outcome)
    smallest = reduce_history(
        history, judge, run.budget.exhausted, judge.announce, run.suite.shrink_batch, run.budget.tally
    )
    if smallest is not history or found is not None:
        with shared_observations():  # observed afresh: the run's memo holds what a shared call observed
            if not judge([smallest])[0]:
                start = found or history
                smallest = reduce_history(
                    start, judge, run.budget.exhausted, judge.announce, 1, run.budget.tally
                )
    return run.counterexample(smallest, judge.outcome_of(smallest), lane)


class SameFailure:
    """Which candidates fail as the original did (`StillFails`), remembering each failure's outcome so a
    smaller one is announced with what both sides said, without another call."""

    def __init__(self, run: Run, outcome: Outcome, lane: str):
        self.run, self.outcome, self.lane = run, outcome, lane
        self.failures: dict[str, Outcome] = {}

    def __call__(self, histories: Sequence[History]) -> list[bool]:
        verdicts = []
        for history, o in zip(histories, self.run.check(histories)):
            same = (
                not o.ok
                and failure_kind(o) == failure_kind(self.outcome)
                and not o.unresolved
                and not o.together
            )
            if same:
                self.failures[history.key] = o
            verdicts.append(same)
        return verdicts

    def outcome_of(self, history: History) -> Outcome:
        return self.failures.get(history.key, self.outcome)

    def announce(self, history: History) -> None:
        self.run.announce(history, self.outcome_of(history), self.lane, SHRUNK)


def failure_kind(outcome: Outcome) -> tuple[bool, str | None, str | None]:
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
