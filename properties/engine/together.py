"""A failure that shows only together with other histories of its call, made minimal as a group: the
fewest histories that still fail together, then each one's actions delta-debugged.

Two kinds: a batch that raises while each half holds (`Outcome.together`,
`frontier_harness.properties.engine.batch`: `shrink_group`), and a wrong answer a history gave in its call
but not when checked again alone (`shrink_interference`: an implementation that caches an answer by a
datum, not by history, answers a second history with the first's). A group keeps its call's order, which
its file keeps: history 0 first."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.failure_kind import failure_kind
from frontier_harness.properties.engine.history import History
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
    group = _minimal_group(run, judge, judge.fewest(history, outcome.together))
    return run.counterexample(group[0], judge.outcome_of(group), lane)


def shrink_interference(
    run: Run, outcome: Outcome, call: Sequence[History], lane: str
) -> Counterexample | None:
    """A failure (`outcome`) a history showed in `call` but not alone, made minimal as a group of that
    call's histories, in its order (`_WrongTogether`); None when the call, checked again, does not fail
    that way (it did not show again: nothing to name as a group). The history that fails in the minimal
    group is checked alone once more: failing there, it is the counterexample, alone."""
    run.budget.start()
    judge = _WrongTogether(run, outcome, lane)
    if not judge(tuple(call)):
        return None
    group = _minimal_group(run, judge, judge.fewest(call[0], tuple(call[1:])))
    member = group[judge.wrong[_key(group)]]
    with shared_observations():  # observed afresh, alone
        (alone,) = run.check([member])
    if not alone.ok and failure_kind(alone) == failure_kind(outcome):
        return run.counterexample(member, alone, lane)
    return run.counterexample(group[0], judge.outcome_of(group), lane)


def _minimal_group(run: Run, judge: _GroupFails, group: tuple[History, ...]) -> tuple[History, ...]:
    """`group` (its fewest histories) with each one's actions delta-debugged, the others fixed."""
    for i in range(len(group)):
        still_fails = _member_fails(judge, group, i)
        smaller = reduce_history(group[i], still_fails, run.budget.exhausted, batch=1, tally=run.budget.tally)
        group = (*group[:i], smaller, *group[i + 1 :])
    return group


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
            outcomes = self.run.check(list(group))
        carrier = self._carrier(group, outcomes)
        if carrier is not None:
            self.failures[_key(group)] = carrier
            self.run.announce(group[0], carrier, self.lane, SHRUNK)
        return carrier is not None

    def _carrier(self, group: tuple[History, ...], outcomes: Sequence[Outcome]) -> Outcome | None:
        """The group's failure, carried by its first history; None when it does not fail as the original."""
        carrier, *others = outcomes
        same = (
            len(carrier.together) == len(group) - 1
            and all(o.ok for o in others)
            and failure_kind(carrier) == failure_kind(self.outcome)
        )
        return carrier if same else None

    def fewest(self, history: History, others: tuple[History, ...]) -> tuple[History, ...]:
        """The fewest histories of the group (two at least) that still fail together: delta debugging over
        its members, halves first, then single ones."""
        group = (history, *others)
        self.failures.setdefault(_key(group), self.outcome)
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


class _WrongTogether(_GroupFails):
    """Which candidate groups give, in one call in their order, a wrong answer of the original's kind in
    some history (the first such): carried by the group's first history, naming the one that gave it. Its
    two sides are dropped, since they are that history's, not the first's: the message keeps the
    divergence.

    >>> from types import SimpleNamespace as Run
    >>> wrong = Outcome(ok=False, message="read at step 0: model {} != (nothing)")
    >>> judge, a, b = _WrongTogether(Run(), wrong, "screening"), History("total", ()), History("total", ())
    >>> judge._carrier((a, b), [Outcome(ok=True), wrong]).message.split("; ")
    ['history 1 of 2 in one call: read at step 0: model {} != (nothing)', 'alone it holds: they interfere']
    >>> judge._carrier((a, b), [Outcome(ok=True), Outcome(ok=True)]) is None
    True
    """

    def __init__(self, run: Run, outcome: Outcome, lane: str):
        super().__init__(run, outcome, lane)
        self.wrong: dict[tuple[str, ...], int] = {}  # each failing group's history that failed

    def _carrier(self, group: tuple[History, ...], outcomes: Sequence[Outcome]) -> Outcome | None:
        kind = failure_kind(self.outcome)
        wrong = next(
            (i for i, o in enumerate(outcomes) if not o.ok and not o.unresolved and failure_kind(o) == kind),
            None,
        )
        if wrong is None:
            return None
        self.wrong[_key(group)] = wrong
        said = outcomes[wrong].message
        note = f"history {wrong} of {len(group)} in one call: {said}; alone it holds: they interfere"
        return attrs.evolve(
            outcomes[wrong], message=note, together=group[1:], expected=None, actual=None, step=None
        )


def _key(group: Sequence[History]) -> tuple[str, ...]:
    return tuple(h.key for h in group)
