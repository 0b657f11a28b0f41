"""Words of the event-time capability's suite: stateful (a user's event-time job under crash trials).

A *stateful* history is a streaming history whose `produce` also names the record's `key` and
`event_time` (epoch milliseconds); its trials run a user's stateful job (`OutputMode`) and are
observed under the `StreamingLabel`s. The job's plan, as spark_impl reads
it, is a dict keyed by `PlanKey` (its `StatefulOperator`).

>>> OutputMode("append") is OutputMode.APPEND
True
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import Word


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
    PROCESSOR = "processor"  # a user's own: transformWithStateInPandas, applyInPandasWithState


class TimeMode(Word):
    """What a user's processor's timers (or `applyInPandasWithState`'s timeouts) fire by: none, the
    watermark (event time), or the batch clock (processing time)."""

    NONE = "none"
    EVENT_TIME = "event_time"
    PROCESSING_TIME = "processing_time"


class PlanKey(Word):
    """The keys of a stateful job's plan as spark_impl reads it (`stateful_plan`).

    `operator` (a `StatefulOperator`), `delays` (ms, one per `withWatermark`), `window` (`[duration,
    slide, start]` ms, or None), `window_column` (the output column holding it), `keys` (the record
    columns a deduplication keys on, or an aggregation groups by besides the window), `output_mode`,
    `lateness` (ms the job promises to keep), `columns` (transform's output columns), `deduplication`
    (an aggregation's deduplication below it, `{operator, keys}`, or None), `gap` (ms, the session windows'
    gap of a `session_window` aggregation, or None), `time_mode` (a processor's `TimeMode`, or None),
    `prefix` (where the job filters its records before its first stateful operator, a `Prefix`, or None:
    which records pass is then observed), `inner_window` (an aggregation over a window aggregation: the
    inner one's window, `[duration, slide, start]` ms, or None), `derived` (the deduplication's keys the job
    derives from a record's key and data: their values are observed per record).
    """

    OPERATOR = "operator"
    DELAYS = "delays"
    WINDOW = "window"
    WINDOW_COLUMN = "window_column"
    KEYS = "keys"
    OUTPUT_MODE = "output_mode"
    LATENESS = "lateness"
    COLUMNS = "columns"
    DEDUPLICATION = "deduplication"
    GAP = "gap"
    TIME_MODE = "time_mode"
    PREFIX = "prefix"
    INNER_WINDOW = "inner_window"
    DERIVED = "derived"


class Prefix(Word):
    """Where a stateful job filters its records: under its watermark (which then follows only the records
    kept), or between the watermark and its first stateful operator (the operator reads the records kept)."""

    WATERMARK = "watermark"
    OPERATOR = "operator"


class Recorded(Word):
    """What Spark keys a streaming query's checkpoint on, as spark_impl reads it from a job's plan
    (`spark_impl.event_time.plan_metadata`) or from a checkpoint (`spark_impl.event_time.checkpoint_metadata`):
    a dict keyed by these words.

    `origin` (`plan` or `checkpoint`); `sources` (one `SourceKey` dict per source, in Spark's order);
    `operators` (one `OperatorKey` dict per stateful operator, by operator id); `watermarks` (one
    `{column, delay_ms}` per `withWatermark`, None where nothing recorded them); `conf` (the settings Spark
    pins in `offsets/N`); `output_mode`; `output` (the output columns as `FieldKey` dicts) and `output_rows`
    (the filters above the stateful operators), from a plan; `watermark_ms`, `batch` and `committed` (the
    journaled watermark, the newest batch in the offset log and the newest committed), from a checkpoint.
    """

    ORIGIN = "origin"
    SOURCES = "sources"
    OPERATORS = "operators"
    WATERMARKS = "watermarks"
    CONF = "conf"
    OUTPUT_MODE = "output_mode"
    OUTPUT = "output"
    OUTPUT_ROWS = "output_rows"
    WATERMARK_MS = "watermark_ms"
    BATCH = "batch"
    COMMITTED = "committed"


class Origin(Word):
    """Where a `Recorded` dict was read from."""

    PLAN = "plan"
    CHECKPOINT = "checkpoint"


class SourceKey(Word):
    """One source of a query: `kind` (`file:json`, `kafka`, a Python data source's name, ...), `options` (the
    options that bind its offsets, from a plan), `offset` (its newest logged offset, JSON text, from a
    checkpoint) and `files` (a file source's logged paths, from a checkpoint)."""

    KIND = "kind"
    OPTIONS = "options"
    OFFSET = "offset"
    FILES = "files"


class OperatorKey(Word):
    """One stateful operator: `id`, `name` (Spark's short name: `stateStoreSave`, `dedupe`,
    `dedupeWithinWatermark`, ...), `partitions`, its state's `key` and `value` (lists of `FieldKey` dicts, or
    None where not read), `aggregates` (an aggregation's functions, rendered without expression ids, from a
    plan), `window` (`[duration, slide, start]` ms of a window key, from a plan; `[duration, None, None]` from
    a checkpoint's state rows), `rows` (the filters between the operator and its sources, from a plan) and
    `groups` (the keys held in its state after the newest committed batch, from a checkpoint)."""

    ID = "id"
    NAME = "name"
    PARTITIONS = "partitions"
    KEY = "key"
    VALUE = "value"
    AGGREGATES = "aggregates"
    WINDOW = "window"
    ROWS = "rows"
    GROUPS = "groups"


class FieldKey(Word):
    """One field of a state schema or of a job's output: `name`, `type` (Spark's JSON form of its data type),
    `nullable`, `lineage` (the expression it is computed by over the sources' columns, from a plan) and
    `delay_ms` (the watermark delay Spark records in the field's metadata, `spark.watermarkDelayMs`)."""

    NAME = "name"
    TYPE = "type"
    NULLABLE = "nullable"
    LINEAGE = "lineage"
    DELAY_MS = "delay_ms"


class WatermarkKey(Word):
    """One `withWatermark` of a plan: `column` (its column's lineage), `delay_ms`, and `below` (the operators
    between it and its source, by Spark's names)."""

    COLUMN = "column"
    DELAY_MS = "delay_ms"
    BELOW = "below"
