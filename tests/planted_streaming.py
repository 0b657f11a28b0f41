"""Deliberately broken streaming sources and sinks: the streaming and stateful suites must catch each.

Spark runs a Python source in processes of its own, so a planted bug is a source class
(or a sink writer) the trials are handed, not a patched function. Each factory is
importable as `--impl tests.planted_streaming:NAME`, so a counterexample replays. The
`stateful_*` ones are the stateful suite's trials of the worked example job over a planted
keyed, timed source; `kill_never_fires` a source whose crash points never fire, so a killable
driver armed at one exits without reaching it; `timers_fire_a_batch_late` a planted engine under the
worked processor example, its timers left registered a batch after the one that fired them.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.streaming import StreamingLabel
from frontier_harness.properties.adapters.job import StatefulJobImplementation
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.checks.event_time.processor_reached import TIMERS
from frontier_harness.spark_impl.ingestion.durable_shard import DurableShard
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.streaming.event_source import EventSource, EventStreamReader
from frontier_harness.spark_impl.streaming.sinks import KIND, SCHEMA, SOURCE, BatchWriter
from frontier_harness.spark_impl.streaming.source import UpstreamSource, UpstreamStreamReader, ranges
from frontier_harness.spark_impl.streaming.trial import run_trials
from frontier_harness.spark_impl.streaming.upstream_log import frontier_of, offset_of


class CountingReader(UpstreamStreamReader):
    """Bug: the latest offset counts the records stored, forgetting those the upstream compacted away."""

    def latestOffset(self, start: dict, limit: Any) -> dict:
        counted = frontier_of([len(p["records"]) for p in self.log.partitions()])
        if counted != start["frontier"]:  # the crash point fires where the honest reader's does
            faults.fire(self.path, "before_offsets")
        return {"frontier": counted}


class CountingSource(UpstreamSource):
    def streamReader(self, schema: Any) -> CountingReader:
        return CountingReader(self.options["path"])


class LaggingReader(UpstreamStreamReader):
    """Bug: an off-by-one in `latestOffset` (a partition's last offset taken for its next one): the newest
    record of each partition is never offered, so the last record produced is never read."""

    def latestOffset(self, start: dict, limit: Any) -> dict:
        before = start["frontier"]
        lagging = frontier_of(
            [max(n - 1, offset_of(before, p)) for p, n in enumerate(self.log.next_offsets())]
        )
        if lagging != before:
            faults.fire(self.path, "before_offsets")
        return {"frontier": lagging}


class LaggingSource(UpstreamSource):
    def streamReader(self, schema: Any) -> LaggingReader:
        return LaggingReader(self.options["path"])


class EagerReader(UpstreamStreamReader):
    """Bug: `commit(end)` commits everything the log holds upstream, not what Spark made durable."""

    def commit(self, end: dict) -> None:
        self.log.commit(self.log.upper())


class EagerSource(UpstreamSource):
    def streamReader(self, schema: Any) -> EagerReader:
        return EagerReader(self.options["path"])


class CountingEventReader(EventStreamReader):
    """The counting bug over keyed, timed records."""

    latestOffset = CountingReader.latestOffset


class CountingEventSource(EventSource):
    stream_reader = CountingEventReader


class EagerEventReader(EventStreamReader):
    """The eager commit over keyed, timed records."""

    commit = EagerReader.commit


class EagerEventSource(EventSource):
    stream_reader = EagerEventReader


class DeafReader(UpstreamStreamReader):
    """Bug (in the harness's own source): its crash points never fire."""

    def latestOffset(self, start: dict, limit: Any) -> dict:
        return {"frontier": self.log.upper()}

    def partitions(self, start: dict, end: dict) -> Any:
        return ranges(start["frontier"], end["frontier"])


class DeafSource(UpstreamSource):
    def streamReader(self, schema: Any) -> DeafReader:
        return DeafReader(self.options["path"])


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


def losing_writer(path: str, fault_dir: str) -> BatchWriter:
    """Bug: the sink never stores a batch (it opens its shard, then drops the rows), yet Spark commits it."""

    def write(batch: DataFrame, batch_id: int) -> None:
        DurableShard.open_or_create(path, SOURCE, KIND, SCHEMA)
        faults.fire(fault_dir, "after_sink")

    return write


def _trials(**planted: Any) -> SparkImplementation:
    class Planted(SparkImplementation):
        def observe_streaming(self, domain: Any, histories: Any) -> list[dict]:
            return run_trials(histories, **planted)

    return Planted()


EXAMPLE_JOB = "frontier_harness.streaming_job_example.windowed_counts:factory"


def _stateful_trials(source: type) -> StatefulJobImplementation:
    class Planted(StatefulJobImplementation):
        def observe_stateful(self, domain: Any, histories: Any) -> list[dict]:
            return run_trials(histories, job=self.streaming_job, stateful=True, source=source)

    return Planted(EXAMPLE_JOB)


def latest_offset_backwards() -> SparkImplementation:
    return _trials(source=CountingSource)


def latest_offset_one_behind() -> SparkImplementation:
    return _trials(source=LaggingSource)


def commits_beyond_durable() -> SparkImplementation:
    return _trials(source=EagerSource)


def sink_not_idempotent() -> SparkImplementation:
    return _trials(writer=appending_writer)


def sink_loses_batches() -> SparkImplementation:
    return _trials(writer=losing_writer)


def kill_never_fires() -> SparkImplementation:
    return _trials(source=DeafSource)


def stateful_latest_offset_backwards() -> StatefulJobImplementation:
    return _stateful_trials(CountingEventSource)


def stateful_commits_beyond_durable() -> StatefulJobImplementation:
    return _stateful_trials(EagerEventSource)


PROCESSOR_JOB = "frontier_harness.streaming_job_example.processor_counts:factory"


def fired_a_batch_late(obs: dict) -> dict:
    """`obs` as an engine that keeps every timer registered a batch after the one that fired it leaves it: a
    timer the processor's state held after batch N and not after N+1 is still held after N+1 (`obs`, changed)."""
    for key, rows in list(obs.items()):
        if key[1] != StreamingLabel.PROCESSOR_STATE:
            continue
        read = {(b, op) for b, op, variable, _, _ in rows if variable is None}
        timers = {row for row in rows if row[2] == TIMERS}
        kept = {(b + 1, op, TIMERS, k, at) for b, op, _, k, at in timers if (b + 1, op) in read}
        obs[key] = rows | kept
    return obs


class TimersFireABatchLate(StatefulJobImplementation):
    """Bug (a planted engine): the worked processor example's timers stay registered a batch after the batch
    whose clock reached them, as the state its trials read shows (`fired_a_batch_late`)."""

    def observe_stateful(self, domain: Any, histories: Any) -> list[dict]:
        return [fired_a_batch_late(obs) for obs in super().observe_stateful(domain, histories)]


def timers_fire_a_batch_late() -> StatefulJobImplementation:
    return TimersFireABatchLate(PROCESSOR_JOB)
