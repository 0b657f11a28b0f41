"""The stateful suite's plan (`spark_impl/event_time/stateful_plan.py`), read from Spark's plan objects: the
plans of jobs written as a user would, and every refusal ("cannot model ...") in one line."""

from __future__ import annotations

import pytest

from frontier_harness.spark_impl.event_time.prefix import reaching
from frontier_harness.spark_impl.event_time.stateful_plan import stateful_plan
from frontier_harness.spark_impl.streaming.job import JobContractError, WrongSuite
from tests.jobs import refused, stateful

WINDOWED = {
    "window": [10_000, 10_000, 0],
    "window_column": "window",
    "keys": ["key"],
    "deduplication": None,
    "gap": None,
    "inner_window": None,
}
COLUMNS = ["key", "event_time", "data", "partition", "offset"]
PLANS = [
    ("upsert_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "update", "lateness": 5000,
                       "columns": ["key", "window", "count"], **WINDOWED}),
    ("append_windows", {"operator": "aggregation", "delays": [5000], "output_mode": "append", "lateness": 5000,
                        "columns": ["key", "window", "count", "last"], **WINDOWED}),
    ("promises_ten_seconds", {"operator": "aggregation", "delays": [1000], "output_mode": "update",
                              "lateness": 10_000, "columns": ["key", "window", "count"], **WINDOWED}),
    ("deduplicated", {"operator": "dropDuplicatesWithinWatermark", "delays": [5000], "output_mode": "append",
                      "lateness": 5000, "columns": ["key", "data", "event_time"], "keys": ["key", "data"],
                      "window": None, "window_column": None, "deduplication": None, "gap": None, "inner_window": None,
                      "derived": []}),
    ("first_per_tenant", {"operator": "dropDuplicatesWithinWatermark", "delays": [5000], "output_mode": "append",
                          "lateness": 5000, "columns": ["tenant", "key", "data", "event_time"], "keys": ["tenant"],
                          "window": None, "window_column": None, "deduplication": None, "gap": None,
                          "inner_window": None, "derived": ["tenant"]}),
    ("counts_per_key", {"operator": "aggregation", "delays": [5000], "output_mode": "update", "lateness": 5000,
                        "columns": ["key", "count"], "keys": ["key"], "window": None, "window_column": None,
                        "deduplication": None, "gap": None, "inner_window": None}),
    ("deduplicated_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "append", "lateness": 5000,
                             "columns": ["key", "window", "count"], **WINDOWED,
                             "deduplication": {"name": "dropDuplicatesWithinWatermark", "keys": ["data"]},
                             "derived": []}),
    ("rolled_up_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "append", "lateness": 5000,
                          "columns": ["key", "window", "count"], **WINDOWED, "window": [30_000, 30_000, 0],
                          "inner_window": [10_000, 10_000, 0]}),
    ("session_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "append", "lateness": 5000,
                        "columns": ["key", "session_window", "count"], "keys": ["key"], "window": None,
                        "window_column": "session_window", "deduplication": None, "gap": 10_000, "inner_window": None}),
    ("processor_counts", {"operator": "processor", "delays": [5000], "output_mode": "append", "lateness": 5000,
                          "columns": ["key", "due", "count"], "keys": ["key"], "window": None,
                          "window_column": None, "deduplication": None, "gap": None, "inner_window": None, "time_mode": "event_time"}),
    ("quiet_counts", {"operator": "processor", "delays": [], "output_mode": "append", "lateness": None,
                      "columns": ["key", "due", "count"], "keys": ["key"], "window": None,
                      "window_column": None, "deduplication": None, "gap": None, "inner_window": None,
                      "time_mode": "processing_time"}),
    ("idle_group_counts", {"operator": "processor", "delays": [], "output_mode": "append", "lateness": None,
                           "columns": ["key", "due", "count"], "keys": ["key"], "window": None,
                           "window_column": None, "deduplication": None, "gap": None, "inner_window": None,
                           "time_mode": "processing_time"}),
    ("running_counts", {"operator": "processor", "delays": [], "output_mode": "update", "lateness": None,
                        "columns": ["key", "count"], "keys": ["key"], "window": None,
                        "window_column": None, "deduplication": None, "gap": None, "inner_window": None, "time_mode": "none"}),
    ("running_counts_with_timeouts", {"operator": "processor", "delays": [5000], "output_mode": "update",
                                      "lateness": 5000, "columns": ["key", "count"], "keys": ["key"],
                                      "window": None, "window_column": None, "deduplication": None,
                                      "gap": None, "inner_window": None, "time_mode": "event_time"}),
    ("processor_then_window", {"operator": "processor", "delays": [5000], "output_mode": "append",
                               "lateness": 5000, "columns": ["window", "records"], "keys": ["key"], "window": None,
                               "window_column": None, "deduplication": None, "gap": None, "inner_window": None,
                               "time_mode": "event_time"}),
    ("filtered_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "update", "lateness": 5000,
                         "columns": ["key", "window", "count"], **WINDOWED, "prefix": "watermark"}),
    ("filtered_deliveries", {"operator": "dropDuplicatesWithinWatermark", "delays": [5000],
                             "output_mode": "append", "lateness": 5000, "columns": ["key", "data", "event_time"],
                             "keys": ["key", "data"], "window": None, "window_column": None,
                             "deduplication": None, "gap": None, "inner_window": None, "prefix": "watermark",
                             "derived": []}),
    ("early_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "update", "lateness": 5000,
                      "columns": ["key", "window", "count"], **WINDOWED, "prefix": "operator"}),
    ("not_null_counts", {"operator": "aggregation", "delays": [5000], "output_mode": "update", "lateness": 5000,
                         "columns": ["key", "window", "count"], **WINDOWED}),
]  # fmt: skip


def processor_counts(directory: str):
    """The worked processor example, as `PLANS` names the jobs of `tests.jobs.stateful`."""
    from frontier_harness.streaming_job_example.processor_counts import factory

    return factory(directory)


def processor_then_window(directory: str):
    """The worked example of a processor chained with a window aggregation."""
    from frontier_harness.streaming_job_example.processor_then_window import factory

    return factory(directory)


@pytest.mark.spark
@pytest.mark.parametrize("job,plan", PLANS, ids=[p[0] for p in PLANS])
def test_the_plan_of_a_job_as_a_user_writes_it(job, plan, spark_session):
    from tests.jobs import processing_time

    make = {"processor_counts": processor_counts, "processor_then_window": processor_then_window}.get(
        job
    ) or getattr(processing_time if hasattr(processing_time, job) else stateful, job)
    assert stateful_plan(job, spark_session, make("/tmp/unused")) == {"prefix": None, **plan}


REFUSALS = [
    ("complete_mode", "output_mode 'complete' is not supported"),
    ("session_windows", "a session_window aggregation runs in append mode only (Spark refuses update)"),
    (
        "count_over_deduplication",
        "an aggregation over another stateful operator is supported with a window only",
    ),
    ("session_dropped", "a session_window aggregation's output must keep its session_window column"),
    ("two_processors", "more than one processor in a job is not supported"),
    ("chained", "an aggregation over an aggregation runs in append mode only"),
    ("rolled_up_in_update_mode", "an aggregation over an aggregation runs in append mode only"),
    ("rolled_up_from_sliding", "supported over a tumbling window aggregation only"),
    ("rolled_up_by_start", "supported when it groups by a window of the inner window's window_time"),
    ("window_over_derived_time", "a window over a column derived from event_time is not supported"),
    ("stream_stream_join", "a stream-stream join is not supported"),
    ("no_watermark_append", "an append-mode aggregation needs a watermark"),
    ("no_window_append", "an append-mode aggregation needs a window"),
    ("watermark_on_another_column", "withWatermark must name the records' event_time column"),
    ("watermark_over_sample", "withWatermark over Sample: apply it to the records first"),
    (
        "watermark_over_watermark",
        "withWatermark over another withWatermark (delays 2000 ms and 10000 ms): keep one, on the records",
    ),
    (
        "deduplicated_on_derived",
        "deduplicates on m, derived from event_time: a derived key is supported when",
    ),
    (
        "deduplicated_on_derived_without_data",
        "a deduplication on derived keys is supported when the records' data column reaches it",
    ),
    ("filter_between_operators", "a filter between two stateful operators is not supported"),
    (
        "filter_dropping_data",
        "a filter before the stateful operator is supported when the records' data column",
    ),
    ("grouped_by_raw_event_time", "grouping by the raw event_time is not supported"),
    ("window_dropped", "a window aggregation's output must keep its window column"),
    ("transform_raises", "transform(records) raised AnalysisException: [UNRESOLVED_COLUMN"),
    ("lateness_not_an_interval", "lateness 'a little' is not a Spark interval: [INVALID_TYPED_LITERAL]"),
    ("limited", "the stateful operator globalLimit is not supported"),
]


@pytest.mark.spark
def test_what_a_jobs_filters_pass_is_read_per_history(spark_session):
    """`prefix.reaching`: each history's records through the job's filters apart (a `data` names a record
    in its history only: `r1` is dropped in one and kept in the other); under `Prefix.OPERATOR` the
    watermark sees every record."""
    histories = [[("a", 12_000, "r0", 0, 0), ("c", 45_000, "r1", 0, 1)], [("b", 30_000, "r1", 1, 0)], []]
    job = stateful.filtered_counts("/tmp/unused")
    assert reaching(spark_session, job, histories, "watermark") == [
        [(True, True), (False, False)],
        [(True, True)],
        [],
    ]
    assert reaching(spark_session, job, histories, "operator")[0] == [(True, True), (True, False)]


@pytest.mark.spark
@pytest.mark.parametrize("job,problem", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_job_the_suite_cannot_model_is_refused_in_one_line(job, problem, spark_session):
    with pytest.raises(JobContractError) as refusal:
        stateful_plan(job, spark_session, getattr(refused, job)("/tmp/unused"))
    assert not isinstance(refusal.value, WrongSuite)
    message = str(refusal.value)
    assert message.startswith(f"--job {job}: ") and problem in message, message
    assert len(message.splitlines()) == 1, message


@pytest.mark.spark
def test_a_row_wise_job_belongs_to_the_streaming_suite(spark_session):
    with pytest.raises(WrongSuite, match="a row-wise job runs in --suite streaming"):
        stateful_plan("row_wise", spark_session, refused.row_wise("/tmp/unused"))


def test_a_spark_connect_session_is_refused_before_the_job_is_planned():
    connect = type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})()
    with pytest.raises(JobContractError, match="does not run through Spark Connect"):
        stateful_plan("upsert_counts", connect, stateful.upsert_counts("/tmp/unused"))
