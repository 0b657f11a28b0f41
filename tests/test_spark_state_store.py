"""The state reader (`spark_impl/event_time/state_store.py`) on real checkpoints of PySpark 4.3.

Pins what Spark's own state data source returns: the operators `state-metadata` lists, the
columns `statestore` gives a windowed aggregation and `dropDuplicatesWithinWatermark`,
eviction by the watermark, and the error a missing or truncated state file makes.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from pyspark.sql import functions as F

from frontier_harness.spark_impl.errors import StateUnreadable
from frontier_harness.spark_impl.event_time.state_bounds import bounds
from frontier_harness.spark_impl.event_time.state_store import (
    READ_TASKS,
    OperatorState,
    operators,
    read_or_raise,
    state_rows,
    window_end_ms,
)
from tests.stateful_checkpoints import PARTITIONS, copy, written
from tests.upgrade_runs import from_spark35

pytestmark = pytest.mark.spark


def _watermark(checkpoint, batch: int) -> int:
    return json.loads((checkpoint / "offsets" / str(batch)).read_text().splitlines()[1])["batchWatermarkMs"]


def test_a_windowed_count_has_one_operator_whose_state_holds_only_windows_after_the_watermark(spark_session):
    ck = written(spark_session, "hdfs")
    [op] = operators(spark_session, ck)
    assert op == OperatorState(0, "stateStoreSave", ("default",), PARTITIONS, op.min_batch, 4)
    rows = state_rows(spark_session, ck, 4)
    assert rows.columns == ["key", "value", "partition_id"]
    assert (
        rows.schema["key"].dataType.simpleString() == "struct<window:struct<start:timestamp,end:timestamp>>"
    )
    assert rows.schema["value"].dataType.simpleString() == "struct<count:bigint>"
    ends = sorted(r[0] for r in rows.select(window_end_ms(rows)).collect())
    assert ends and min(ends) > _watermark(ck, 4)  # evicted at or below the batch's watermark
    # events at 0-3 s, so the watermark is 1 s: windows [0 s, 2 s) and [2 s, 4 s) are both kept
    assert (_watermark(ck, 4), set(ends)) == (1000, {2000, 4000})


def test_the_trials_state_bounds_count_each_stores_entries_by_the_bound_that_evicts_them(
    spark_session, tmp_path
):
    """`state_bounds.bounds`, the stateful trials' reader, over several stores in one Spark job. The window
    count's entries are bounded by their windows' ends: after batch 0 (events at 0 s) one window, [0 s, 2 s),
    after batch 4 that one and [2 s, 4 s), each one entry (its key is the window). The deduplication on
    `(value, timestamp)` keeps the 4 records of each batch (event time its id in seconds) as 4 entries bounded
    by that time, those at or below the batch's watermark evicted (0 s after batch 0, 1 s after batch 4). None
    for a checkpoint without the operator's state. The four stores of two partitions each are read in one
    Spark job of `READ_TASKS` tasks, not one task a store's partition (each of which would deserialize every
    store's Hadoop configuration)."""
    counts, dedup = written(spark_session, "hdfs"), written(spark_session, "dedup_on_event_time")
    stores = [(counts, 0, 0), (counts, 4, 0), (dedup, 3, 0), (dedup, 4, 0), (tmp_path, 4, 0)]
    with job_group(spark_session, "bounds") as tasks:
        read = bounds(spark_session, stores)
    assert read == [
        {2000: 1},
        {2000: 1, 4000: 1},
        {1000: 4, 2000: 4, 3000: 4},
        {2000: 4, 3000: 4},
        None,
    ]
    assert tasks == [READ_TASKS], tasks  # one job, one stage


@contextlib.contextmanager
def job_group(spark, group: str):
    """The tasks of each stage the Spark jobs run in the `with` block ran, in a list it fills on exit."""
    context, tasks = spark.sparkContext, []
    context.setJobGroup(group, group)
    try:
        yield tasks
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
        tracker = context.statusTracker()
        for job in sorted(tracker.getJobIdsForGroup(group)):
            tasks += [tracker.getStageInfo(stage).numTasks for stage in tracker.getJobInfo(job).stageIds]


@pytest.mark.slow  # a third query to write (~20 s)
def test_a_deduplication_within_the_watermark_keys_by_its_columns_with_an_expiry(spark_session):
    ck = written(spark_session, "dedup")
    [op] = operators(spark_session, ck)
    assert op.name == "dedupeWithinWatermark"
    rows = state_rows(spark_session, ck, op.max_batch)
    assert rows.schema["key"].dataType.simpleString() == "struct<value:bigint>"
    assert rows.schema["value"].dataType.simpleString() == "struct<expiresAtMicros:bigint>"
    assert window_end_ms(rows) is None
    assert rows.where(F.col("value.expiresAtMicros") <= _watermark(ck, op.max_batch) * 1000).count() == 0


def test_a_stateless_checkpoint_has_no_operators(spark_session, tmp_path):
    (tmp_path / "offsets").mkdir()
    assert operators(spark_session, tmp_path) == []


def test_a_deleted_delta_is_unreadable_naming_the_file(spark_session, tmp_path):
    ck = copy(spark_session, "hdfs", tmp_path / "ck")
    (ck / "state" / "0" / "1" / "3.delta").unlink()
    with pytest.raises(StateUnreadable, match=r"state/0/1/3\.delta"):
        read_or_raise(ck, state_rows(spark_session, ck, 4).count)


def test_a_truncated_delta_is_unreadable(spark_session, tmp_path):
    ck = copy(spark_session, "hdfs", tmp_path / "ck")
    delta = ck / "state" / "0" / "0" / "5.delta"
    delta.write_bytes(delta.read_bytes()[:20])
    (delta.parent / ".5.delta.crc").unlink()
    with pytest.raises(StateUnreadable, match="CANNOT_LOAD_STATE_STORE") as raised:
        read_or_raise(ck, state_rows(spark_session, ck, 4).count)
    assert raised.value.file is None  # Spark says EOFException, not which file


def test_a_checkpoint_spark_3_5_wrote_lists_no_operator_metadata_and_its_state_is_read_by_directory(
    spark_session, tmp_path
):
    """Spark 3.5 wrote no operator metadata: `state-metadata` lists nothing on its checkpoint, so the operators
    come from the state directories, their kind unknown, and `statestore` reads their rows."""
    ck = from_spark35(tmp_path) / "checkpoint"
    assert spark_session.read.format("state-metadata").load(str(ck)).collect() == []
    assert operators(spark_session, ck) == [OperatorState(0, None, ("default",), 1, 0, 2)]
    held = state_rows(spark_session, ck, 2).select("key.key", "value.count").collect()
    assert [tuple(r) for r in held] == [("a", 1)]
