"""Delta-debugging reduction of a failing history, with the implementation in the loop.

Each round checks, in ONE batched call (one Spark job), the history without each
aligned span of its actions at every granularity at once (halves, quarters, ...,
single actions: what ddmin tries one granularity a call), and keeps the failing
candidate that removed the most; the next round also tries the failing removals
made together (`_joined`). A batched implementation pays per call, not per
candidate, so reducing a failure costs a job per round, and removals that
succeed alone share a round.

>>> from frontier_harness.properties.engine.history import Action, History
>>> h = History("total", tuple(Action("update", {"n": i}) for i in range(10)))
>>> calls = []  # the size of each call
>>> fails = lambda hs: calls.append(len(hs)) or [any(a.args["n"] == 7 for a in x.actions) for x in hs]
>>> [a.args["n"] for a in reduce_history(h, fails).actions], calls
([7], [17, 11])
>>> calls.clear()  # in calls of 4 (a suite of slow trials): a round ends at its first failing call
>>> [a.args["n"] for a in reduce_history(h, fails, batch=4).actions], calls
([7], [4, 4, 4, 2])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.shrink import Tally, doubling

StillFails = Callable[[Sequence[History]], list[bool]]
# The indices a candidate removed from its round's history (None: carried over from the last round).
Removal = frozenset[int] | None


def reduce_history(
    history: History,
    still_fails: StillFails,
    stop: Callable[[], bool] = lambda: False,
    improved: Callable[[History], None] | None = None,
    batch: int | None = None,
    tally: Tally | None = None,
) -> History:
    """A 1-minimal sub-history (removing any one action makes it pass) that still fails.

    When `stop()` says the budget is spent it stops with the smallest failing one so far;
    `improved` is told each smaller failing one as it is found. With `batch`, a round's candidates
    go in calls of `batch`, largest removals first, and the round ends at the first call that fails.
    `tally` counts its two passes: `remove actions` (a span at each granularity) and `remove joined`
    (the last round's failing removals made together).
    """
    together: list[History] = []
    tally = tally if tally is not None else Tally()
    while len(history.actions) > 1 and not stop():
        removals = [frozenset(span) for span in spans(len(history.actions))]
        candidates: list[tuple[Removal, History]] = [(None, h) for h in together]
        candidates += [(r, history.without(r)) for r in removals]
        failing = _first_failing(candidates, still_fails, batch, stop, tally)
        if not failing:
            break  # every single action was among the candidates: 1-minimal (or the budget ran out)
        kept, smaller = min(failing, key=lambda c: len(c[1].actions))  # the first largest removal
        tally.checked((), _pass(kept))
        together = [h for h in _joined(history, failing) if len(h.actions) < len(smaller.actions)]
        history = smaller
        if improved is not None:
            improved(history)
    return history


def _first_failing(
    candidates: list[tuple[Removal, History]],
    still_fails: StillFails,
    batch: int | None,
    stop: Callable[[], bool],
    tally: Tally,
) -> list[tuple[Removal, History]]:
    """The failing candidates of the first call (of `batch`) that has one; empty if none has."""
    size = batch or len(candidates)
    for i in range(0, len(candidates), size):
        call = candidates[i : i + size]
        failing = [c for c, bad in zip(call, still_fails([h for _, h in call])) if bad]
        tally.checked([_pass(removal) for removal, _ in call], None)
        if failing or stop():
            return failing
    return []


def _pass(removal: Removal) -> str:
    return "remove joined" if removal is None else "remove actions"


def _joined(history: History, failing: list[tuple[Removal, History]]) -> list[History]:
    """`history` without the first 2, 4, ... and all of the removals that failed alone, largest first.

    >>> from frontier_harness.properties.engine.history import Action, History
    >>> h = History("total", tuple(Action("update", {"n": i}) for i in range(4)))
    >>> failing = [(frozenset({0, 1}), None), (frozenset({3}), None), (None, None)]
    >>> [[a.args["n"] for a in x.actions] for x in _joined(h, failing)]
    [[2]]
    """
    removed = sorted((r for r, _ in failing if r is not None), key=len, reverse=True)
    return [history.without(frozenset().union(*removed[:j])) for j in doubling(len(removed))]


def spans(n: int) -> list[range]:
    """Aligned spans of `n` actions at every granularity, largest first, down to each single action.

    >>> [(s.start, s.stop) for s in spans(5)]
    [(0, 2), (2, 4), (4, 5), (0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    """
    found: list[range] = []
    size = max(1, n // 2)
    while True:
        found += [range(i, min(n, i + size)) for i in range(0, n, size)]
        if size == 1:
            return found
        size = max(1, size // 2)
