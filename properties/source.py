"""Where a generator's choices come from: Hypothesis (shrinkable) or a seeded `random`.

Generators are plain functions of a `Source`, so one generator serves both
lanes: the shrinking lane drives it from Hypothesis's `data.draw` and the
screening lane from `random.Random(seed)`, which draws far faster.

>>> src = RandomSource(7)
>>> 0 <= src.integer(0, 5) <= 5
True
"""

from __future__ import annotations

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


class HypothesisSource:
    """Choices drawn through Hypothesis (`data.draw` or a composite's `draw`), so failures shrink."""

    def __init__(self, draw: Callable[[Any], Any]):
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def boolean(self, p_true: float = 0.5) -> bool:
        # Hypothesis shrinks booleans towards False: "stop" and "no" are simpler.
        return self.draw(st.booleans())

    def choice(self, options: Sequence[T]) -> T:
        return options[self.draw(st.integers(0, len(options) - 1))]


def strategy(generator: Callable[..., T], *args: Any) -> st.SearchStrategy[T]:
    """A Hypothesis strategy drawing `generator(source, *args)`.

    >>> from hypothesis import find
    >>> find(strategy(lambda src: src.integer(0, 9)), lambda n: n > 4)
    5
    """
    return st.composite(lambda draw: generator(HypothesisSource(draw), *args))()
