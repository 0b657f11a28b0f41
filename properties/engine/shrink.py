"""Shrinking a failing screened history through its recorded choices, each pass in one batched call.

A screened history was drawn from a `RecordingSource`; its choices are small
non-negative numbers, and `ReplaySource` draws a valid history from any
sequence of them. Shrinking works on the sequence, as Hypothesis's shrinker
does: delete blocks, zero blocks, lower single numbers; a candidate replaces
the current one when it still fails the same way and is smaller in shortlex
order (shorter first, then lexicographically). Every pass draws all its
candidates and checks them in ONE call to the implementation (one Spark job),
so a shrink costs a few dozen jobs, not one per candidate. When `deadline`
passes, the smallest failing sequence so far is the answer: a found failure is
never lost to the clock.

>>> fails = lambda batch: [any(n >= 5 for n in c) for c in batch]
>>> shrink_choices([3, 9, 0, 4, 1], fails)
[5]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence

Choices = list[int]
StillFails = Callable[[Sequence[Choices]], list[bool]]
BLOCKS = (8, 4, 2, 1)


def shrink_choices(
    choices: Choices,
    still_fails: StillFails,
    deadline: float = float("inf"),
    improved: Callable[[Choices], None] | None = None,
) -> Choices:
    """The smallest sequence (shortlex) the passes reach that still fails; `choices` must fail.

    `improved` is told each smaller failing sequence as it is found.
    """
    best = list(choices)
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for candidates in _passes(best):
            # Smallest first: a batch that raises is searched left to right (`runner.check_batch`).
            smaller = sorted(
                (c for c in dict.fromkeys(map(tuple, candidates)) if _shortlex(c) < _shortlex(best)),
                key=_shortlex,
            )
            verdicts = still_fails([list(c) for c in smaller]) if smaller else []
            failing = [c for c, bad in zip(smaller, verdicts) if bad]
            if failing:
                best, progress = list(min(failing, key=_shortlex)), True
                if improved is not None:
                    improved(best)
                break
            if time.monotonic() >= deadline:
                break
    return best


def _shortlex(choices: Iterable[int]) -> tuple[int, tuple[int, ...]]:
    as_tuple = tuple(choices)
    return len(as_tuple), as_tuple


def _passes(best: Choices) -> Iterator[list[Choices]]:
    """Candidate batches, most aggressive first: delete blocks, zero blocks, lower each number."""
    n = len(best)
    for k in BLOCKS:
        if k <= n:
            yield [best[:i] + best[i + k :] for i in range(n - k + 1)]
    for k in BLOCKS:
        if k <= n:
            yield [best[:i] + [0] * k + best[i + k :] for i in range(n - k + 1) if any(best[i : i + k])]
    yield [best[:i] + [lower] + best[i + 1 :] for i, v in enumerate(best) for lower in _lower(v)]


def _lower(value: int) -> list[int]:
    """Smaller values to try for one number: the least, half, one less."""
    return sorted({0, value // 2, value - 1} - {value}) if value > 0 else []
