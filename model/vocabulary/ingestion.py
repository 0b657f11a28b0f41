"""Words of the ingestion capability's suites: resumption, streaming and checkpoint.

A *resumption* history drives the ingestion pipeline (`frontier_harness.model.ingestion.ingestion`):
the upstream `produce`s records (`partition`, `data`) and compacts, the pipeline
`ingest`s at a `tick`, `checkpoint`s (`compact_first`) and `restart`s; a `fault` names
the `Fault` point where the process dies. It is observed at each commit and at its end
under the `ResumptionLabel`s.

A *streaming* history drives a Structured Streaming query: `query` (its `trigger` and
`sink`), `produce`, `trigger` (a `CrashPoint` `fault`, `kill`), `upstream_compact`,
`restart`; each trigger and restart is observed under the `StreamingLabel`s.

A *stateful* history is a streaming history whose `produce` also names the record's `key` and
`event_time` (epoch milliseconds); its trials run a user's stateful job (`OutputMode`) and are
observed under the `StreamingLabel`s. The job's plan, as spark_impl reads
it, is a dict keyed by `PlanKey` (its `StatefulOperator`).

A *checkpoint* history is a Structured Streaming checkpoint read as actions
(`LogAction`, arguments `LogArg`): the reader and the generator write it, the laws and
the streaming suite read it. The trials and the reader both read Spark's logs
(`CheckpointLog`) and our source's offsets (`SourceOffsets`).

>>> Fault("after_commit") is Fault.AFTER_COMMIT
True
>>> INGEST_FAULTS + CHECKPOINT_FAULTS == tuple(Fault)
True
>>> sorted(IngestionAction)
['checkpoint', 'ingest', 'produce', 'restart', 'upstream_compact']
>>> f"crash {CrashPoint.AFTER_SINK}"
'crash after_sink'
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import Word


class IngestionAction(Word):
    """A step of a resumption history: `produce(partition, data)`, `upstream_compact`, `ingest(tick,
    fault?)`, `checkpoint(compact_first?, fault?)`, `restart`."""

    PRODUCE = "produce"
    UPSTREAM_COMPACT = "upstream_compact"
    INGEST = "ingest"
    CHECKPOINT = "checkpoint"
    RESTART = "restart"


class IngestionArg(Word):
    """Argument keys of the resumption and streaming histories (`data` is `Arg.DATA`).

    `partition` of a `produce`; `tick` of an `ingest`; `fault` of an `ingest`, a
    `checkpoint` or a `trigger` (a `Fault` or a `CrashPoint`); `compact_first` of a
    `checkpoint`; `trigger` and `sink` of a streaming `query` (a `Trigger`, a `Sink`);
    `kill` of a `trigger` (the crash SIGKILLs a separate driver process); `key` and `event_time`
    of a stateful history's `produce`.
    """

    PARTITION = "partition"
    TICK = "tick"
    FAULT = "fault"
    COMPACT_FIRST = "compact_first"
    TRIGGER = "trigger"
    SINK = "sink"
    KILL = "kill"
    KEY = "key"
    EVENT_TIME = "event_time"


class Fault(Word):
    """Where an ingestion pipeline's process dies: within or after an ingest's remap and data writes
    (`mid_*_write`: the write is lost), or after a checkpoint's upstream commit or remap compaction."""

    MID_REMAP_WRITE = "mid_remap_write"
    AFTER_REMAP_APPEND = "after_remap_append"
    MID_DATA_WRITE = "mid_data_write"
    AFTER_DATA_APPEND = "after_data_append"
    AFTER_COMMIT = "after_commit"
    AFTER_COMPACTION = "after_compaction"


# The fault points an ingest may name, and those a checkpoint may, in the order they are reached.
INGEST_FAULTS = (
    Fault.MID_REMAP_WRITE,
    Fault.AFTER_REMAP_APPEND,
    Fault.MID_DATA_WRITE,
    Fault.AFTER_DATA_APPEND,
)
CHECKPOINT_FAULTS = (Fault.AFTER_COMMIT, Fault.AFTER_COMPACTION)


class ResumptionLabel(Word):
    """What a resumption observation's `(step, label)` key holds.

    At each commit (checkpoint or restart): `committed` (the offset frontier committed
    upstream), `durable_ids` (`(data, count)` in the data shard), `remap_latest` (the
    durable remap's latest source upper); at a restart `resumed` (its offset resumption
    frontier) and `upstream_start` (`(partition, first offset)`); around a remap
    compaction `remap_before` / `remap_after` (`(t, R(t))`); at the end `data` (the data
    shard's updates), `remap` (the bindings) and `remap_since`.
    """

    COMMITTED = "committed"
    DURABLE_IDS = "durable_ids"
    REMAP_LATEST = "remap_latest"
    RESUMED = "resumed"
    UPSTREAM_START = "upstream_start"
    REMAP_BEFORE = "remap_before"
    REMAP_AFTER = "remap_after"
    DATA = "data"
    REMAP = "remap"
    REMAP_SINCE = "remap_since"


class StreamingAction(Word):
    """A step of a streaming history: `query(trigger, sink)` first, `produce(partition, data)`,
    `trigger(fault?, kill?)`, `upstream_compact`, `restart`."""

    QUERY = "query"
    PRODUCE = "produce"
    TRIGGER = "trigger"
    UPSTREAM_COMPACT = "upstream_compact"
    RESTART = "restart"


class CrashPoint(Word):
    """Where a streaming trial's query crashes: before its batch's offsets are written, after them
    (planning), or after the sink made the batch durable, before Spark's commit."""

    BEFORE_OFFSETS = "before_offsets"
    AFTER_OFFSETS = "after_offsets"
    AFTER_SINK = "after_sink"


class Trigger(Word):
    """How a streaming query runs: on a processing-time trigger, or once over what is available."""

    PROCESSING_TIME = "processingTime"
    AVAILABLE_NOW = "availableNow"


class Sink(Word):
    """Where a streaming query writes: the project's Parquet shard, Spark's file sink, or a user's job."""

    SHARD = "shard"
    FILES = "files"
    JOB = "job"


class StreamingLabel(Word):
    """What a streaming observation's `(step, label)` key holds after a trigger or restart.

    `offsets` (batch id, end frontier), `commits` (batch ids), `sink` (data, batch id,
    count), `sink_writes` (batch id, writes holding it), `upstream` (`UpstreamRow`s),
    `source_commits` (every `commit(end)`, numbered), `crash` (the point that fired),
    `down` (the query is down: the row `("down",)`), `error` (`(ErrorKind, message)`),
    under a user's job `job_rows` (`(row, count)`), and what the checkpoint journaled beside the
    offsets: `offset_metadata` (batch id, `batchWatermarkMs`, `batchTimestampMs`, `conf` as sorted
    `(setting, value)` pairs), `commit_metadata` (batch id, `nextBatchWatermarkMs`), and `runs` (the
    first batch id each start of the query ran); at a stateful trial's final step, `state` (the last
    committed batch, an entry's bound in event time or None, how many entries have it).
    """

    OFFSETS = "offsets"
    COMMITS = "commits"
    SINK = "sink"
    SINK_WRITES = "sink_writes"
    UPSTREAM = "upstream"
    SOURCE_COMMITS = "source_commits"
    CRASH = "crash"
    DOWN = "down"
    ERROR = "error"
    JOB_ROWS = "job_rows"
    OFFSET_METADATA = "offset_metadata"
    COMMIT_METADATA = "commit_metadata"
    RUNS = "runs"
    STATE = "state"


class OutputMode(Word):
    """A stateful job's output mode: append (a window once, when complete), update (each changed group)."""

    APPEND = "append"
    UPDATE = "update"
    COMPLETE = "complete"


class StatefulOperator(Word):
    """The one stateful operator a job of the stateful suite may hold."""

    AGGREGATION = "aggregation"
    DEDUPLICATION = "dropDuplicates"
    DEDUPLICATION_WITHIN_WATERMARK = "dropDuplicatesWithinWatermark"


class PlanKey(Word):
    """The keys of a stateful job's plan as spark_impl reads it (`stateful_plan`).

    `operator` (a `StatefulOperator`), `delays` (ms, one per `withWatermark`), `window` (`[duration,
    slide, start]` ms, or None), `window_column` (the output column holding it), `keys` (the record
    columns a deduplication keys on, or an aggregation groups by besides the window), `output_mode`,
    `lateness` (ms the job promises to keep), `columns` (transform's output columns).
    """

    OPERATOR = "operator"
    DELAYS = "delays"
    WINDOW = "window"
    WINDOW_COLUMN = "window_column"
    KEYS = "keys"
    OUTPUT_MODE = "output_mode"
    LATENESS = "lateness"
    COLUMNS = "columns"


class UpstreamRow(Word):
    """The rows of a streaming `upstream` observation: `(committed, frontier)` and `(start, partition,
    first offset)`."""

    COMMITTED = "committed"
    START = "start"


class ErrorKind(Word):
    """The first field of a streaming `error` row: what failed."""

    COMPACTED_READ = "CompactedRead"
    QUERY_FAILED = "StreamingQueryException"
    JOB_FAILED = "the job failed"
    JOB_READ_FAILED = "the job's read failed"


class LogAction(Word):
    """A step of a checkpoint history, in the order Spark writes a batch's files (see
    `frontier_harness.properties.checks.streaming.checkpoint_log`)."""

    RETAIN = "retain"
    FILE_SINK = "file_sink"
    EXPECT = "expect"
    OFFSETS = "offsets"
    SINK = "sink"
    COMMIT = "commit"
    STATE = "state"
    STATE_OPERATOR = "state_operator"
    STATE_ROWS = "state_rows"


class LogArg(Word):
    """Argument keys of a checkpoint history's actions.

    `batches` of `retain`; `retention_ms` of `file_sink`; `law` and `damage` of
    `expect`; `batch` of `offsets`, `sink` and `commit`; `source`, `domain`, `offsets`
    (or `unchecked`) of `offsets`; `files`, `compact`, `mtimes`, `deleted` of `sink`.
    A batch's metadata, on its (first) `offsets` action: `watermark_ms` (Spark's
    `batchWatermarkMs`, the query's frontier over event time), `timestamp_ms`
    (`batchTimestampMs`, the batch's clock) and `conf` (the settings Spark pins for the
    checkpoint's life, by key); on a `commit`, `next_watermark_ms` (`nextBatchWatermarkMs`).
    A `state` action (one partition's store) has `operator`, `partition`, `store`,
    `file_kind` (what Spark writes for every version: `delta`, `changelog`, or `zip`),
    `versions` (the versions whose file of that kind is present), `bases` (those with a full
    copy: a snapshot or a zip) and `missing` (`[version, file]`: a file a zip lists that is
    absent); a
    `state_operator` action has `operator`, `name`, `partitions` (its metadata's count), or
    `unchecked` (why its files were not read). A `state_rows` action (read with Spark:
    `validate-checkpoint --state`) has `operator`, `store`, `batch`, `rows` (how many the
    store held after the batch) and `oldest_bound_ms` (the oldest window end or expiry among
    them, when the rows have one).
    """

    BATCHES = "batches"
    RETENTION_MS = "retention_ms"
    LAW = "law"
    DAMAGE = "damage"
    BATCH = "batch"
    SOURCE = "source"
    DOMAIN = "domain"
    OFFSETS = "offsets"
    UNCHECKED = "unchecked"
    FILES = "files"
    COMPACT = "compact"
    MTIMES = "mtimes"
    DELETED = "deleted"
    WATERMARK_MS = "watermark_ms"
    TIMESTAMP_MS = "timestamp_ms"
    CONF = "conf"
    NEXT_WATERMARK_MS = "next_watermark_ms"
    OPERATOR = "operator"
    PARTITION = "partition"
    STORE = "store"
    FILE_KIND = "file_kind"
    VERSIONS = "versions"
    BASES = "bases"
    MISSING = "missing"
    NAME = "name"
    PARTITIONS = "partitions"
    ROWS = "rows"
    OLDEST_BOUND_MS = "oldest_bound_ms"


class CheckpointLog(Word):
    """The logs of a Structured Streaming checkpoint directory (Spark's names): `offsets/N` when batch
    `N` is planned, `commits/N` once its output is durable."""

    OFFSETS = "offsets"
    COMMITS = "commits"


class SourceOffsets(Word):
    """The key of frontier-harness's source's offsets in an offset log: `{"frontier": [[lo, hi, offset],
    ...]}`, a Partitioned frontier (written by the trials' source, read by the checkpoint reader)."""

    FRONTIER = "frontier"
