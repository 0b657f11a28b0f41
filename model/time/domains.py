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
from frontier_harness.model.time.partitioned_time import PARTITION_MAX, PartitionedTime

Time = Any


@runtime_checkable
class Domain(Protocol):
    """What every time domain provides: a partial order with `join`, `meet` and a wire form.

    The examples below use `Total`; `Product` and `Partitioned` show theirs on their own methods.
    """

    @property
    def name(self) -> str:
        """The name `parse_domain` turns back into this domain.

        >>> parse_domain(Product(Total(), Partitioned()).name) == Product(Total(), Partitioned())
        True
        """

    @property
    def minimum(self) -> Time:
        """The least time: `le(minimum, t)` for every time `t`.

        >>> d = Product(Total(), Total())
        >>> d.minimum, d.le(d.minimum, (0, 7))
        ((0, 0), True)
        """

    def le(self, a: Time, b: Time) -> bool:
        """The partial order: reflexive, antisymmetric, transitive.

        >>> Total().le(3, 3), Total().le(3, 5), Total().le(5, 3)
        (True, True, False)
        """

    def lt(self, a: Time, b: Time) -> bool:
        """The strict order: `lt(a, b)` iff `le(a, b)` and `a != b`.

        >>> Total().lt(3, 3), Total().lt(3, 5)
        (False, True)
        """

    def join(self, a: Time, b: Time) -> Time | None:
        """The least upper bound of `a` and `b`, or None when they have no upper bound.

        >>> Total().join(3, 5)
        5
        """

    def meet(self, a: Time, b: Time) -> Time:
        """The greatest lower bound of `a` and `b`; it always exists.

        >>> Total().meet(3, 5)
        3
        """

    def validate(self, value: Any) -> Time:
        """`value` if it is a time of this domain, else `InvalidTime` naming it.

        >>> Total().validate(4)
        4
        """

    def encode(self, value: Time) -> Any:
        """The JSON-able form of a time: `decode(encode(t)) == t`.

        >>> Total().decode(Total().encode(4))
        4
        """

    def decode(self, raw: Any) -> Time:
        """The time whose `encode` is `raw`, validated: `InvalidTime` for anything else.

        >>> Total().decode(4)
        4
        """

    def key(self, value: Time) -> tuple:
        """A sort key for presentation: equal keys iff equal times (not the partial order).

        >>> Total().key(4)
        (4,)
        """


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
        """`a <= b` as integers: any two times are comparable.

        >>> Total().le(3, 5), Total().le(5, 3)
        (True, False)
        """
        return a <= b

    def lt(self, a: int, b: int) -> bool:
        """`a < b` as integers.

        >>> Total().lt(3, 5), Total().lt(5, 5)
        (True, False)
        """
        return a < b

    def join(self, a: int, b: int) -> int:
        """The larger of the two; it always exists.

        >>> Total().join(3, 5)
        5
        """
        return max(a, b)

    def meet(self, a: int, b: int) -> int:
        """The smaller of the two.

        >>> Total().meet(3, 5)
        3
        """
        return min(a, b)

    def validate(self, value: Any) -> int:
        """`value` if it is a non-negative `int` (not a `bool`), else `InvalidTime`.

        >>> Total().validate(7)
        7
        >>> Total().validate(True)
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid total time True: expected a non-negative integer
        """
        if not _is_int(value) or value < 0:
            raise InvalidTime(self.name, value, "expected a non-negative integer")
        return value

    def encode(self, value: int) -> int:
        """The integer itself: `decode(encode(t)) == t`.

        >>> Total().encode(7)
        7
        """
        return value

    def decode(self, raw: Any) -> int:
        """`raw` validated as a time: `InvalidTime` for anything but a non-negative `int`.

        >>> Total().decode(7)
        7
        >>> Total().decode("7")
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid total time '7': expected a non-negative integer
        """
        return self.validate(raw)

    def key(self, value: int) -> tuple:
        """`(value,)`: the presentation order is the time order.

        >>> sorted([5, 3], key=Total().key)
        [3, 5]
        """
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
        """`product(A,B)` from the coordinates' names; `parse_domain` reads it back.

        >>> Product(Total(), Partitioned()).name
        'product(total,partitioned)'
        """
        return f"product({self.a.name},{self.b.name})"

    @property
    def minimum(self) -> tuple:
        """The pair of the coordinates' minima.

        >>> Product(Total(), Total()).minimum
        (0, 0)
        """
        return (self.a.minimum, self.b.minimum)

    def le(self, x: tuple, y: tuple) -> bool:
        """`x <= y` iff both coordinates are: `(1, 2)` and `(2, 1)` are incomparable.

        >>> d = Product(Total(), Total())
        >>> d.le((1, 2), (1, 3)), d.le((1, 2), (2, 1)), d.le((2, 1), (1, 2))
        (True, False, False)
        """
        return self.a.le(x[0], y[0]) and self.b.le(x[1], y[1])

    def lt(self, x: tuple, y: tuple) -> bool:
        """`le` and not equal: one coordinate may stay put.

        >>> d = Product(Total(), Total())
        >>> d.lt((1, 2), (1, 3)), d.lt((1, 2), (1, 2))
        (True, False)
        """
        return x != y and self.le(x, y)

    def join(self, x: tuple, y: tuple) -> tuple | None:
        """Coordinate-wise joins; None if either coordinate has no join.

        >>> Product(Total(), Total()).join((1, 2), (2, 1))
        (2, 2)
        >>> P = PartitionedTime
        >>> print(Product(Total(), Partitioned()).join((1, P(0, 0, 0)), (2, P(1, 1, 0))))
        None
        """
        first, second = self.a.join(x[0], y[0]), self.b.join(x[1], y[1])
        return None if first is None or second is None else (first, second)

    def meet(self, x: tuple, y: tuple) -> tuple:
        """Coordinate-wise meets; it always exists.

        >>> Product(Total(), Total()).meet((1, 2), (2, 1))
        (1, 1)
        """
        return (self.a.meet(x[0], y[0]), self.b.meet(x[1], y[1]))

    def validate(self, value: Any) -> tuple:
        """A tuple of two valid coordinates (a list is accepted), else `InvalidTime`.

        >>> Product(Total(), Total()).validate([1, 2])
        (1, 2)
        >>> Product(Total(), Total()).validate((1, 2, 3))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid product(total,total) time (1, 2, 3): expected a pair
        """
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise InvalidTime(self.name, value, "expected a pair")
        return (self.a.validate(value[0]), self.b.validate(value[1]))

    def encode(self, value: tuple) -> list:
        """A two-element list of the encoded coordinates: `decode(encode(t)) == t`.

        >>> d = Product(Total(), Partitioned())
        >>> d.encode((1, PartitionedTime(0, 0, 5))), d.decode(d.encode((1, PartitionedTime(0, 0, 5))))
        ([1, [0, 0, 5]], (1, [0,0]@5))
        """
        return [self.a.encode(value[0]), self.b.encode(value[1])]

    def decode(self, raw: Any) -> tuple:
        """The pair whose `encode` is `raw`, each coordinate decoded by its domain.

        >>> Product(Total(), Total()).decode([1, 2])
        (1, 2)
        >>> Product(Total(), Total()).decode([1, -2])
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid total time -2: expected a non-negative integer
        """
        if not isinstance(raw, (tuple, list)) or len(raw) != 2:
            raise InvalidTime(self.name, raw, "expected a pair")
        return (self.a.decode(raw[0]), self.b.decode(raw[1]))

    def key(self, value: tuple) -> tuple:
        """The pair of the coordinates' keys: lexicographic presentation order.

        >>> sorted([(1, 0), (0, 2), (0, 1)], key=Product(Total(), Total()).key)
        [(0, 1), (0, 2), (1, 0)]
        """
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
        """`a`'s interval contains `b`'s and `a.offset <= b.offset`.

        >>> d, P = Partitioned(), PartitionedTime
        >>> d.le(P(0, 9, 1), P(2, 3, 4)), d.le(P(2, 3, 1), P(0, 9, 4)), d.le(P(0, 9, 5), P(2, 3, 4))
        (True, False, False)
        """
        return a.lo <= b.lo and b.hi <= a.hi and a.offset <= b.offset

    def lt(self, a: PartitionedTime, b: PartitionedTime) -> bool:
        """`le` and not equal: a narrower interval at the same offset is later.

        >>> d, P = Partitioned(), PartitionedTime
        >>> d.lt(P(0, 9, 1), P(2, 3, 1)), d.lt(P(2, 3, 1), P(2, 3, 1))
        (True, False)
        """
        return a != b and self.le(a, b)

    def join(self, a: PartitionedTime, b: PartitionedTime) -> PartitionedTime | None:
        """The intersection of the intervals at the larger offset; None if they are disjoint.

        >>> d, P = Partitioned(), PartitionedTime
        >>> d.join(P(0, 9, 1), P(5, 20, 0)), d.join(P(0, 0, 1), P(1, 1, 1))
        ([5,9]@1, None)
        """
        lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
        return PartitionedTime(lo, hi, max(a.offset, b.offset)) if lo <= hi else None

    def meet(self, a: PartitionedTime, b: PartitionedTime) -> PartitionedTime:
        """The smallest interval containing both at the smaller offset; it always exists.

        >>> Partitioned().meet(PartitionedTime(0, 0, 5), PartitionedTime(3, 3, 2))
        [0,3]@2
        """
        return PartitionedTime(min(a.lo, b.lo), max(a.hi, b.hi), min(a.offset, b.offset))

    def validate(self, value: Any) -> PartitionedTime:
        """`value` if it is a `PartitionedTime` with `0 <= lo <= hi <= MAX` and offset >= 0.

        >>> Partitioned().validate(PartitionedTime(2, 3, 0))
        [2,3]@0
        >>> Partitioned().validate(PartitionedTime(3, 2, 0))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid partitioned time [3,2]@0: expected lo <= hi <= 2147483647
        """
        if not isinstance(value, PartitionedTime):
            raise InvalidTime(self.name, value, "expected a PartitionedTime")
        fields = (value.lo, value.hi, value.offset)
        if not all(_is_int(f) and f >= 0 for f in fields):
            raise InvalidTime(self.name, value, "partitions and offset must be non-negative integers")
        if value.lo > value.hi or value.hi > PARTITION_MAX:
            raise InvalidTime(self.name, value, f"expected lo <= hi <= {PARTITION_MAX}")
        return value

    def encode(self, value: PartitionedTime) -> list:
        """`[lo, hi, offset]`: `decode(encode(t)) == t`.

        >>> Partitioned().encode(PartitionedTime(2, 3, 7))
        [2, 3, 7]
        """
        return [value.lo, value.hi, value.offset]

    def decode(self, raw: Any) -> PartitionedTime:
        """The time `[lo, hi, offset]` names, validated: `InvalidTime` for anything else.

        >>> Partitioned().decode([2, 3, 7])
        [2,3]@7
        >>> Partitioned().decode([2, 3])
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid partitioned time [2, 3]: expected [lo, hi, offset]
        """
        if not isinstance(raw, (tuple, list)) or len(raw) != 3:
            raise InvalidTime(self.name, raw, "expected [lo, hi, offset]")
        return self.validate(PartitionedTime(*raw))

    def key(self, value: PartitionedTime) -> tuple:
        """`(lo, hi, offset)`: by first partition, then last, then offset.

        >>> sorted([PartitionedTime(1, 1, 0), PartitionedTime(0, 5, 9)], key=Partitioned().key)
        [[0,5]@9, [1,1]@0]
        """
        return (value.lo, value.hi, value.offset)

    def live_frontier(self, next_offsets: Mapping[int, int]) -> list[PartitionedTime]:
        """One point per known partition at its next offset, plus the unseen rest at 0.

        Known partitions are `0..n-1` (Kafka numbers them densely); a gap is `InvalidTime`.

        >>> Partitioned().live_frontier({0: 5, 1: 2})
        [[0,0]@5, [1,1]@2, [2,MAX]@0]
        >>> Partitioned().live_frontier({1: 2})
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTime: invalid partitioned time {1: 2}: known partitions must be 0..n-1
        """
        known = sorted(next_offsets)
        if known != list(range(len(known))):
            raise InvalidTime(self.name, dict(next_offsets), "known partitions must be 0..n-1")
        points = [PartitionedTime.point(p, next_offsets[p]) for p in known]
        return points + ([PartitionedTime.rest(len(known))] if len(known) <= PARTITION_MAX else [])


DOMAIN_NAMES = ("total", "product(total,total)", "partitioned")


def parse_domain(name: Any) -> Domain:
    """The domain called `name` (`total`, `partitioned` or `product(A,B)`): `parse_domain(d.name) == d`.

    >>> parse_domain("product(total,partitioned)").name
    'product(total,partitioned)'
    >>> parse_domain("product(total)")
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.UnknownDomain: unknown time domain 'product(total)': expected total, partitioned or product(A,B)
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
