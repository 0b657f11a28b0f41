"""Temporal filters: validity intervals, retraction at upper_exclusive, until."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frontier_harness.model.catalog.temporal as temporal
from frontier_harness.model.catalog.temporal import MzNow, temporal_filter
from frontier_harness.model.errors import ColumnOutOfRange, InvalidPlan
from frontier_harness.model.time.collection import Update, at, consolidate
from frontier_harness.model.time.domains import Total

T = Total()
DAY = 24 * 60 * 60 * 1000
FAST = settings(max_examples=200, deadline=None, database=None)

predicates = st.lists(
    st.builds(MzNow, st.sampled_from([">=", "<=", "<"]), st.just(0), st.integers(-5, 5)),
    min_size=1,
    max_size=3,
)
updates = st.lists(
    st.builds(
        lambda v, t, d: Update((v,), t, d),
        st.integers(0, 12),
        st.integers(0, 12),
        st.integers(-2, 2).filter(bool),
    ),
    max_size=8,
)


def valid_at(predicate: MzNow, row: tuple, now: int) -> bool:
    """The SQL meaning of the predicate at `mz_now() = now`, straight from the text."""
    bound = row[predicate.column] + predicate.offset
    return {">=": now >= bound, "<=": now <= bound, "<": now < bound}[predicate.op]


def expected_at(preds, ups, now: int) -> dict:
    """Contents at `now`: the input's contents at `now`, keeping rows every predicate accepts."""
    return {row: n for row, n in at(T, ups, now).items() if all(valid_at(p, row, now) for p in preds)}


def test_seed_30_day_window():
    inserted, event_ts = 1727130590201, 1727130590221
    out = temporal_filter((MzNow("<=", 0, 30 * DAY),), [Update((event_ts,), inserted, 1)], None)
    assert out == [Update((event_ts,), inserted, 1), Update((event_ts,), 1729722590222, -1)]


def test_interval_cases():
    row = [Update((10,), 3, 1)]
    assert temporal_filter((MzNow(">=", 0, 0),), row, None) == [Update((10,), 10, 1)]
    assert temporal_filter((MzNow("<", 0, 0),), row, None) == [Update((10,), 3, 1), Update((10,), 10, -1)]
    assert temporal_filter((MzNow("<", 0, -8),), row, None) == []  # ends before it is inserted
    assert temporal_filter((MzNow(">=", 0, 0), MzNow("<=", 0, 0)), row, None) == [
        Update((10,), 10, 1),
        Update((10,), 11, -1),
    ]
    assert temporal_filter((MzNow(">=", 0, 0), MzNow("<", 0, 0)), row, None) == []  # empty interval


@FAST
@given(predicates, updates, st.integers(0, 25))
def test_contents_match_the_predicates_at_every_time(preds, ups, now):
    assert at(T, temporal_filter(preds, ups, None), now) == expected_at(preds, ups, now)


@FAST
@given(predicates, updates, st.integers(0, 20))
def test_until_drops_only_diffs_at_or_after_it(preds, ups, until):
    full, cut = temporal_filter(preds, ups, None), temporal_filter(preds, ups, until)
    assert all(u.time < until for u in cut)
    assert consolidate(T, cut) == consolidate(T, [u for u in full if u.time < until])


@FAST
@given(predicates, updates, updates)
def test_linear(preds, a, b):
    assert consolidate(T, temporal_filter(preds, a + b, None)) == consolidate(
        T, temporal_filter(preds, a, None) + temporal_filter(preds, b, None)
    )


def test_planted_retraction_at_upper_is_caught(monkeypatch):
    preds, ups = (MzNow("<=", 0, 0),), [Update((2,), 0, 1)]
    assert at(T, temporal_filter(preds, ups, None), 2) == expected_at(preds, ups, 2) == {(2,): 1}
    monkeypatch.setattr(temporal, "upper_exclusive", lambda op, bound: bound)
    assert at(T, temporal_filter(preds, ups, None), 2) != expected_at(preds, ups, 2)


def test_typed_errors():
    with pytest.raises(InvalidPlan, match="'=='"):
        MzNow("==", 0)
    with pytest.raises(ColumnOutOfRange, match=r"column 3 out of range for row \(1,\)"):
        temporal_filter((MzNow(">=", 3),), [Update((1,), 0, 1)], None)
