"""Outcomes a check hands over one by one, as each trial ends: a trial suite's histories are slow (each a
real streaming query), so the run hears of each as it comes, through what the check returns.

A check returns `Trials` (`in_waves` makes them) instead of a list: the runner reads it lazily, so
the progress shows each trial's verdict and the first failure's file is written at once, before the
rest of the batch runs; read as a list (indexed, measured), it runs to its end first.

>>> seen = []
>>> def wave(histories):
...     seen.append(list(histories))
...     return [Outcome(ok=h != "b") for h in histories]
>>> outcomes = in_waves("abcde", 2, wave)
>>> seen  # nothing runs before it is read
[]
>>> [o.ok for o in outcomes], seen  # waves of 1, then 2: after b's, d and e are not run
([True, False, True, False, False], [['a'], ['b', 'c']])
>>> outcomes[3] is UNCHECKED, len(outcomes)
(True, 5)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from frontier_harness.properties.engine.suite import Outcome

# A history after the one found to raise in its batch (`batch._bisect`), or after a failing trial of a
# suite that stops there (`in_waves`): not checked.
UNCHECKED = Outcome(ok=False, unresolved=True, message="not checked: an earlier history of its batch failed")


class Trials(Sequence[Outcome]):
    """A check's outcomes, computed as they are read: iterating yields each as its trial ends."""

    def __init__(self, outcomes: Iterable[Outcome]):
        self._source: Iterator[Outcome] = iter(outcomes)
        self._read: list[Outcome] = []

    def __iter__(self) -> Iterator[Outcome]:
        i = 0
        while True:
            if i == len(self._read):
                following = next(self._source, None)
                if following is None:
                    return
                self._read.append(following)
            yield self._read[i]
            i += 1

    def _all(self) -> list[Outcome]:
        self._read.extend(self._source)
        return self._read

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, index: int) -> Outcome: ...
    @overload
    def __getitem__(self, index: slice) -> list[Outcome]: ...
    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]


def in_waves(
    histories: Sequence[Any],
    size: int,
    wave: Callable[[Sequence[Any]], Sequence[Outcome]],
) -> Trials:
    """`wave` over the histories a wave at a time (`wave_sizes`), each outcome handed over as its wave
    ends; after a wave with an outcome that `fails`, the histories left are not run (`UNCHECKED`: a lane
    reports its first failure, and shrinking keeps the smallest failing candidate it saw)."""

    def run() -> Iterator[Outcome]:
        start = 0
        for n in wave_sizes(len(histories), size):
            outcomes = wave(histories[start : start + n])
            yield from outcomes
            if any(map(fails, outcomes)):
                yield from [UNCHECKED] * (len(histories) - start - len(outcomes))
                return
            start += n

    return Trials(run())


def fails(outcome: Outcome) -> bool:
    """Whether an outcome stops the trials after it: the implementation's failure, or a history not
    checked (what follows it was not run either); never a history the harness could not judge (a shrink's
    candidate refused unrun, `unless_refused`: the candidates after it are still the shrink's, and the
    history that raised in a call may be among them, `batch._bisect`).

    >>> refused = Outcome(ok=False, rejected=True, disagreement=True)
    >>> fails(Outcome(ok=False)), fails(UNCHECKED), fails(refused)
    (True, True, False)
    """
    return not outcome.ok and not outcome.disagreement


def unless_refused(
    histories: Sequence[Any],
    refuse: Callable[[Any], Outcome | None],
    judged: Callable[[Sequence[Any]], Sequence[Outcome]],
) -> list[Outcome]:
    """`judged` over the histories `refuse` lets run, in one call; a refused history's outcome is its
    refusal, and it never runs (a shrink's candidate no trial can hold would make the whole call raise).

    >>> refuse = lambda h: Outcome(ok=False, rejected=True) if h == "b" else None
    >>> ran = []
    >>> outcomes = unless_refused("abc", refuse, lambda hs: ran.extend(hs) or [Outcome(ok=True)] * len(hs))
    >>> [o.rejected for o in outcomes], ran
    ([False, True, False], ['a', 'c'])
    """
    refused = {i: o for i, h in enumerate(histories) if (o := refuse(h)) is not None}
    run = [h for i, h in enumerate(histories) if i not in refused]
    outcomes = iter(judged(run) if run else [])
    return [refused[i] if i in refused else next(outcomes) for i in range(len(histories))]


def wave_sizes(total: int, size: int) -> list[int]:
    """Waves doubling from one history up to `size`: a failure the first histories of a search's call show
    (a directed history, the first drawn) is found after the trials before it and at most as many again,
    never after a whole wave (six trials cost six times one on two cores: a wave buys little concurrency).
    A call of at most `size` is one wave: every candidate runs, and shrinking keeps the smallest that
    fails (a shrink's call holds whole passes, at least `Suite.shrink_batch` candidates: a larger one runs
    in waves too, and stops at its first wave that fails).

    >>> wave_sizes(20, 6)
    [1, 2, 4, 6, 6, 1]
    >>> wave_sizes(6, 6), wave_sizes(7, 6), wave_sizes(0, 6)
    ([6], [1, 2, 4], [])
    """
    if total <= size:
        return [total] if total else []
    sizes: list[int] = []
    while (done := sum(sizes)) < total:
        sizes.append(min(size, 2 ** len(sizes), total - done))
    return sizes
