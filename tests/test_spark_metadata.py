"""The reader of Spark's own metadata (`spark_impl/event_time/plan_metadata.py`, `checkpoint_metadata.py`)
against real plans and real checkpoints of PySpark 4.3: what a plan says Spark will key the checkpoint on is
what Spark writes there."""

from __future__ import annotations

import json
import shutil

import pytest
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.event_time import (
    FieldKey,
    OperatorKey,
    Recorded,
    SourceKey,
    WatermarkKey,
)
from frontier_harness.spark_impl.errors import CheckpointUnreadable, NotACheckpoint, PlanNotReadable
from frontier_harness.spark_impl.event_time.checkpoint_metadata import checkpoint_metadata
from frontier_harness.spark_impl.event_time.plan_metadata import plan_metadata
from frontier_harness.spark_impl.streaming.event_source import NAME, EventSource
from tests.stateful_checkpoints import PARTITIONS, _stream, written
from tests.upgrade_runs import from_spark35

pytestmark = pytest.mark.spark


def _records(spark):
    spark.dataSource.register(EventSource)
    return spark.readStream.format(NAME).option("path", "/nonexistent").load()


def _shape(fields):
    return [(f[FieldKey.NAME], json.dumps(f[FieldKey.TYPE])) for f in fields]


def test_the_plan_names_the_state_spark_writes_to_the_checkpoint(spark_session):
    checkpoint = written(spark_session, "hdfs")
    session = spark_session.newSession()
    session.conf.set("spark.sql.shuffle.partitions", str(PARTITIONS))
    planned = plan_metadata(session, _stream(session).groupBy(F.window("timestamp", "2 seconds")).count())
    recorded = checkpoint_metadata(spark_session, checkpoint)
    [before], [after] = planned[Recorded.OPERATORS], recorded[Recorded.OPERATORS]
    for key in (OperatorKey.ID, OperatorKey.NAME, OperatorKey.PARTITIONS):
        assert before[key] == after[key], key
    assert _shape(before[OperatorKey.KEY]) == _shape(after[OperatorKey.KEY]) == [
        ("window", json.dumps({"type": "struct", "fields": [
            {"name": "start", "type": "timestamp", "nullable": True, "metadata": {}},
            {"name": "end", "type": "timestamp", "nullable": True, "metadata": {}},
        ]}))
    ]  # fmt: skip
    assert _shape(before[OperatorKey.VALUE]) == _shape(after[OperatorKey.VALUE]) == [("count", '"long"')]
    # the delay Spark records on the window key, and the window: planned, and measured on the held rows
    assert (
        before[OperatorKey.KEY][0][FieldKey.DELAY_MS] == after[OperatorKey.KEY][0][FieldKey.DELAY_MS] == 2000
    )
    assert (before[OperatorKey.WINDOW], after[OperatorKey.WINDOW]) == ([2000, 2000, 0], [2000, None, None])
    assert after[OperatorKey.GROUPS] == [
        {"window": {"start": s, "end": s + 2000}} for s in (0, 2000)
    ]  # the windows the watermark (1 s) has not evicted
    assert planned[Recorded.CONF] == {
        k: v for k, v in recorded[Recorded.CONF].items() if k in planned[Recorded.CONF]
    }
    assert (recorded[Recorded.BATCH], recorded[Recorded.COMMITTED], recorded[Recorded.WATERMARK_MS]) == (
        4,
        4,
        1000,
    )
    assert [s[SourceKey.KIND] for s in planned[Recorded.SOURCES]] == ["rate-micro-batch"]
    assert len(recorded[Recorded.SOURCES]) == 1


def test_a_plan_reads_keys_values_aggregates_windows_and_filters_with_their_lineage(spark_session):
    records = _records(spark_session).withWatermark("event_time", "5 seconds")
    renamed = (
        records.where("data != 'y'")
        .groupBy(F.col("key").alias("user"), F.expr("window(event_time, '10 seconds', '5 seconds')"))
        .agg(F.sum("offset").alias("n"), F.count("*").alias("m"))
        .where("n > 1")
    )
    recorded = plan_metadata(spark_session, renamed)
    [op] = recorded[Recorded.OPERATORS]
    assert [f[FieldKey.NAME] for f in op[OperatorKey.KEY]] == ["key", "window"]  # Spark keys by the column
    assert op[OperatorKey.KEY][0][FieldKey.LINEAGE] == "key"
    assert [(f[FieldKey.NAME], f[FieldKey.TYPE]) for f in op[OperatorKey.VALUE]] == [
        ("sum", "long"),
        ("count", "long"),
    ]
    assert op[OperatorKey.AGGREGATES] == ["sum(offset)", "count(1)"]
    assert op[OperatorKey.WINDOW] == [10_000, 5_000, 0]
    assert "NOT (data = y)" in op[OperatorKey.ROWS]
    assert recorded[Recorded.OUTPUT_ROWS] == ["((sum(offset)) > cast(1 as bigint))"]
    assert [(f[FieldKey.NAME], f[FieldKey.LINEAGE]) for f in recorded[Recorded.OUTPUT]][0] == ("user", "key")
    assert recorded[Recorded.WATERMARKS] == [
        {
            WatermarkKey.COLUMN: "event_time",
            WatermarkKey.DELAY_MS: 5000,
            WatermarkKey.BELOW: ["StreamingRelationV2"],
        }
    ]
    assert recorded[Recorded.SOURCES] == [{SourceKey.KIND: NAME, SourceKey.OPTIONS: {"path": "/nonexistent"}}]


def test_the_same_window_written_as_sql_renders_the_same_lineage(spark_session):
    records = _records(spark_session).withWatermark("event_time", "5 seconds")
    api = records.groupBy("key", F.window("event_time", "10 seconds")).count()
    sql = records.groupBy(F.expr("window(event_time, '10 seconds')"), "key").count()
    lineage = [
        {
            f[FieldKey.NAME]: f[FieldKey.LINEAGE]
            for f in plan_metadata(spark_session, frame)[Recorded.OPERATORS][0][OperatorKey.KEY]
        }
        for frame in (api, sql)
    ]
    assert lineage[0] == lineage[1]


def test_deduplications_key_on_their_columns_with_the_value_spark_keeps(spark_session):
    records = _records(spark_session).withWatermark("event_time", "5 seconds")
    plain, within = (
        plan_metadata(spark_session, frame)[Recorded.OPERATORS][0]
        for frame in (records.dropDuplicates(["key", "data"]), records.dropDuplicatesWithinWatermark(["key"]))
    )
    assert (plain[OperatorKey.NAME], within[OperatorKey.NAME]) == ("dedupe", "dedupeWithinWatermark")
    assert [f[FieldKey.NAME] for f in plain[OperatorKey.KEY]] == ["key", "data"]
    assert [f[FieldKey.NAME] for f in within[OperatorKey.VALUE]] == ["expiresAtMicros"]


def test_operators_are_numbered_top_down_as_spark_numbers_them(spark_session):
    records = _records(spark_session).withWatermark("event_time", "5 seconds")
    chained = (
        records.dropDuplicates(["key", "event_time"])
        .groupBy("key", F.window("event_time", "10 seconds"))
        .count()
    )
    names = [
        (op[OperatorKey.ID], op[OperatorKey.NAME])
        for op in plan_metadata(spark_session, chained)[Recorded.OPERATORS]
    ]
    assert names == [(0, "stateStoreSave"), (1, "dedupe")]


def test_a_connect_session_is_refused_in_one_line():
    class Connect:  # what a Spark Connect client holds: no JVM
        conf = None

    with pytest.raises(PlanNotReadable, match="only explain's text and the output schema"):
        plan_metadata(Connect(), object())


def test_a_directory_that_is_not_a_checkpoint_and_a_torn_schema_file_are_named(spark_session, tmp_path):
    with pytest.raises(NotACheckpoint, match="no metadata file"):
        checkpoint_metadata(spark_session, tmp_path)
    torn = shutil.copytree(written(spark_session, "hdfs"), tmp_path / "ck")
    schema = torn / "state" / "0" / "0" / "_metadata" / "schema"
    schema.write_bytes(schema.read_bytes()[:20])
    with pytest.raises(CheckpointUnreadable, match="not a state schema file"):
        checkpoint_metadata(spark_session, torn)


def test_a_checkpoint_that_committed_no_batch_names_no_group_held(spark_session, tmp_path):
    """The groups held are read at the newest committed batch: with none (its commits lost, or a crash
    before the first), none is named, though the state's files are there."""
    checkpoint = from_spark35(tmp_path) / "checkpoint"
    assert checkpoint_metadata(spark_session, checkpoint)[Recorded.OPERATORS][0][OperatorKey.GROUPS]
    shutil.rmtree(checkpoint / "commits")
    [operator] = checkpoint_metadata(spark_session, checkpoint)[Recorded.OPERATORS]
    assert operator[OperatorKey.GROUPS] == [] and operator[OperatorKey.KEY] is not None
