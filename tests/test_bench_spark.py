"""Spark benchmarks wired into `bench`: the fixed cost of a Spark job per suite, reclocking against consolidation."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from frontier_harness.properties.bench import reclocking, spark_overhead
from frontier_harness.properties.cli.main import main
from frontier_harness.spark_impl.arrow import to_frame


@pytest.mark.slow  # a bench run over every Spark suite: the bench's plumbing, not a law (nightly)
@pytest.mark.spark
def test_spark_overhead_reaches_bench_json_per_suite_and_over_suites(spark_session, tmp_path, monkeypatch):
    monkeypatch.setattr(spark_overhead, "SUITES", ("mutable_antichain", "collections"))
    monkeypatch.setattr(spark_overhead, "CALLS", 2)
    out = tmp_path / "bench.json"
    assert main(["bench", "--only", "spark_overhead", "--json", str(out)]) == 0
    figures = {f["name"]: f["value"] for f in json.loads(out.read_text())["figures"]}
    assert set(figures) == {
        "spark_job_overhead_s.mutable_antichain",
        "spark_job_overhead_s.collections",
        "spark_job_overhead_s",
    }
    assert all(value > 0 for value in figures.values())


def test_the_tiny_history_is_drawn_by_the_suite_and_reproducible():
    first, again = spark_overhead.tiny_history("collections"), spark_overhead.tiny_history("collections")
    assert first == again and first.domain == "total"


@pytest.mark.slow  # 10M-update workloads scaled down still take a Spark minute (nightly)
@pytest.mark.spark
def test_reclocking_is_measured_against_sparks_own_consolidation(spark_session, monkeypatch):
    monkeypatch.setattr(reclocking, "MEDIAN_OF", 1)
    monkeypatch.setattr(reclocking, "REPEATS", 1)
    figures = {f.name: f for f in reclocking.figures(0.0001)}
    assert figures["reclock_seconds"].baseline == "consolidate_seconds"
    assert figures["consolidate_seconds"].value > 0 and figures["reclock_over_sort"].value > 0


@pytest.mark.spark
def test_the_consolidation_baseline_sums_the_same_updates(spark_session):
    rows = reclocking.consolidation_job(1_000).select("time", "diff").collect()
    assert sorted(r["time"] for r in rows) == list(range(1_000)) and {r["diff"] for r in rows} == {1}


@pytest.mark.spark
def test_small_batches_get_the_small_job_settings_and_large_ones_the_large_job_settings(
    spark_session, monkeypatch
):
    from frontier_harness.spark_impl import session

    monkeypatch.setenv("FRONTIER_HARNESS_SPARK_CONF", "spark.sql.constraintPropagation.enabled=true")
    conf, rows_in_plan = spark_session.conf, "spark.sql.execution.arrow.localRelationThreshold"
    session._small_jobs = None  # an earlier test in this worker may have sized the session already
    try:
        session.size_jobs_for(1)
        assert conf.get("spark.sql.autoBroadcastJoinThreshold") == "-1"
        assert conf.get("spark.sql.constraintPropagation.enabled") == "true"  # the user's setting wins
        assert conf.get(rows_in_plan) != "0"  # Spark's default: a small batch's rows in the plan
        session.size_jobs_for(session.SMALL_BATCH + 1)
        assert conf.get("spark.sql.autoBroadcastJoinThreshold") != "-1"
        assert conf.get("spark.sql.constraintPropagation.enabled") == "true"
        assert conf.get(rows_in_plan) == "0"
        plan = to_frame(pa.table({"history_id": [0, 1]}))._jdf.queryExecution().analyzed()
        assert plan.nodeName() != "LocalRelation"  # a large batch's inputs are read, not held in the plan
    finally:
        monkeypatch.delenv("FRONTIER_HARNESS_SPARK_CONF")
        session._small_jobs = None
        session.size_jobs_for(session.SMALL_BATCH + 1)


@pytest.mark.spark
def test_the_reclock_job_shuffles_the_updates_once_and_the_bindings_never(spark_session):
    """The level table and the index are built from the remap in one task each (it is broadcast whole): the
    one exchange is the consolidation's, over the updates, and both broadcast sides read the remap."""
    with reclocking.session_conf(reclocking.LARGE_JOB):
        plan = reclocking.reclock_job(1_000)._jdf.queryExecution().executedPlan()
    nodes = list(_nodes(plan))
    exchanges = [node for node in nodes if node.nodeName() == "Exchange"]
    over_remap = [
        e for e in exchanges if any(_is_scan_of_checkpoint(n) for n in _stage(e.children().apply(0)))
    ]
    broadcasts = [node for node in nodes if node.nodeName() == "BroadcastExchange"]
    assert len(exchanges) == 1 and over_remap == []
    assert len(broadcasts) == 2 and all(any(map(_is_scan_of_checkpoint, _nodes(b))) for b in broadcasts)


def _nodes(plan):
    yield plan
    children = plan.children()
    for i in range(children.size()):
        yield from _nodes(children.apply(i))


def _stage(plan):
    """The nodes that run in `plan`'s stage: down to, not across, the next exchange or broadcast."""
    yield plan
    if "Exchange" in plan.nodeName():
        return
    children = plan.children()
    for i in range(children.size()):
        yield from _stage(children.apply(i))


def _is_scan_of_checkpoint(node) -> bool:
    return node.getClass().getSimpleName() == "RDDScanExec"


@pytest.mark.spark
def test_the_reclock_lookup_fits_the_jits_inlining_budget(spark_session):
    """The stage that looks each update up is one generated method per update; the JVM's optimizing compiler
    inlines calls into a method only up to ~8,000 bytes of bytecode, the method's own counted: at 3,277 bytes
    it left 26 calls uninlined, the reads of the index among them; at 2,299, 8 and none of those (see
    `frontier_harness.spark_impl.reclocking.as_of`). With the keys read off the rows, as a real input's are (their checks
    are no longer folded), 2,671 bytes and 16 calls, one read of the index among them (the leaving interval's
    step, read for a third of the updates)."""
    with reclocking.session_conf(reclocking.LARGE_JOB):
        stages = reclocking.reclock_job(1_000)._jdf.queryExecution().debug().codegenToSeq()
    lookup = [
        stages.apply(i)._3().maxMethodCodeSize()
        for i in range(stages.size())
        if "BroadcastHashJoin" in stages.apply(i)._1()
    ]
    assert lookup and max(lookup) <= 2_700, lookup
