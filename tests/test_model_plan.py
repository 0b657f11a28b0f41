"""The plan algebra: each operator commutes with reading the contents at a time."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.catalog.plan import (
    Compare,
    Filter,
    Get,
    Join,
    Project,
    TemporalFilter,
    Union,
    evaluate,
    plan_inputs,
)
from frontier_harness.model.catalog.temporal import MzNow
from frontier_harness.model.errors import ColumnOutOfRange, InvalidPlan, UnknownObject
from frontier_harness.model.time.collection import Update, at, consolidate
from frontier_harness.model.time.domains import Total

T = Total()
FAST = settings(max_examples=150, deadline=None, database=None)
updates = st.lists(
    st.builds(
        lambda a, b, t, d: Update((a, b), t, d),
        st.integers(0, 3),
        st.integers(0, 3),
        st.integers(0, 6),
        st.integers(-2, 2).filter(bool),
    ),
    max_size=6,
)
times = st.integers(0, 7)


def contents(plan, inputs, time):
    return at(T, evaluate(plan, inputs), time)


@FAST
@given(updates, times, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), st.integers(0, 3))
def test_filter_and_project_commute_with_at(ups, time, op, value):
    snapshot = at(T, ups, time)
    kept = {row: n for row, n in snapshot.items() if Compare(1, op, value).holds(row)}
    assert contents(Filter(Get("a"), (Compare(1, op, value),)), {"a": ups}, time) == kept
    projected = Counter()
    for row, n in snapshot.items():
        projected[(row[1], row[0])] += n
    assert contents(Project(Get("a"), (1, 0)), {"a": ups}, time) == {r: n for r, n in projected.items() if n}


@FAST
@given(updates, updates, times)
def test_union_adds_and_join_multiplies(left, right, time):
    inputs = {"a": left, "b": right}
    union = Counter(at(T, left, time))
    union.update(at(T, right, time))
    assert contents(Union((Get("a"), Get("b"))), inputs, time) == {
        r: n for r, n in sorted(union.items()) if n
    }
    joined = Counter()
    for x, m in at(T, left, time).items():
        for y, n in at(T, right, time).items():
            if x[0] == y[1]:
                joined[x + y] += m * n
    assert contents(Join(Get("a"), Get("b"), ((0, 1),)), inputs, time) == {
        r: n for r, n in sorted(joined.items()) if n
    }


@FAST
@given(updates, updates, updates)
def test_join_is_bilinear(a, b, c):
    left = evaluate(Join(Union((Get("a"), Get("b"))), Get("c"), ((0, 0),)), {"a": a, "b": b, "c": c})
    right = evaluate(
        Union((Join(Get("a"), Get("c"), ((0, 0),)), Join(Get("b"), Get("c"), ((0, 0),)))),
        {"a": a, "b": b, "c": c},
    )
    assert consolidate(T, left) == consolidate(T, right)


def test_join_time_is_the_later_and_diffs_multiply():
    out = evaluate(
        Join(Get("a"), Get("b"), ((0, 0),)), {"a": [Update((1, 0), 5, -2)], "b": [Update((1, 9), 2, 3)]}
    )
    assert out == [Update((1, 0, 1, 9), 5, -6)]


def test_until_reaches_nested_temporal_filters_only():
    plan = Union((Get("a"), TemporalFilter(Get("a"), (MzNow("<", 0, 0),))))
    out = evaluate(plan, {"a": [Update((4,), 1, 1)]}, until=3)
    assert out == [Update((4,), 1, 1), Update((4,), 1, 1)]


def test_plans_are_hashable_plain_data():
    plan = TemporalFilter(Filter(Get("t"), [Compare(0, ">", 1)]), [MzNow("<=", 0, 30)])
    assert hash(plan) == hash(TemporalFilter(Filter(Get("t"), (Compare(0, ">", 1),)), (MzNow("<=", 0, 30),)))
    assert plan_inputs(Join(Get("z"), Project(Get("a"), (0,)), ())) == ("a", "z")


def test_typed_errors():
    with pytest.raises(InvalidPlan, match="'=<'"):
        Compare(0, "=<", 1)
    with pytest.raises(InvalidPlan, match="inputs must not be empty"):
        Union(())
    with pytest.raises(UnknownObject, match="'b'"):
        evaluate(Get("b"), {"a": []})
    with pytest.raises(ColumnOutOfRange, match="column 2"):
        evaluate(Project(Get("a"), (2,)), {"a": [Update((1, 2), 0, 1)]})
