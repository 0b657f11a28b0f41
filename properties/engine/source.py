"""Where a generator's choices come from: Hypothesis, a seeded `random`, or a recorded sequence.

Generators are plain functions of a `Source`, so one generator serves every
lane: the shrinking lane drives it from Hypothesis's `data.draw`, the screening
lane from `random.Random(seed)` (far faster) through a `RecordingSource`, which
keeps each history's choices as small non-negative numbers (an integer's
offset from its least value, a boolean as 0/1, an option's index). A
`ReplaySource` draws the same history again from those numbers, and any other
sequence of numbers draws a valid history too, so a failing screened history
shrinks by shrinking its choices (`frontier_harness.properties.engine.shrink`), as Hypothesis does.

>>> src = RandomSource(7)
>>> 0 <= src.integer(0, 5) <= 5
True
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class Source(Protocol):
    """The choices a generator may make."""

    def integer(self, lo: int, hi: int) -> int: ...
    def boolean(self, p_true: float = 0.5) -> bool: ...
    def choice(self, options: Sequence[T]) -> T: ...


def repeat(
    source: Source, draw_one: Callable[[], T], min_size: int, max_size: int, p_more: float = 0.8
) -> list[T]:
    """A list drawn element by element with a "one more?" coin, so shrinking deletes elements.

    >>> len(repeat(RandomSource(1), lambda: 0, 2, 4)) in (2, 3, 4)
    True
    """
    items = [draw_one() for _ in range(min_size)]
    while len(items) < max_size and source.boolean(p_more):
        items.append(draw_one())
    return items


class RandomSource:
    """Choices from `random.Random(seed)`: fast, reproducible, not shrinkable."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self, p_true: float = 0.5) -> bool:
        return self.rng.random() < p_true

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]


class RecordingSource:
    """Choices from a shared `random.Random`, recorded for this one history (`choices`).

    >>> rng = random.Random(3)
    >>> src = RecordingSource(rng)
    >>> value, flag = src.integer(5, 9), src.boolean()
    >>> ReplaySource(src.choices).integer(5, 9) == value
    True
    """

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.choices: list[int] = []

    def integer(self, lo: int, hi: int) -> int:
        value = self.rng.randint(lo, hi)
        self.choices.append(value - lo)
        return value

    def boolean(self, p_true: float = 0.5) -> bool:
        value = self.rng.random() < p_true
        self.choices.append(int(value))
        return value

    def choice(self, options: Sequence[T]) -> T:
        index = self.rng.randrange(len(options))
        self.choices.append(index)
        return options[index]


class ReplaySource:
    """Choices replayed from a sequence; each clamped into range, and past its end the least choice.

    So every sequence draws a valid history, and smaller numbers draw simpler ones.

    >>> src = ReplaySource([7, 1])
    >>> src.integer(0, 3), src.boolean(), src.choice("abc"), src.used
    (3, True, 'a', 2)
    """

    def __init__(self, choices: Sequence[int]):
        self.choices = choices
        self.used = 0

    def _next(self, span: int) -> int:
        value = self.choices[self.used] if self.used < len(self.choices) else 0
        self.used = min(self.used + 1, len(self.choices))
        return min(value, span)

    def integer(self, lo: int, hi: int) -> int:
        return lo + self._next(hi - lo)

    def boolean(self, p_true: float = 0.5) -> bool:
        return self._next(1) == 1

    def choice(self, options: Sequence[T]) -> T:
        return options[self._next(len(options) - 1)]


class HypothesisSource:
    """Choices drawn through Hypothesis (`data.draw` or a composite's `draw`), and recorded (`choices`)
    as `RecordingSource` records them, so `ReplaySource` draws the same history again and the
    harness's own batched shrinker can take over from Hypothesis.

    >>> recorded = HypothesisSource(lambda strategy: 6)  # a stand-in for Hypothesis's `data.draw`
    >>> recorded.integer(2, 9), recorded.choices
    (6, [4])
    >>> ReplaySource(recorded.choices).integer(2, 9)
    6
    """

    def __init__(self, draw: Callable[[Any], Any]):
        self.draw = draw
        self.choices: list[int] = []

    def integer(self, lo: int, hi: int) -> int:
        value = self.draw(_integers(lo, hi))
        self.choices.append(value - lo)
        return value

    def boolean(self, p_true: float = 0.5) -> bool:
        # Hypothesis shrinks booleans towards False: "stop" and "no" are simpler.
        value = self.draw(st.booleans())
        self.choices.append(int(value))
        return value

    def choice(self, options: Sequence[T]) -> T:
        index = self.draw(_integers(0, len(options) - 1))
        self.choices.append(index)
        return options[index]


@functools.cache
def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    """`st.integers(lo, hi)`, made once per bounds (a generator draws thousands of integers a history)."""
    return st.integers(lo, hi)


def strategy(generator: Callable[..., T], *args: Any) -> st.SearchStrategy[T]:
    """A Hypothesis strategy drawing `generator(source, *args)`.

    >>> from hypothesis import find
    >>> find(strategy(lambda src: src.integer(0, 9)), lambda n: n > 4)
    5
    """
    return st.composite(lambda draw: generator(HypothesisSource(draw), *args))()
