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
from frontier_harness.properties.engine.failure_kind import failure_kind
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.reduce import reduce_history
from frontier_harness.properties.engine.run import SHRUNK, Run
from frontier_harness.properties.engine.shrink import shrink_choices
from frontier_harness.properties.engine.source import ReplaySource
from frontier_harness.properties.engine.suite import Outcome, shared_observations
from frontier_harness.properties.engine.together import shrink_interference


def shrink_failure(
    run: Run,
    history: History,
    choices: list[int],
    outcome: Outcome,
    lane: str,
    call: Sequence[History] = (),
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
    return reduced(run, smallest, judge.outcome_of(smallest), lane, judge, found=history, call=call)


def reduced(
    run: Run,
    history: History,
    outcome: Outcome,
    lane: str,
    judge: SameFailure | None = None,
    found: History | None = None,
    call: Sequence[History] = (),
) -> Counterexample:
    """The failure delta-debugged over its actions (`reduce_history`) within the run's shrink budget;
    every lane's failures end here, so a counterexample is as small in one lane as in another. A result
    that holds alone is delta-debugged again from the failure as `found`, one candidate a call (`_alone`).
    `call`: the histories checked in the call that found it, in its order."""
    run.budget.start()
    judge = judge or SameFailure(run, outcome, lane)
    judge.failures.setdefault(history.key, outcome)
    smallest = reduce_history(
        history, judge, run.budget.exhausted, judge.announce, run.suite.shrink_batch, run.budget.tally
    )
    if smallest is not history or found is not None or len(call) > 1:
        with shared_observations():  # observed afresh: the run's memo holds what a shared call observed
            if not judge([smallest])[0]:
                return _alone(run, judge, found or history, smallest, call, lane)
    return run.counterexample(smallest, judge.outcome_of(smallest), lane)


def _alone(
    run: Run, judge: SameFailure, start: History, held: History, call: Sequence[History], lane: str
) -> Counterexample:
    """A failure kept that holds alone (`held`): delta-debugged again from `start`, one candidate a call.
    When none fails alone and `start` holds alone as well, it showed only together with the other histories
    of its `call`: made minimal as a group of them (`together.shrink_interference`)."""
    smallest = reduce_history(start, judge, run.budget.exhausted, judge.announce, 1, run.budget.tally)
    if smallest is start and len(call) > 1 and (start is held or not judge([start])[0]):
        group = shrink_interference(run, judge.outcome, call, lane)
        if group is not None:
            return group
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
