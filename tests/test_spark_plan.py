"""Spark plan evaluation: the seed's temporal window, joins and until, against hand-computed answers."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from frontier_harness.spark_impl.catalog import plan as P

pytestmark = pytest.mark.spark

GET = {"node": "get", "name": "t"}


def run(rows, plan, until=None):
    table = P.rows_table([(0, 0, name, data, time, diff) for name, data, time, diff in rows])
    out = P.evaluate_queries(table, [P.Query(0, 0, 1, plan, until)]).toArrow().to_pylist()
    return sorted((tuple(r["data"]), r["time"], r["diff"]) for r in out)


def test_temporal_window_retracts_at_upper_exclusive_and_until_drops(spark_session):
    plan = {"node": "temporal", "input": GET, "predicates": [["<=", 0, 30]]}
    assert run([("t", [5, 1], 2, 1)], plan) == [((5, 1), 2, 1), ((5, 1), 36, -1)]
    assert run([("t", [5, 1], 2, 1)], plan, until=36) == [((5, 1), 2, 1)]
    lower = {"node": "temporal", "input": GET, "predicates": [[">=", 0, 0], ["<", 1, 0]]}
    assert run([("t", [4, 9], 1, 2), ("t", [4, 3], 1, 1)], lower) == [((4, 9), 4, 2), ((4, 9), 9, -2)]


def test_join_times_join_and_diffs_multiply_union_and_project(spark_session):
    join = {"node": "join", "left": GET, "right": {"node": "get", "name": "u"}, "on": [[0, 1]]}
    rows = [("t", [1, 2], 3, 2), ("u", [7, 1], 5, -1), ("u", [7, 2], 0, 1)]
    assert run(rows, join) == [((1, 2, 7, 1), 5, -2)]
    union = {
        "node": "union",
        "inputs": [
            {"node": "project", "input": GET, "columns": [1]},
            {"node": "filter", "input": GET, "predicates": [[0, ">", 0]]},
        ],
    }
    assert run([("t", [1, 2], 3, 1)], {"node": "project", "input": union, "columns": [0]}) == [
        ((1,), 3, 1),
        ((2,), 3, 1),
    ]


def test_temporal_events_column_on_a_generated_frame(spark_session):
    frame = spark_session.range(3).select(
        F.array(F.col("id")).alias("data"), F.col("id").alias("time"), F.lit(1).cast("long").alias("diff")
    )
    preds = F.array(
        F.struct(
            F.lit("<").alias("op"), F.lit(0).cast("long").alias("col"), F.lit(2).cast("long").alias("off")
        )
    )
    events = frame.select(
        F.explode(P.temporal_events(F.col("data"), F.col("time"), F.col("diff"), preds, F.lit(None)))
    )
    assert sorted((r.col.time, r.col.diff) for r in events.collect()) == [
        (0, 1),
        (1, 1),
        (2, -1),
        (2, 1),
        (3, -1),
        (4, -1),
    ]
