"""A view body: a small differential algebra over update collections with Total time.

Plans are frozen plain data (names, column indexes, operator strings, ints), so
spark_impl can translate the same plan into DataFrame expressions. Rows are
tuples of ints (choice: text columns are encoded as ints by whoever builds them).
Every operator is linear in its inputs (join is bilinear: times join, diffs
multiply) and respects time: the output at `t` depends only on inputs at times `<= t`.

>>> from frontier_harness.model.time.collection import Update
>>> plan = Filter(Get("t"), (Compare(0, ">", 1),))
>>> evaluate(plan, {"t": [Update((1,), 0, 1), Update((2,), 0, 1)]})
[Update(data=(2,), time=0, diff=1)]
"""

from __future__ import annotations

import operator
import typing
from collections.abc import Iterable, Mapping

import attrs

from frontier_harness.model.catalog.temporal import MzNow, temporal_filter  # noqa: F401 (MzNow: the doctests build filters with it)
from frontier_harness.model.errors import ColumnOutOfRange, InvalidPlan, UnknownObject
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary.catalog import Comparison

COMPARISONS: dict[str, typing.Callable[[typing.Any, typing.Any], bool]] = {
    Comparison.EQ: operator.eq,
    Comparison.NE: operator.ne,
    Comparison.LT: operator.lt,
    Comparison.LE: operator.le,
    Comparison.GT: operator.gt,
    Comparison.GE: operator.ge,
}


def _column(row: tuple, column: int):
    if not 0 <= column < len(row):
        raise ColumnOutOfRange(column, row)
    return row[column]


def _check_comparison(instance, attribute, op) -> None:
    if op not in COMPARISONS:
        raise InvalidPlan(op, f"comparison must be one of {', '.join(COMPARISONS)}")


def _tuple(items: Iterable[typing.Any]) -> tuple[typing.Any, ...]:
    return tuple(items)


def _non_empty(instance, attribute, value) -> None:
    if not value:
        raise InvalidPlan(instance, f"{attribute.name} must not be empty")


@attrs.frozen
class Compare:
    """The predicate `row[column] op value`.

    >>> Compare(1, "<=", 3).holds((9, 3)), Compare(1, "<", 3).holds((9, 3))
    (True, False)
    """

    column: int
    op: str = attrs.field(validator=_check_comparison)
    value: int

    def holds(self, row: tuple) -> bool:
        """Whether the row satisfies the comparison."""
        return COMPARISONS[self.op](_column(row, self.column), self.value)


@attrs.frozen
class Get:
    """The collection of the catalog object `name`.

    >>> evaluate(Get("a"), {"a": [Update((1,), 0, 1)]})
    [Update(data=(1,), time=0, diff=1)]
    """

    name: str


@attrs.frozen
class Filter:
    """Rows satisfying every predicate (a conjunction).

    >>> evaluate(Filter(Get("a"), [Compare(0, "==", 2)]), {"a": [Update((1,), 0, 1), Update((2,), 0, 1)]})
    [Update(data=(2,), time=0, diff=1)]
    """

    input: Plan
    predicates: tuple[Compare, ...] = attrs.field(converter=_tuple)


@attrs.frozen
class Project:
    """Rows reduced to `columns`, in that order (repetition allowed).

    >>> evaluate(Project(Get("a"), (1, 1)), {"a": [Update((1, 2), 0, 1)]})
    [Update(data=(2, 2), time=0, diff=1)]
    """

    input: Plan
    columns: tuple[int, ...] = attrs.field(converter=_tuple)


@attrs.frozen
class Union:
    """The sum of the inputs' updates (at least one input).

    >>> len(evaluate(Union((Get("a"), Get("a"))), {"a": [Update((1,), 0, 1)]}))
    2
    """

    inputs: tuple[Plan, ...] = attrs.field(converter=_tuple, validator=_non_empty)


@attrs.frozen
class Join:
    """Equi-join on `(left_column, right_column)` pairs; output row is left + right (`on=()`: cross product).

    >>> evaluate(Join(Get("a"), Get("a"), ()), {"a": [Update((1,), 0, 2)]})
    [Update(data=(1, 1), time=0, diff=4)]
    """

    left: Plan
    right: Plan
    on: tuple[tuple[int, int], ...] = attrs.field(converter=_tuple)


@attrs.frozen
class TemporalFilter:
    """Rows restricted to their validity interval under `mz_now()` predicates (see model/catalog/temporal.py).

    >>> evaluate(TemporalFilter(Get("a"), [MzNow(">=", 0)]), {"a": [Update((5,), 0, 1)]})
    [Update(data=(5,), time=5, diff=1)]
    """

    input: Plan
    predicates: tuple[MzNow, ...] = attrs.field(converter=_tuple, validator=_non_empty)


Plan = Get | Filter | Project | Union | Join | TemporalFilter


def plan_inputs(plan) -> tuple[str, ...]:
    """The names the plan reads, sorted and without repetition.

    >>> plan_inputs(Join(Get("b"), Union((Get("a"), Get("b"))), ((0, 0),)))
    ('a', 'b')
    """
    match plan:
        case Get(name):
            return (name,)
        case Union(inputs):
            return tuple(sorted({n for p in inputs for n in plan_inputs(p)}))
        case Join(left, right, _):
            return tuple(sorted({*plan_inputs(left), *plan_inputs(right)}))
        case Filter(input, _) | Project(input, _) | TemporalFilter(input, _):
            return plan_inputs(input)
    raise InvalidPlan(plan, "not a plan node")


def evaluate(plan, inputs: Mapping[str, list[Update]], until: int | None = None) -> list[Update]:
    """The plan's output updates (not consolidated: their count is the diffs processed).

    `until` reaches the temporal filters: diffs they produce at or after it are dropped.

    >>> from frontier_harness.model.time.collection import Update
    >>> evaluate(Join(Get("a"), Get("b"), ((0, 0),)), {"a": [Update((1,), 2, 3)], "b": [Update((1, 5), 4, -1)]})
    [Update(data=(1, 1, 5), time=4, diff=-3)]
    """
    match plan:
        case Get(name):
            if name not in inputs:
                raise UnknownObject(name, sorted(inputs))
            return list(inputs[name])
        case Filter(input, predicates):
            return [u for u in evaluate(input, inputs, until) if all(p.holds(u.data) for p in predicates)]
        case Project(input, columns):
            return [
                Update(tuple(_column(u.data, c) for c in columns), u.time, u.diff)
                for u in evaluate(input, inputs, until)
            ]
        case Union(parts):
            return [u for p in parts for u in evaluate(p, inputs, until)]
        case Join(left, right, on):
            return join_updates(evaluate(left, inputs, until), evaluate(right, inputs, until), on)
        case TemporalFilter(input, predicates):
            return temporal_filter(predicates, evaluate(input, inputs, until), until)
    raise InvalidPlan(plan, "not a plan node")


def join_updates(left: list[Update], right: list[Update], on: tuple[tuple[int, int], ...]) -> list[Update]:
    """Bilinear equi-join: matching pairs at the join of their times, diffs multiplied.

    >>> join_updates([Update((1,), 3, 2)], [Update((1,), 5, 2), Update((2,), 0, 1)], ((0, 0),))
    [Update(data=(1, 1), time=5, diff=4)]
    """
    time = Total()
    return [
        Update(a.data + b.data, time.join(a.time, b.time), a.diff * b.diff)
        for a in left
        for b in right
        if all(_column(a.data, lc) == _column(b.data, rc) for lc, rc in on)
    ]
