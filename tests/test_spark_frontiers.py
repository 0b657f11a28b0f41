"""spark_impl's frontier functions on hand-picked cases from every domain, and the Connect mode."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from frontier_harness.model.time.domains import Partitioned, PartitionedTime, Product, Total
from frontier_harness.spark_impl.arrow import arrow_type
from frontier_harness.spark_impl.time import frontiers
from frontier_harness.spark_impl.time.time_columns import time_columns

pytestmark = pytest.mark.spark
P = PartitionedTime
CASES = [
    # domain, time, frontier, beyond?, advanced
    (Total(), 2, [3], False, 3),
    (Total(), 5, [3], True, 5),
    (Product(Total(), Total()), (0, 0), [(2, 1), (1, 2)], False, (1, 1)),
    (Product(Total(), Total()), (5, 5), [(2, 1)], True, (5, 5)),
    (Partitioned(), P(0, 0, 1), [P(0, 0, 5), P(1, 9, 0)], False, P(0, 0, 5)),
    (Partitioned(), P(3, 3, 2), [P(0, 0, 5), P(1, 9, 0)], True, P(3, 3, 2)),
    (Partitioned(), P(0, 0, 1), [P(1, 9, 0)], False, P(0, 0, 1)),  # no join: unchanged
    (Total(), 4, [], False, 4),  # the closed frontier: nothing beyond it, nothing advances
]


@pytest.mark.parametrize("domain, time, frontier, beyond, advanced", CASES)
def test_less_equal_and_advance_by(spark_session, domain, time, frontier, beyond, advanced):
    tc = time_columns(domain)
    t = arrow_type(tc.spark_type)
    table = pa.table(
        {"t": pa.array([tc.to_row(time)], t), "f": pa.array([[tc.to_row(x) for x in frontier]], pa.list_(t))}
    )
    row = (
        spark_session.createDataFrame(table)
        .select(
            frontiers.less_equal(tc, F.col("f"), F.col("t")).alias("beyond"),
            frontiers.advance_by(tc, F.col("t"), F.col("f")).alias("advanced"),
            frontiers.minimal(tc, F.concat(F.col("f"), F.array(F.col("t")))).alias("minimal"),
        )
        .toArrow()
        .to_pylist()[0]
    )
    assert row["beyond"] is beyond
    assert tc.from_row(row["advanced"]) == advanced
    expected_minimal = set(frontier) if beyond else {x for x in frontier if not domain.le(time, x)} | {time}
    assert {tc.from_row(x) for x in row["minimal"]} == expected_minimal


@pytest.mark.slow  # a Connect server of its own; tests/test_cluster.py runs one over a cluster (nightly)
@pytest.mark.connect
def test_collections_suite_passes_on_spark_connect(tmp_path):
    """`SparkSession.builder.remote("local[2]")`: the same pipeline through Spark Connect."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "frontier_harness.properties.cli.main",
            "--remote",
            "local[2]",
            "check",
            "--suite",
            "collections",
            "--profile",
            "dev",
            "--batched-examples",
            "1",  # one Hypothesis call and one screening call per property and domain: each is a Connect job
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        # a static setting of the user's reaches the harness's own server as it starts, not a running one
        env={**os.environ, "SPARK_REMOTE": "", "FRONTIER_HARNESS_SPARK_CONF": "spark.buffer.pageSize=8m"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
