"""Checking a batch of histories in one call, and blaming an exception on the histories that raise it.

A batched implementation computes many histories in one call, so a bug can live between
them: a join or a dedup that forgets `history_id`, a cache keyed by data instead of by
history. Such a batch raises while no history of it raises alone. That is a failure,
"only together": the smallest batch bisection meets that raises while both its halves
hold, named together (`Outcome.together`), shrunk and replayed as a group
(`frontier_harness.properties.engine.together.shrink_group`).

>>> from frontier_harness.properties.engine.history import Action
>>> from types import SimpleNamespace as Prop
>>> class Cache(Implementation):  # keyed by data: two histories with one datum collide in one call
...     name = "cache"
...     def observe(self, histories):
...         data = [a.args["data"] for h in histories for a in h.actions]
...         if len(data) != len(set(data)):
...             raise KeyError("a datum already cached")
...         return [Outcome(ok=True) for _ in histories]
>>> hs = [History("total", (Action("update", {"data": d}),)) for d in "abca"]
>>> outcomes = check_batch(Prop(check=lambda impl, hs: impl.observe(hs)), Cache(), hs)
>>> [o.ok for o in outcomes], len(outcomes[0].together)
([False, True, True, True], 3)
>>> outcomes[0].message
"implementation raised KeyError: 'a datum already cached'; it fails only together with histories 1, 2, 3 in one call: they interfere"
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import attrs

from frontier_harness.properties.engine.diagnostics import (
    infrastructure_reason,
    own_frames,
    raised_by,
    set_up,
)
from frontier_harness.properties.engine.errors import HISTORY_ERRORS, ContractViolation
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.suite import Outcome, Property, Suite
from frontier_harness.properties.engine.trials import UNCHECKED, Trials, fails

Heard = Callable[[Outcome], None]  # hears each trial's outcome as it comes (`Trials`)


def check_batch(
    prop: Property,
    impl: Implementation,
    histories: Sequence[History],
    suite: Suite | None = None,
    raised: Callable[[], None] | None = None,
    called: Callable[[], None] = lambda: None,
    heard: Heard | None = None,
) -> list[Outcome]:
    """`prop.check`, with an exception blamed on whoever raised it, on the histories that raise it.

    An infrastructure failure is retried once after `impl.recover()` (a flaky
    failure passes), then raised as `InfrastructureError`: never an outcome. A
    `ContractViolation` (an answer of the wrong shape) is raised as it is. A
    batch that raises anything else is bisected (`_bisect`, about 2*log2(n)
    calls for one bad history; `raised` is called first, so a lane can count
    the search against its shrink budget) and the history that raises is
    blamed (`_raised`), or the histories that raise only together. `called`
    hears of every implementation call, `heard` of each outcome a check hands over as its trial ends
    (`Trials`), as it comes.
    """
    attempt = functools.partial(_attempt, prop, impl, called=called)
    result = attempt(histories, heard=heard)
    if not isinstance(result, BaseException):
        return result
    if raised is not None:
        raised()
    return _bisect(functools.partial(attempt, heard=None), impl, histories, result, suite)[0]


def _bisect(
    attempt: Callable[[Sequence[History]], list[Outcome] | BaseException],
    impl: Implementation,
    histories: Sequence[History],
    exc: BaseException,
    suite: Suite | None,
) -> tuple[list[Outcome], bool]:
    """Outcomes for a batch that raised `exc`, and whether a failure was found before its end (a single
    history that raises alone, or a half's own failing outcome).

    The batch is split in halves and each checked in one call; the first half that
    raises is split again. Once one history is found to raise alone, or a half fails
    without raising (a trial suite's check stops at its first failing wave, before the
    history that raised; a candidate refused unrun is no failure: `trials.fails`), the
    histories after it are not checked (`UNCHECKED`: a lane reports the first failure),
    so one bad history costs at most 2*log2(n) calls. A
    batch that raises while neither half does, nor fails, fails only as a whole
    (`_together`). After such a failure the other half is still checked, in one call:
    its histories hold, or it raises too and is not searched (its histories
    `UNCHECKED`: searching every half that raises could cost a call for every few
    histories of the batch).
    """
    if len(histories) == 1:
        return [_raised(impl, exc, suite)], True
    mid = len(histories) // 2
    outcomes: list[Outcome] = []
    alone = half_raised = failed = False
    for half in (histories[:mid], histories[mid:]):
        if alone or failed:
            outcomes += [UNCHECKED] * len(half)
            continue
        result = attempt(half)
        if not isinstance(result, BaseException):
            outcomes += result
            failed = any(map(fails, result))
        elif half_raised:  # the first half failed only together: this one raises as well, not searched
            outcomes += [UNCHECKED] * len(half)
        else:
            searched, alone = _bisect(attempt, impl, half, result, suite)
            outcomes, half_raised = outcomes + searched, True
    if not half_raised and not failed:
        outcomes = _together(histories, outcomes, _raised(impl, exc, suite))
    return outcomes, alone or failed


def _together(histories: Sequence[History], outcomes: list[Outcome], raised: Outcome) -> list[Outcome]:
    """A batch that raised while both its halves held: its first history that held carries the failure,
    naming the others (numbered as in its counterexample file: it is history 0)."""
    first = next((i for i, o in enumerate(outcomes) if o.ok), None)
    if first is None:  # every history already failed alone: those failures are the report
        return outcomes
    others = tuple(h for i, h in enumerate(histories) if i != first)
    note = f"; it fails only together with {numbered(len(others))} in one call: they interfere"
    failed = [*outcomes]
    failed[first] = attrs.evolve(raised, message=raised.message + note, together=others)
    return failed


def numbered(others: int) -> str:
    """The other histories of a group, as its file numbers them.

    >>> numbered(1), numbered(3)
    ('history 1', 'histories 1, 2, 3')
    """
    if others == 1:
        return "history 1"
    return "histories " + ", ".join(str(i) for i in range(1, others + 1))


def _attempt(
    prop: Property,
    impl: Implementation,
    histories: Sequence[History],
    called: Callable[[], None],
    heard: Heard | None,
    retry: bool = True,
) -> list[Outcome] | BaseException:
    """The outcomes, or the exception the check raised that is not infrastructure (returned, not raised):
    a `SystemExit` a user's code raised too, which is its failure, never the run's exit; the harness's own
    `BaseException`s (`Stopped`, mutate's time limit) pass. Each outcome of `Trials` is `heard` as it comes
    (never one not checked, nor one twice: the retry after an infrastructure failure hears only those after
    the ones heard before it)."""
    called()
    told: list[Outcome] = []
    try:
        outcomes = prop.check(impl, histories)
        if not isinstance(outcomes, Trials) or heard is None:
            return list(outcomes)
        return [_heard(outcome, heard, told) for outcome in outcomes]
    except ContractViolation:
        raise
    except (Exception, SystemExit) as exc:  # the harness's own BaseExceptions (`Stopped`, ...) pass
        reason = infrastructure_reason(impl, impl.name, exc)
        if reason is None:
            return exc
        if not retry:
            raise exc if isinstance(exc, InfrastructureError) else InfrastructureError(reason) from exc
        set_up(impl, impl.name, "recover")
        return _attempt(prop, impl, histories, called, _after(heard, len(told)), retry=False)


def _heard(outcome: Outcome, heard: Heard, told: list[Outcome]) -> Outcome:
    if outcome is not UNCHECKED:
        told.append(outcome)
        heard(outcome)
    return outcome


def _after(heard: Heard | None, told: int) -> Heard | None:
    """`heard`, deaf to the first `told` outcomes (those an attempt heard before its retry).

    >>> said = []
    >>> hear = _after(said.append, 2)
    >>> for outcome in "abc":
    ...     hear(outcome)
    >>> said
    ['c']
    """
    if heard is None:
        return None
    left = [told]

    def hear(outcome: Outcome) -> None:
        if left[0] > 0:
            left[0] -= 1
        else:
            heard(outcome)

    return hear


def _raised(impl: Implementation, exc: BaseException, suite: Suite | None) -> Outcome:
    """An exception on one history: the implementation's failure when raised inside one of its methods
    (or when the suite calls methods whose results it then uses: the laws), else the harness side's
    (the model could not judge it: a generator/model disagreement)."""
    if isinstance(
        exc, HISTORY_ERRORS
    ):  # the reading of the history, either side's: never the implementation's
        return Outcome.model_raised(exc)
    if raised_by(exc, impl) or not _judged_by_model(suite):
        return Outcome.implementation_raised(exc, own_frames(exc, impl))
    return Outcome.model_raised(exc)


def _judged_by_model(suite: Suite | None) -> bool:
    """Whether the suite only asks the implementation for observations (the model judges them)."""
    return suite is None or (bool(suite.calls) and all(c.startswith("observe_") for c in suite.calls))
