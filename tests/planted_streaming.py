"""Deliberately broken streaming sources and sinks: the streaming suite must catch each.

Spark runs a Python source in processes of its own, so a planted bug is a source class
(or a sink writer) the trials are handed, not a patched function. Each factory is
importable as `--impl tests.planted_streaming:NAME`, so a counterexample replays.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.spark_impl.ingestion.durable_shard import DurableShard
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.streaming.sinks import KIND, SCHEMA, SOURCE, BatchWriter
from frontier_harness.spark_impl.streaming.source import UpstreamSource, UpstreamStreamReader
from frontier_harness.spark_impl.streaming.trial import run_trials
from frontier_harness.spark_impl.streaming.upstream_log import frontier_of


class CountingReader(UpstreamStreamReader):
    """Bug: the latest offset counts the records stored, forgetting those the upstream compacted away."""

    def latestOffset(self, start: dict, limit: Any) -> dict:
        return {"frontier": frontier_of([len(p["records"]) for p in self.log.partitions()])}


class CountingSource(UpstreamSource):
    def streamReader(self, schema: Any) -> CountingReader:
        return CountingReader(self.options["path"])


class EagerReader(UpstreamStreamReader):
    """Bug: `commit(end)` commits everything the log holds upstream, not what Spark made durable."""

    def commit(self, end: dict) -> None:
        self.log.commit(self.log.upper())


class EagerSource(UpstreamSource):
    def streamReader(self, schema: Any) -> EagerReader:
        return EagerReader(self.options["path"])


def appending_writer(path: str, fault_dir: str) -> BatchWriter:
    """Bug: the sink appends every batch it is given, so a batch Spark re-runs is written twice."""

    def write(batch: DataFrame, batch_id: int) -> None:
        shard = DurableShard.open_or_create(path, SOURCE, KIND, SCHEMA)
        upper = shard.upper(0)[0]
        shard.append(
            batch.withColumn("batch_id", F.lit(batch_id)), {0: [upper]}, {0: [max(upper, batch_id + 1)]}
        )
        faults.fire(fault_dir, "after_sink")

    return write


def _trials(**planted: Any) -> SparkImplementation:
    class Planted(SparkImplementation):
        def observe_streaming(self, domain: Any, histories: Any) -> list[dict]:
            return run_trials(histories, **planted)

    return Planted()


def latest_offset_backwards() -> SparkImplementation:
    return _trials(source=CountingSource)


def commits_beyond_durable() -> SparkImplementation:
    return _trials(source=EagerSource)


def sink_not_idempotent() -> SparkImplementation:
    return _trials(writer=appending_writer)
