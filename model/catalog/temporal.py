"""Temporal filters: predicates comparing `mz_now()` with a value computed from the row.

`mz_now() >= lower(row)`, `mz_now() <= upper(row)` and `mz_now() < upper(row)`,
where a bound is `row[column] + offset`. A row inserted at time `t` with diff
`d` is valid for times in `[max(t, lower), upper_exclusive)`: `+d` at the start,
`-d` at `upper_exclusive` when that is later, nothing when the interval is empty.
Diffs at or beyond the dataflow's `until` are dropped here, where they are produced.

>>> from frontier_harness.model.time.collection import Update
>>> temporal_filter((MzNow("<=", 0, 30),), [Update((1,), 1, 1)], until=None)
[Update(data=(1,), time=1, diff=1), Update(data=(1,), time=32, diff=-1)]
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from frontier_harness.model.errors import ColumnOutOfRange, InvalidPlan
from frontier_harness.model.time.collection import Update
from frontier_harness.model.vocabulary.catalog import TemporalOp

TEMPORAL_OPS = tuple(TemporalOp)  # ">=", "<=", "<"


def _check_op(instance, attribute, op) -> None:
    if op not in TEMPORAL_OPS:
        raise InvalidPlan(op, f"temporal operator must be one of {', '.join(TEMPORAL_OPS)}")


@attrs.frozen
class MzNow:
    """The predicate `mz_now() op row[column] + offset` (plain data: Spark translates it too).

    >>> MzNow("<=", 1, 30).bound((5, 10))
    40
    """

    op: str = attrs.field(validator=_check_op)
    column: int
    offset: int = 0

    def bound(self, row: tuple) -> int:
        """The value `row[column] + offset` compared with `mz_now()`."""
        if not 0 <= self.column < len(row):
            raise ColumnOutOfRange(self.column, row)
        return row[self.column] + self.offset


def upper_exclusive(op: str, bound: int) -> int:
    """The first time at which `mz_now() op bound` fails, for an upper-bound operator.

    `mz_now() <= b` holds up to `b`, so it ends at `b + 1`; `mz_now() < b` ends at `b`.

    >>> upper_exclusive("<=", 30), upper_exclusive("<", 30)
    (31, 30)
    """
    return bound + 1 if op == TemporalOp.LE else bound


def validity(time: int, row: tuple, predicates: Iterable[MzNow]) -> tuple[int, int | None]:
    """`(start, end)`: the row inserted at `time` is valid in `[start, end)`; `end=None` is forever.

    `start` is the max of `time` and every lower bound; `end` the min of every
    upper bound's `upper_exclusive`. The interval may be empty (`end <= start`).

    >>> validity(5, (10,), [MzNow(">=", 0, 0), MzNow("<", 0, 20)])
    (10, 30)
    """
    start, end = time, None
    for p in predicates:
        if p.op == TemporalOp.GE:
            start = max(start, p.bound(row))
        else:
            ends = upper_exclusive(p.op, p.bound(row))
            end = ends if end is None else min(end, ends)
    return start, end


def before_until(time: int, until: int | None) -> bool:
    """Whether a diff at `time` is kept under `until` (`None`: no until, everything kept).

    >>> before_until(9, 10), before_until(10, 10), before_until(10, None)
    (True, False, True)
    """
    return until is None or time < until


def interval_updates(data: tuple, diff: int, start: int, end: int | None, until: int | None) -> list[Update]:
    """`+diff` at `start` and `-diff` at `end`, nothing if `[start, end)` is empty, none at/after `until`.

    >>> interval_updates((1,), 1, 5, 5, None), interval_updates((1,), 1, 5, 9, 9)
    ([], [Update(data=(1,), time=5, diff=1)])
    """
    if end is not None and end <= start:
        return []
    times = [(start, diff)] + ([] if end is None else [(end, -diff)])
    return [Update(data, t, d) for t, d in times if before_until(t, until)]


def temporal_filter(
    predicates: Iterable[MzNow], updates: Iterable[Update], until: int | None
) -> list[Update]:
    """Every update replaced by the updates of its validity interval (linear: retractions too).

    The contents at time `t` are the input's contents at `t` restricted to rows
    whose interval contains `t`, for every `t` before `until`.

    >>> temporal_filter((MzNow(">=", 0, 0),), [Update((7,), 2, 1)], until=5)
    []
    """
    predicates = tuple(predicates)
    out: list[Update] = []
    for u in updates:
        start, end = validity(u.time, u.data, predicates)
        out.extend(interval_updates(u.data, u.diff, start, end, until))
    return out
