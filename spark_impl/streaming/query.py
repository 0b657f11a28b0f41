"""One streaming query of a trial: our source into a durable sink, with a checkpoint.

`start_query` is the only place a trial's query is built, in the harness's session
and in a killable driver process (`frontier_harness.spark_impl.streaming.killable`) alike.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from frontier_harness.model.vocabulary.streaming import Sink, Trigger
from frontier_harness.spark_impl.streaming.job import is_join, job_writer, joined, plan_operators, transformed
from frontier_harness.spark_impl.streaming.sinks import BatchWriter
from frontier_harness.spark_impl.ttl.state.query import ROCKSDB

TRIGGERS = tuple(Trigger)
PROCESSING_TIME = "100 milliseconds"
TRIGGER_OPTIONS: dict[str, dict[str, Any]] = {
    Trigger.PROCESSING_TIME: {"processingTime": PROCESSING_TIME},
    Trigger.AVAILABLE_NOW: {"availableNow": True},
    Trigger.ONCE: {"once": True},
}
ENDING = (Trigger.AVAILABLE_NOW, Trigger.ONCE)  # a start under these ends by itself
SINKS = tuple(Sink)  # `job`: a user's job (`frontier_harness.spark_impl.streaming.job`), under `--job`
# A trial's checkpoint is on the local disk, where Hadoop's FileContext (Spark's default checkpoint manager)
# runs `readlink` or `chmod` as a process for each file it touches (no native Hadoop library): 56,000 processes
# in `check --suite streaming --profile ci`, most of its CPU. The FileSystem-based manager renames a
# finished file into place as the default does, and starts no process. Its package moved in Spark 4.2.
CHECKPOINT_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"
FILE_SYSTEM_MANAGERS = tuple(
    f"org.apache.spark.sql.execution.streaming.{package}FileSystemBasedCheckpointFileManager"
    for package in ("checkpointing.", "")
)

# A user's processor (`transformWithState...`) keeps its state in column families, which only the RocksDB
# state store provider has: Spark refuses the query under its default provider.
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
PROCESSORS = {"TransformWithState", "TransformWithStateInPandas", "TransformWithStateInPySpark"}


@attrs.frozen
class QuerySpec:
    """Where a trial's query reads and writes, and how it is triggered."""

    root: Path
    trigger: str = Trigger.PROCESSING_TIME
    sink: str = Sink.SHARD
    job: str | None = None  # a user's job, MODULE:FACTORY: its sink replaces the history's
    continuous: bool = False  # the starts share their Python workers, as one running query's batches do

    @property
    def workers(self) -> str:
        """The id the Python workers of a `continuous` query's starts share (`python_workers`)."""
        return "run-" + hashlib.sha1(str(self.root).encode()).hexdigest()[:16]

    @property
    def log(self) -> Path:
        return self.root / "upstream"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"

    @property
    def sink_dir(self) -> Path:
        return self.root / "sink"

    @property
    def job_dir(self) -> Path:
        """The directory the user's job owns (empty at its first start)."""
        return self.root / "job"


def start_query(
    session: Any,
    source_name: str,
    spec: QuerySpec,
    writer: Callable[[str, str], BatchWriter],
    job: Any = None,
):
    """Starts the query and waits until its source is initialized (Spark allows 10 s for a Python
    source's process to connect back, so queries are started one at a time). With a user's `job`
    (built by the caller for this start), the stream is its `transform` into its wrapped `write`, in the
    job's `output_mode` (append unless it says)."""
    _checkpoints_without_processes(session)
    reader = session.readStream.format(source_name).option("path", str(spec.log))
    if job is not None and is_join(job):  # two sources over the log, one per side
        stream = joined(job, lambda side: reader.option("side", side).load())
    else:
        stream = reader.load()
        if job is not None:
            stream = transformed(job, stream)
            _state_store_for_processors(session, stream)
    out = stream.writeStream.option("checkpointLocation", str(spec.checkpoint))
    if job is not None:
        out = out.foreachBatch(job_writer(job, str(spec.log))).outputMode(
            getattr(job, "output_mode", "append")
        )
    elif spec.sink == Sink.SHARD:
        out = out.foreachBatch(writer(str(spec.sink_dir), str(spec.log)))
    else:
        out = out.format("parquet").option("path", str(spec.sink_dir))
    query = out.trigger(**TRIGGER_OPTIONS[spec.trigger]).start()
    while query.isActive and query.status["message"] == "Initializing sources":
        time.sleep(0.05)
    return query


def _state_store_for_processors(session: Any, stream: Any) -> None:
    """The RocksDB state store provider for a stream through a user's processor (`PROCESSORS`), unless the
    session names a provider of its own (which Spark then judges)."""
    if session.conf.get(PROVIDER, None) is None and PROCESSORS & set(plan_operators(stream)):
        session.conf.set(PROVIDER, ROCKSDB)


def _checkpoints_without_processes(session: Any) -> None:
    """The FileSystem-based checkpoint manager, under the name this Spark knows it by (a classic session; a
    Spark Connect server keeps its own setting)."""
    jvm = getattr(session, "_jvm", None)
    if jvm is None or session.conf.get(CHECKPOINT_MANAGER, None) in FILE_SYSTEM_MANAGERS:
        return
    loadable = [
        name for name in FILE_SYSTEM_MANAGERS if jvm.org.apache.spark.util.Utils.classIsLoadable(name)
    ]
    if loadable:
        session.conf.set(CHECKPOINT_MANAGER, loadable[0])


def drain(query: Any, trigger: str) -> None:
    """Until everything the source offers is processed: an `availableNow` run ends by itself, as a `once`
    start does after its one batch; a `processingTime` query runs on. Raises `StreamingQueryException` if the
    query failed."""
    if trigger in ENDING:
        query.awaitTermination()
    else:
        query.processAllAvailable()
