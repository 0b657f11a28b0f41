"""Words of the streaming capability's suites: streaming (crash trials of a query or a user's job) and checkpoint.

A *streaming* history drives a Structured Streaming query: `query` (its `trigger` and
`sink`), `produce`, `trigger` (a `CrashPoint` `fault`, `kill`), `upstream_compact`,
`restart`; each trigger and restart is observed under the `StreamingLabel`s.

A *checkpoint* history is a Structured Streaming checkpoint read as actions
(`LogAction`, arguments `LogArg`): the reader and the generator write it, the laws and
the streaming suite read it. The trials and the reader both read Spark's logs
(`CheckpointLog`) and our source's offsets (`SourceOffsets`).

>>> f"crash {CrashPoint.AFTER_SINK}"
'crash after_sink'
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import Word


class StreamingAction(Word):
    """A step of a streaming history: `query(trigger, sink)` first, `produce(partition, data)`,
    `trigger(fault?, kill?)`, `upstream_compact`, `restart`; a reference run's `journal(batch, offsets)`
    writes a batch's `offsets/N` text, as a trial's query journaled it, before the start that runs it."""

    QUERY = "query"
    PRODUCE = "produce"
    TRIGGER = "trigger"
    UPSTREAM_COMPACT = "upstream_compact"
    RESTART = "restart"
    JOURNAL = "journal"


class CrashPoint(Word):
    """Where a streaming trial's query crashes: before its batch's offsets are written, after them
    (planning), or after the sink made the batch durable, before Spark's commit."""

    BEFORE_OFFSETS = "before_offsets"
    AFTER_OFFSETS = "after_offsets"
    AFTER_SINK = "after_sink"


class Trigger(Word):
    """How a streaming query runs: on a processing-time trigger, once over what is available, or at most one
    batch a start (`once`: a processing-time processor's, which always wants another batch)."""

    PROCESSING_TIME = "processingTime"
    AVAILABLE_NOW = "availableNow"
    ONCE = "once"


class Sink(Word):
    """Where a streaming query writes: the project's Parquet shard, Spark's file sink, or a user's job."""

    SHARD = "shard"
    FILES = "files"
    JOB = "job"


class StreamingLabel(Word):
    """What a streaming observation's `(step, label)` key holds after a trigger or restart.

    `offsets` (batch id, end frontier), `commits` (batch ids), `sink` (data, batch id,
    count), `sink_writes` (batch id, writes holding it), `upstream` (`UpstreamRow`s),
    `source_commits` (every `commit(end)`, numbered), `crash` (the point that fired), `killed` (the
    point a killable driver was seen killed at: its marker written there, then its death by SIGKILL),
    `down` (the query is down: the row `("down",)`), `error` (`(ErrorKind, message)`),
    under a user's job `job_rows` (`(row, count)`), and what the checkpoint journaled beside the
    offsets: `offset_metadata` (batch id, `batchWatermarkMs`, `batchTimestampMs`, `conf` as sorted
    `(setting, value)` pairs), `commit_metadata` (batch id, `nextBatchWatermarkMs`), and `runs` (the
    first batch id each start of the query ran); at a stateful trial's final step, `state` (the last
    committed batch, an entry's bound in event time or None, how many entries have it) or, for a user's
    processor, `processor_state` (batch, operator, state variable, key, value: its value, list and map
    states' entries and its timers after each committed batch); under a join's two sources `side_offsets` (batch id, side,
    end frontier) and, at the final step, `join_state` (batch id, side, a stored row's `data`, None when the join stores none, and its event time); under a job
    that filters before its stateful operator, at the final step, `prefix` (a record as the source reads
    it, whether the job's filters pass it to the watermark, and to the operator); under a job that
    deduplicates on keys it derives, at the final step, `derived` (a record as the source reads it, and
    `(name, value)` of each derived key as the job computed it); under an upgrade, at the final step,
    `state_keys` (a record as the source reads it, and the values the old job's and the new job's
    aggregation group it by, besides the window: the key each finds its state by).
    """

    OFFSETS = "offsets"
    COMMITS = "commits"
    SINK = "sink"
    SINK_WRITES = "sink_writes"
    UPSTREAM = "upstream"
    SOURCE_COMMITS = "source_commits"
    CRASH = "crash"
    KILLED = "killed"
    DOWN = "down"
    ERROR = "error"
    JOB_ROWS = "job_rows"
    OFFSET_METADATA = "offset_metadata"
    COMMIT_METADATA = "commit_metadata"
    RUNS = "runs"
    STATE = "state"
    SIDE_OFFSETS = "side_offsets"
    JOIN_STATE = "join_state"
    PROCESSOR_STATE = "processor_state"
    PREFIX = "prefix"
    DERIVED = "derived"
    STATE_KEYS = "state_keys"
    OFFSET_FILES = "offset_files"


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
    `expect`, and what the broken law must say: `named` (words its message holds) and `restart` (the
    restart line it gives, "" for none); `batch` of `offsets`, `sink` and `commit`; `source`, `domain`, `offsets`
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
    NAMED = "named"
    RESTART = "restart"
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
