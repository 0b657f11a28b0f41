"""Time domains: partially ordered sets of times with `join` and `meet`.

A domain is a small frozen object that knows its values' order. Three are
built in; every suite that is generic over time runs over all three:

- `Total`: non-negative integers (epoch milliseconds, offsets, LSNs).
- `Product(A, B)`: pairs ordered coordinate-wise (genuinely partial).
- `Partitioned`: Kafka-like time, an inclusive interval of partition ids and an
  offset (see `PartitionedTime`).

`join` is the least upper bound and may not exist (`None`): two Partitioned
times on disjoint intervals have no upper bound. `meet` always exists.

>>> d = Product(Total(), Total())
>>> d.le((1, 2), (1, 3)), d.le((1, 2), (2, 1)), d.le((2, 1), (1, 2))
(True, False, False)
>>> d.join((1, 2), (2, 1)), d.meet((1, 2), (2, 1))
((2, 2), (1, 1))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from frontier_harness.model.errors import InvalidTime, UnknownDomain
from frontier_harness.model.partitioned_time import PARTITION_MAX, PartitionedTime

Time = Any


@runtime_checkable
class Domain(Protocol):
    """What every time domain provides."""

    @property
    def name(self) -> str: ...
    @property
    def minimum(self) -> Time: ...

    def le(self, a: Time, b: Time) -> bool: ...
    def lt(self, a: Time, b: Time) -> bool: ...
    def join(self, a: Time, b: Time) -> Time | None: ...
    def meet(self, a: Time, b: Time) -> Time: ...
    def validate(self, value: Any) -> Time: ...
    def encode(self, value: Time) -> Any: ...
    def decode(self, raw: Any) -> Time: ...
    def key(self, value: Time) -> tuple: ...


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@attrs.frozen
class Total:
    """Non-negative integers in their usual (total) order.

    >>> Total().join(3, 5), Total().meet(3, 5), Total().lt(3, 3)
    (5, 3, False)
    >>> Total().validate(-1)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidTime: invalid total time -1: expected a non-negative integer
    """

    name = "total"
    minimum = 0

    def le(self, a: int, b: int) -> bool:
        return a <= b

    def lt(self, a: int, b: int) -> bool:
        return a < b

    def join(self, a: int, b: int) -> int:
        return max(a, b)

    def meet(self, a: int, b: int) -> int:
        return min(a, b)

    def validate(self, value: Any) -> int:
        if not _is_int(value) or value < 0:
            raise InvalidTime(self.name, value, "expected a non-negative integer")
        return value

    def encode(self, value: int) -> int:
        return value

    def decode(self, raw: Any) -> int:
        return self.validate(raw)

    def key(self, value: int) -> tuple:
        return (value,)


@attrs.frozen
class Product:
    """Pairs `(a, b)` ordered coordinate-wise: `x <= y` iff both coordinates are.

    >>> d = Product(Total(), Total())
    >>> d.name, d.minimum, d.lt((0, 1), (0, 2)), d.lt((0, 1), (1, 0))
    ('product(total,total)', (0, 0), True, False)
    """

    a: Domain = attrs.field(factory=Total)
    b: Domain = attrs.field(factory=Total)

    @property
    def name(self) -> str:
        return f"product({self.a.name},{self.b.name})"

    @property
    def minimum(self) -> tuple:
        return (self.a.minimum, self.b.minimum)

    def le(self, x: tuple, y: tuple) -> bool:
        return self.a.le(x[0], y[0]) and self.b.le(x[1], y[1])

    def lt(self, x: tuple, y: tuple) -> bool:
        return x != y and self.le(x, y)

    def join(self, x: tuple, y: tuple) -> tuple | None:
        first, second = self.a.join(x[0], y[0]), self.b.join(x[1], y[1])
        return None if first is None or second is None else (first, second)

    def meet(self, x: tuple, y: tuple) -> tuple:
        return (self.a.meet(x[0], y[0]), self.b.meet(x[1], y[1]))

    def validate(self, value: Any) -> tuple:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise InvalidTime(self.name, value, "expected a pair")
        return (self.a.validate(value[0]), self.b.validate(value[1]))

    def encode(self, value: tuple) -> list:
        return [self.a.encode(value[0]), self.b.encode(value[1])]

    def decode(self, raw: Any) -> tuple:
        if not isinstance(raw, (tuple, list)) or len(raw) != 2:
            raise InvalidTime(self.name, raw, "expected a pair")
        return (self.a.decode(raw[0]), self.b.decode(raw[1]))

    def key(self, value: tuple) -> tuple:
        return (self.a.key(value[0]), self.b.key(value[1]))


@attrs.frozen
class Partitioned:
    """Kafka-like time: `a <= b` iff `a`'s interval contains `b`'s and `a.offset <= b.offset`.

    The minimum is every partition at offset 0. `meet` is the smallest interval
    containing both with the smaller offset; `join` is the intersection with the
    larger offset, and does not exist (None) when the intervals are disjoint.

    >>> d, P = Partitioned(), PartitionedTime
    >>> d.le(d.minimum, P(3, 3, 7)), d.le(P(0, 0, 1), P(1, 1, 9))
    (True, False)
    >>> d.meet(P(0, 0, 5), P(1, 1, 2)), d.join(P(0, 0, 5), P(1, 1, 2))
    ([0,1]@2, None)
    >>> d.join(P(0, 9, 1), P(5, 20, 0))
    [5,9]@1
    """

    name = "partitioned"
    minimum = PartitionedTime(0, PARTITION_MAX, 0)

    def le(self, a: PartitionedTime, b: PartitionedTime) -> bool:
        return a.lo <= b.lo and b.hi <= a.hi and a.offset <= b.offset

    def lt(self, a: PartitionedTime, b: PartitionedTime) -> bool:
        return a != b and self.le(a, b)

    def join(self, a: PartitionedTime, b: PartitionedTime) -> PartitionedTime | None:
        lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
        return PartitionedTime(lo, hi, max(a.offset, b.offset)) if lo <= hi else None

    def meet(self, a: PartitionedTime, b: PartitionedTime) -> PartitionedTime:
        return PartitionedTime(min(a.lo, b.lo), max(a.hi, b.hi), min(a.offset, b.offset))

    def validate(self, value: Any) -> PartitionedTime:
        if not isinstance(value, PartitionedTime):
            raise InvalidTime(self.name, value, "expected a PartitionedTime")
        fields = (value.lo, value.hi, value.offset)
        if not all(_is_int(f) and f >= 0 for f in fields):
            raise InvalidTime(self.name, value, "partitions and offset must be non-negative integers")
        if value.lo > value.hi or value.hi > PARTITION_MAX:
            raise InvalidTime(self.name, value, f"expected lo <= hi <= {PARTITION_MAX}")
        return value

    def encode(self, value: PartitionedTime) -> list:
        return [value.lo, value.hi, value.offset]

    def decode(self, raw: Any) -> PartitionedTime:
        if not isinstance(raw, (tuple, list)) or len(raw) != 3:
            raise InvalidTime(self.name, raw, "expected [lo, hi, offset]")
        return self.validate(PartitionedTime(*raw))

    def key(self, value: PartitionedTime) -> tuple:
        return (value.lo, value.hi, value.offset)

    def live_frontier(self, next_offsets: Mapping[int, int]) -> list[PartitionedTime]:
        """One point per known partition at its next offset, plus the unseen rest at 0.

        Known partitions are `0..n-1` (Kafka numbers them densely).

        >>> Partitioned().live_frontier({0: 5})
        [[0,0]@5, [1,MAX]@0]
        """
        known = sorted(next_offsets)
        if known != list(range(len(known))):
            raise InvalidTime(self.name, dict(next_offsets), "known partitions must be 0..n-1")
        points = [PartitionedTime.point(p, next_offsets[p]) for p in known]
        return points + ([PartitionedTime.rest(len(known))] if len(known) <= PARTITION_MAX else [])


DOMAIN_NAMES = ("total", "product(total,total)", "partitioned")


def parse_domain(name: Any) -> Domain:
    """The domain called `name`: `total`, `partitioned` or `product(A,B)`.

    >>> parse_domain("product(total,partitioned)").name
    'product(total,partitioned)'
    """
    if name == "total":
        return Total()
    if name == "partitioned":
        return Partitioned()
    if isinstance(name, str):
        match = re.fullmatch(r"product\((.*)\)", name)
        if match:
            for split in _top_level_commas(match.group(1)):
                return Product(
                    parse_domain(match.group(1)[:split]), parse_domain(match.group(1)[split + 1 :])
                )
    raise UnknownDomain(name)


def _top_level_commas(inner: str) -> list[int]:
    depth, commas = 0, []
    for i, char in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            commas.append(i)
    return commas if len(commas) == 1 else []
