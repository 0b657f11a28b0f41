"""A failure that shows only together with other histories of its call (`Outcome.together`: a batch
that raises while each half holds, `frontier_harness.properties.engine.batch`), made minimal as a
group: the fewest histories that still fail together, then each one's actions delta-debugged."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.minimal import failure_kind
from frontier_harness.properties.engine.reduce import reduce_history, spans
from frontier_harness.properties.engine.run import SHRUNK, Run
from frontier_harness.properties.engine.suite import Outcome, shared_observations


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
        still_fails = _member_fails(judge, group, i)
        smaller = reduce_history(group[i], still_fails, run.budget.exhausted, batch=1, tally=run.budget.tally)
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
            and failure_kind(carrier) == failure_kind(self.outcome)
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
