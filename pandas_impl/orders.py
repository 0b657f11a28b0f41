"""This implementation's own `le`, `join` and `meet` for the three time domains."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from frontier_harness import PartitionedTime  # a value type: no algorithm of the model's


@attrs.frozen
class Order:
    le: Callable[[Any, Any], bool]
    join: Callable[[Any, Any], Any | None]
    meet: Callable[[Any, Any], Any]


def order(domain: Any) -> Order:
    """The order of a model domain, by its name."""
    if domain.name == "total":
        return Order(lambda a, b: a <= b, max, min)
    if domain.name == "partitioned":
        return Order(_p_le, _p_join, _p_meet)
    first, second = order(domain.a), order(domain.b)

    def join(x: tuple, y: tuple) -> tuple | None:
        a, b = first.join(x[0], y[0]), second.join(x[1], y[1])
        return None if a is None or b is None else (a, b)

    return Order(
        lambda x, y: first.le(x[0], y[0]) and second.le(x[1], y[1]),
        join,
        lambda x, y: (first.meet(x[0], y[0]), second.meet(x[1], y[1])),
    )


def _p_le(a: PartitionedTime, b: PartitionedTime) -> bool:
    return a.lo <= b.lo and b.hi <= a.hi and a.offset <= b.offset


def _p_join(a: PartitionedTime, b: PartitionedTime) -> PartitionedTime | None:
    lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
    return PartitionedTime(lo, hi, max(a.offset, b.offset)) if lo <= hi else None


def _p_meet(a: PartitionedTime, b: PartitionedTime) -> PartitionedTime:
    return PartitionedTime(min(a.lo, b.lo), max(a.hi, b.hi), min(a.offset, b.offset))
