"""frontier_harness.spark_impl.as_of on hand-made boundaries: skewed interval lengths, empty intervals, closing, missing keys."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.spark

BOUNDARIES = {
    # lengths from 1 to 10^12 (levels 0..40), an empty interval (6, 6), then the source closes
    "skewed": [(0, 5), (1, 6), (2, 6), (3, 8), (4, 10**12), (5, 10**12 + 1), (6, None), (7, None)],
    "never closes": [(0, 0), (1, 3), (4, 4), (9, 2**40)],
    "closed from the start": [(2, None)],
    "one step": [(0, 7)],
    # intervals across a bucket edge of their level: [3, 6) at level 2, [6, 13) at level 3
    "straddling": [(0, 3), (1, 6), (2, 13)],
}
EDGES = sorted(
    {v for bounds in BOUNDARIES.values() for _, b in bounds if b is not None for v in (b - 1, b, b + 1)} | {0}
)


def first_above(bounds: list, value: int):
    """The oracle: the first step whose bound is above `value` (None: infinite); None when there is none."""
    return next((t for t, b in bounds if b is None or b > value), None)


def assigned(spark, rows: list) -> dict:
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.as_of import as_of

    boundaries = spark.createDataFrame(
        [(k, t, b) for k, bounds in BOUNDARIES.items() for t, b in bounds], "key string, t long, bound long"
    )
    values = spark.createDataFrame(rows, "key string, v long").withColumn(
        "id", F.monotonically_increasing_id()
    )
    out = as_of(boundaries, values, ["key"], "v").select("key", "v", "into_time").collect()
    return sorted((r.key, r.v, r.into_time) for r in out)


def expected(rows: list) -> list:
    return sorted((k, v, first_above(BOUNDARIES.get(k, []), v)) for k, v in rows)


def test_every_value_gets_exactly_the_first_step_above_it(spark_session):
    rows = [(k, v) for k in [*BOUNDARIES, "no boundaries"] for v in EDGES]
    assert assigned(spark_session, rows) == expected(rows)


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(sorted(BOUNDARIES)), st.integers(0, 20) | st.integers(0, 2**41)),
        min_size=1,
        max_size=50,
    )
)
def test_random_values_agree_with_the_oracle(spark_session, rows):
    assert assigned(spark_session, rows) == expected(rows)


def test_a_slot_collision_changes_nothing(spark_session, monkeypatch):
    """Every entry hashed to one slot: the columns re-checked after the lookup still pick the one interval."""
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl import as_of

    monkeypatch.setattr(as_of, "slot", lambda *columns: F.lit(0).cast("long"))
    rows = [(k, v) for k in [*BOUNDARIES, "no boundaries"] for v in EDGES]
    assert assigned(spark_session, rows) == expected(rows)


def test_every_place_has_its_own_slot(spark_session):
    """The index's keys are unique: one row per place, so Spark probes it by one lookup, not an iterator."""
    from frontier_harness.spark_impl import as_of

    boundaries = spark_session.createDataFrame(
        [(k, t, b) for k, bounds in BOUNDARIES.items() for t, b in bounds], "key string, t long, bound long"
    )
    places = as_of._places(as_of.intervals(boundaries, ["key"]), ["key"])
    slots = [row.cut_slot for row in as_of._index(places, ["key"]).select("cut_slot").collect()]
    assert len(slots) == len(set(slots)) > len(BOUNDARIES)
