"""frontier_harness.spark_impl.reclocking.as_of on hand-made boundaries: skewed interval lengths, empty intervals, closing, missing keys."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
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
    # three intervals of level 3 in the bucket [8, 16): [3, 9) entering it, [9, 14) inside, [14, 20) leaving
    "three in a bucket": [(0, 3), (1, 9), (2, 14), (3, 20)],
    # lengths past a double's 53 bits (2^53 + 2 reads as 2^53): the level must still be exact
    "beyond a double": [(0, 2**53 - 1), (1, 2**54 + 1), (2, 2**54 + 3), (3, 2**62 + 2**61 + 7)],
}
EDGES = sorted(
    {v for bounds in BOUNDARIES.values() for _, b in bounds if b is not None for v in (b - 1, b, b + 1)} | {0}
)


def first_above(bounds: list, value: int):
    """The oracle: the first step whose bound is above `value` (None: infinite); None when there is none."""
    return next((t for t, b in bounds if b is None or b > value), None)


def assigned(spark, rows: list, per_key: dict = BOUNDARIES) -> dict:
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.reclocking.as_of import as_of

    boundaries = boundaries_frame(spark, per_key)
    values = spark.createDataFrame(rows, "key string, v long").withColumn(
        "id", F.monotonically_increasing_id()
    )
    out = as_of(boundaries, values, ["key"], "v").select("key", "v", "into_time").collect()
    return sorted((r.key, r.v, r.into_time) for r in out)


def boundaries_frame(spark, per_key: dict):
    """`(key, t, bound)` rows of `per_key`."""
    return spark.createDataFrame(
        [(k, t, b) for k, bounds in per_key.items() for t, b in bounds], "key string, t long, bound long"
    )


def index_slots(spark, per_key: dict) -> list:
    """The slots of the index that `per_key`'s boundaries file."""
    from frontier_harness.spark_impl.reclocking import as_of

    places = as_of._places(as_of.intervals(boundaries_frame(spark, per_key), ["key"]), ["key"])
    return [row.cut_slot for row in as_of._index(places, ["key"]).select("cut_slot").collect()]


def expected(rows: list, per_key: dict = BOUNDARIES) -> list:
    return sorted((k, v, first_above(per_key.get(k, []), v)) for k, v in rows)


@st.composite
def monotone_boundaries(draw) -> dict:
    """Per key, steps `0..n-1` whose bounds never decrease (steps of 0 make empty intervals, jumps of 2^40 new
    levels), the source closing (bound None) from a drawn step on, or never."""
    per_key = {}
    for key in draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True)):
        steps = draw(st.integers(1, 8))
        closes = draw(st.none() | st.integers(0, steps - 1))
        jumps = draw(
            st.lists(st.sampled_from([0, 1, 2, 3, 7, 100, 2**20, 2**40]), min_size=steps, max_size=steps)
        )
        start = draw(st.integers(0, 5))
        bounds = [start + sum(jumps[: t + 1]) for t in range(steps)]
        per_key[key] = [(t, None if closes is not None and t >= closes else b) for t, b in enumerate(bounds)]
    return per_key


def test_every_value_gets_exactly_the_first_step_above_it(spark_session):
    rows = [(k, v) for k in [*BOUNDARIES, "no boundaries"] for v in EDGES]
    assert assigned(spark_session, rows) == expected(rows)


# the same ten in every run (CI is deterministic); the session fixture is the process's session, nothing per example
@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    monotone_boundaries(),
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "none"]), st.integers(0, 40) | st.integers(0, 2**41)),
        min_size=1,
        max_size=40,
    ),
)
def test_random_values_agree_with_the_oracle(spark_session, per_key, rows):
    assert assigned(spark_session, rows, per_key) == expected(rows, per_key)


def test_a_slot_collision_changes_nothing(spark_session, monkeypatch):
    """Every key and level hashed alike, so the places of different keys and levels share slots: the key and
    level re-checked after the lookup still pick the one interval (once they match, the slot fixes the bucket)."""
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.reclocking import as_of

    monkeypatch.setattr(as_of, "key_level", lambda keys: F.lit(0).cast("long"))
    rows = [(k, v) for k in [*BOUNDARIES, "no boundaries"] for v in EDGES]
    assert assigned(spark_session, rows) == expected(rows)


def test_a_key_hash_collision_changes_nothing(spark_session, monkeypatch):
    """Every key hashed alike, so each value's lookup of its key's levels meets every key's: the keys checked
    after the lookup keep its own."""
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.reclocking import as_of

    monkeypatch.setattr(as_of, "_key_hash", lambda keys, types, prefix="": F.lit(0).cast("long"))
    rows = [(k, v) for k in [*BOUNDARIES, "no boundaries"] for v in EDGES]
    assert assigned(spark_session, rows) == expected(rows)


def test_a_key_held_as_int_by_the_values_and_as_long_by_the_boundaries_meets_its_levels(spark_session):
    """Both sides hash the key as a `long`: an `int` and a `long` of one number hash apart, and a boundaries' key
    beyond an `int` is no error."""
    from frontier_harness.spark_impl.reclocking.as_of import as_of

    per_key = {7: [(0, 5), (1, 9)], 2**31 - 1: [(0, 1), (1, None)], 2**40: [(0, 3)]}
    boundaries = spark_session.createDataFrame(
        [(k, t, b) for k, bounds in per_key.items() for t, b in bounds], "key long, t long, bound long"
    )
    rows = [(k, v) for k in [7, 2**31 - 1, 8] for v in (0, 4, 5, 8, 9)]
    values = spark_session.createDataFrame(rows, "key int, v long")
    out = as_of(boundaries, values, ["key"], "v").collect()
    assert sorted((r.key, r.v, r.into_time) for r in out) == expected(rows, per_key)


def test_every_place_has_its_own_slot(spark_session):
    """The index's keys are unique: one row per place, so Spark probes it by one lookup, not an iterator."""
    slots = index_slots(spark_session, BOUNDARIES)
    assert len(slots) == len(set(slots)) > len(BOUNDARIES)


def test_one_level_files_its_places_under_consecutive_slots(spark_session):
    """A key whose intervals share one level (an upper advancing by steady amounts) gets consecutive slots,
    one per bucket, so Spark keeps the index in an array no larger than its places; an interval unbounded
    on either side is not in the index (its step rides on the key's row of levels) and cannot scatter the
    slots."""
    steady = {"key": [(t, 100 * (t + 1)) for t in range(50)] + [(50, None)]}
    slots = index_slots(spark_session, steady)
    assert len(slots) >= 39 and sorted(slots) == list(range(min(slots), min(slots) + len(slots)))
    rows = [("key", v) for v in (0, 99, 100, 4999, 5000, 5099, 5100, 10**9)]
    assert assigned(spark_session, rows, steady) == expected(rows, steady)
