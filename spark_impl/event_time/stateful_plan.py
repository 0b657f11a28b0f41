"""A stateful job's plan as the stateful suite needs it: its watermarks, its one stateful operator, and
the jobs the suite refuses (each in one line, `JobContractError`, before any trial).

`stateful_plan(spec, session, job)` builds the job's `transform` over the stateful source's stream
(never started) and reads what Spark plans for it from Spark's own plan objects
(`frontier_harness.spark_impl.event_time.plan_metadata`: the stateful operators of the physical plan Spark
runs each batch with, their state keys, the watermarks, the lineage of each column) into a dict keyed by
`PlanKey`:

- `delays`: one per `EventTimeWatermark`, in milliseconds (Spark's conversion of the interval);
- `operator` and `keys`: the aggregation (`stateStoreSave`), deduplication (`dedupe`) or deduplication
  within the watermark (`dedupeWithinWatermark`), and the record columns its state is keyed on (an
  aggregation: its grouping columns besides the window); `deduplication`: for an aggregation over a
  deduplication (a chain of two operators, the aggregation operator 0), the deduplication's operator and
  keys; `inner_window`: for an aggregation over a window aggregation (a roll-up), the inner one's window;
- `window` (`[duration, slide, start]` ms) and `window_column`: the `window(...)` an aggregation groups
  by, read from the expression Spark's TimeWindowing rule writes for the window key, and the output
  column (a struct of `start` and `end` timestamps) that holds it; `gap` (ms): a `session_window`
  aggregation's (`sessionWindowStateStoreSaveExec`) constant gap, read from the `event_time + gap` that
  Spark's SessionWindowing rule writes for its output column (then `window_column`), its keys the
  output's record columns;
- a user's processor (`transformWithStateInPandas`, `transformWithState` in Python, `applyInPandasWithState`:
  `PROCESSORS`), alone or chained with other stateful operators (its reference run judges them with it): `operator`
  is `processor`, `keys` its grouping columns, `time_mode` what its timers
  (or timeouts) fire by, read from the physical operator Spark runs (`_time_mode`): none, the watermark, or
  the batch clock (a processor with state TTL is one of these: Spark allows TTL in that time mode only,
  measured by `tests/test_spark_processing_time.py`), an `applyInPandasWithState` function's timeout
  the same way;
- `output_mode` and `lateness` (ms) from the job's attributes (`lateness` defaults to the delay of the
  job's only `withWatermark`); `columns`, transform's output columns;
- `derived` (a job with a deduplication): the deduplication's keys the job derives from the records' `key`
  and `data` (each record's values observed in its trials: `prefix.derived`);
- `prefix`: where the job filters its records before its first stateful operator (a `Prefix`: under its
  watermark, `where` before `withWatermark`, or between the watermark and the operator), or None: which
  records pass is then observed, the filters run by Spark as a batch job
  (`frontier_harness.spark_impl.event_time.prefix`).

Refused: complete mode, a `session_window` in update mode (Spark refuses it) or with a gap that is not
a constant interval, `(flat)MapGroupsWithState` and Scala's
`transformWithState`, more than one processor, chained stateful operators but a processor's, a window
aggregation over a deduplication or over a
tumbling window aggregation (a roll-up: in append mode, its window over the inner's `window_time`),
stream-stream joins, an append-mode
aggregation without a watermark or without a window, and what the suite cannot model (a watermark on
another column than the records' `event_time`, a deduplication on a key derived from another column than
`key` and `data` or without `data` reaching it, a filter between two
stateful operators, a filter before the operator that drops the records' `data` column or under more than
one `withWatermark`, an aggregation grouped by the raw event time, a window over a column derived from the
event time, a window aggregation whose output drops its window, no stateful operator), a `transform` that raises, a `lateness` Spark cannot read, and a Spark
Connect session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.event_time import (
    FieldKey,
    OperatorKey,
    OutputMode,
    PlanKey,
    Recorded,
    StatefulOperator,
    TimeMode,
    WatermarkKey,
)
from frontier_harness.spark_impl.event_time.plan_metadata import (
    is_window,
    kind,
    plan_metadata,
    preorder,
    seq,
)
from frontier_harness.spark_impl.event_time.prefix import PrefixNotModeled, derived, filters_before, reaching
from frontier_harness.spark_impl.streaming.event_source import NAME, SCHEMA, EventSource
from frontier_harness.spark_impl.streaming.job import JobContractError, WrongSuite, transformed

RECORD_COLUMNS = tuple(field.split()[0] for field in SCHEMA.split(", "))
MODES = (OutputMode.APPEND, OutputMode.UPDATE)
# Spark's short names of the stateful operators the suite models, and of those it refuses.
STATEFUL = {
    "stateStoreSave": StatefulOperator.AGGREGATION,
    "dedupe": StatefulOperator.DEDUPLICATION,
    "dedupeWithinWatermark": StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK,
    "sessionWindowStateStoreSaveExec": StatefulOperator.AGGREGATION,
}
DEDUPLICATIONS = (StatefulOperator.DEDUPLICATION, StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK)
SESSIONS = "sessionWindowStateStoreSaveExec"
# A user's processor in Python, by Spark's short name: the suite judges it by what a crash must not change.
PROCESSORS = {"transformWithStateInPandasExec", "transformWithStateInPySparkExec", "applyInPandasWithState"}
# What a processor's physical operator says its timers fire by (`timeMode`, or a `GroupStateTimeout`).
TIME_MODES = {
    "NoTime": TimeMode.NONE,
    "None": TimeMode.NONE,
    "NoTimeout": TimeMode.NONE,
    "EventTime": TimeMode.EVENT_TIME,
    "EventTimeTimeout": TimeMode.EVENT_TIME,
    "ProcessingTime": TimeMode.PROCESSING_TIME,
    "ProcessingTimeTimeout": TimeMode.PROCESSING_TIME,
}
RAW_EVENT_TIME = "precisetimestampconversion(event_time, TimestampType, LongType)"  # a window of event_time
_WINDOW_TIME = re.compile(r"\)\.end, TimestampType, LongType\) - 1\)")  # window_time(w): w.end less 1 µs
_GAP = re.compile(r"\bevent_time \+ cast\((.+?) as interval\)")  # what SessionWindowing writes for the end
REFUSED = {
    "flatMapGroupsWithState": "(flat)MapGroupsWithState is not supported: arbitrary state",
    "transformWithStateExec": "transformWithState is not supported: arbitrary state",
    "symmetricHashJoin": "a stream-stream join is not supported over one input: a join job's transform takes two (transform(left, right), StatefulJoinJob)",
}
# Record columns a derived deduplication key may not read: a redelivery's offset differs, a duplicate's event
# time too, and the suite names a record by its data (`prefix.derived`).
_NOT_DERIVABLE = re.compile(r"\b(event_time|partition|offset)\b")
STACKED = "EventTimeWatermark"  # a withWatermark below another, as `plan_metadata` names the node
UNDER_A_WATERMARK = {"Project", "Filter", "SubqueryAlias", "StreamingRelationV2", "StreamingRelation"}


def output_mode(spec: str, job: Any) -> str:
    """The job's output mode (append unless it says), or `JobContractError`: needs no Spark."""
    mode = getattr(job, "output_mode", OutputMode.APPEND)
    if mode not in MODES:
        raise JobContractError(spec, f"output_mode {mode!r} is not supported: use 'append' or 'update'")
    return mode


def stateful_plan(spec: str, session: Any, job: Any) -> dict:
    """The job's plan for the stateful suite (see the module docstring), or `JobContractError`."""
    mode = output_mode(spec, job)
    if type(session).__module__.startswith("pyspark.sql.connect"):
        raise JobContractError(
            spec,
            "the stateful suite does not run through Spark Connect (--remote): under Connect the server "
            "runs the job's writer in a Python process of its own, which its 10 s connect-back limit "
            "failed here on a loaded machine, and the suite was not verified there; use a local session or --master",
        )
    session.dataSource.register(EventSource)
    stream = session.readStream.format(NAME).option("path", "/nonexistent").load()
    out, recorded = job_plan(spec, session, job, stream)
    operator, *below = _the_stateful_operators(spec, recorded[Recorded.OPERATORS])
    delays = _delays(spec, recorded[Recorded.WATERMARKS])
    plan: dict[str, Any] = {
        PlanKey.OPERATOR: STATEFUL.get(operator[OperatorKey.NAME], StatefulOperator.PROCESSOR),
        PlanKey.DELAYS: delays,
        PlanKey.OUTPUT_MODE: mode,
        PlanKey.COLUMNS: list(out.columns),
        PlanKey.WINDOW: None,
        PlanKey.WINDOW_COLUMN: None,
        PlanKey.DEDUPLICATION: None,
        PlanKey.GAP: None,
        PlanKey.INNER_WINDOW: None,
    }
    if operator[OperatorKey.NAME] in PROCESSORS:
        plan.update(_processor(out))
    elif operator[OperatorKey.NAME] == SESSIONS:
        plan.update(_sessions(spec, session, recorded[Recorded.OUTPUT], mode))
    elif plan[PlanKey.OPERATOR] == StatefulOperator.AGGREGATION:
        plan.update(_aggregation(spec, operator, recorded[Recorded.OUTPUT], bool(delays), mode))
    else:
        plan[PlanKey.KEYS] = _deduplication(spec, operator)
    if below:
        plan.update(_below(spec, operator, below[0], mode, plan[PlanKey.WINDOW]))
    deduplication = below[0] if below else operator
    if STATEFUL.get(deduplication[OperatorKey.NAME]) in DEDUPLICATIONS:
        plan[PlanKey.DERIVED] = _derived_reaching(spec, session, job, _derived(spec, deduplication))
    plan[PlanKey.LATENESS] = _lateness(spec, session, job, delays)
    plan[PlanKey.PREFIX] = _prefix(spec, session, job, out, plan[PlanKey.OPERATOR])
    return plan


def _below(spec: str, operator: dict, below: dict, mode: str, window: list[int] | None) -> dict:
    """What a window aggregation reads from the operator below it: a deduplication's name and keys, or a
    roll-up's inner window (`_inner_window`); refused without a window or with a filter between them."""
    if window is None:
        raise JobContractError(
            spec,
            "an aggregation over another stateful operator is supported with a window only: group by a window",
        )
    if set(operator[OperatorKey.ROWS] or ()) - windowing_filters(operator):
        raise JobContractError(
            spec, "a filter between two stateful operators is not supported: filter before the first"
        )
    if STATEFUL[below[OperatorKey.NAME]] == StatefulOperator.AGGREGATION:
        return {PlanKey.INNER_WINDOW: _inner_window(spec, operator, below, mode)}
    keys = _deduplication(spec, below)
    return {PlanKey.DEDUPLICATION: {OperatorKey.NAME: STATEFUL[below[OperatorKey.NAME]], PlanKey.KEYS: keys}}


def windowing_filters(operator: dict) -> set[str]:
    """The filters Spark's TimeWindowing rule writes for a window aggregation: its time column (the records'
    `event_time`, or an inner window's `window_time`) not null; a user's filter on a grouping column is not one.

    >>> window = {"lineage": "f(event_time)", "type": {"type": "struct", "fields": [{"name": "start", "type": "timestamp"}, {"name": "end", "type": "timestamp"}]}}
    >>> sorted(windowing_filters({"rows": ["isnotnull(event_time)", "isnotnull(key)"], "key": [{"lineage": "key", "type": "string"}, window]}))
    ['isnotnull(event_time)']
    """
    lineage = " ".join(
        f[FieldKey.LINEAGE] or "" for f in operator[OperatorKey.KEY] if is_window(f[FieldKey.TYPE])
    )
    return {
        row
        for row in operator[OperatorKey.ROWS] or ()
        if row.startswith("isnotnull(") and row[len("isnotnull(") : -1] in lineage
    }


def _inner_window(spec: str, operator: dict, below: dict, mode: str) -> list[int]:
    """A roll-up's inner window, `[duration, slide, start]` ms: the aggregation below must group by a
    tumbling window, the one above by a window of its `window_time` (Spark's event time of an emitted
    window), in append mode."""
    inner = below[OperatorKey.WINDOW]
    if mode != OutputMode.APPEND:
        raise JobContractError(
            spec, "an aggregation over an aggregation runs in append mode only (Spark refuses update)"
        )
    if inner is None or inner[0] != inner[1]:
        raise JobContractError(
            spec, "an aggregation over an aggregation is supported over a tumbling window aggregation only"
        )
    lineage = " ".join(f[FieldKey.LINEAGE] or "" for f in operator[OperatorKey.KEY])
    if not _WINDOW_TIME.search(lineage):
        raise JobContractError(
            spec,
            "an aggregation over an aggregation is supported when it groups by a window of the inner window's "
            "window_time (window(window_time(window), ...)): the model carries each inner window at its end",
        )
    return inner


def _prefix(spec: str, session: Any, job: Any, out: Any, operator: str) -> str | None:
    """Where the job filters its records before its first stateful operator (`filters_before`; a processor
    is judged against its own run without a crash: None), refused where the records cannot be followed."""
    if operator == StatefulOperator.PROCESSOR:
        return None
    try:
        where = filters_before(out)
    except PrefixNotModeled as exc:
        raise JobContractError(
            spec, f"{exc}: filter on the event time, or on other columns, not both"
        ) from exc
    if where is not None:
        _data_reaches(
            spec, lambda: reaching(session, job, [[]], where), "a filter before the stateful operator"
        )
    return where


def _derived_reaching(spec: str, session: Any, job: Any, columns: list[str]) -> list[str]:
    """`columns`, derived keys, once the records' `data` is seen to reach the deduplication beside them (it
    names the record whose keys they are: `prefix.derived`); else the refusal naming why."""
    if columns:
        _data_reaches(spec, lambda: derived(session, job, [[]], columns), "a deduplication on derived keys")
    return columns


def _data_reaches(spec: str, probe: Callable[[], Any], what: str) -> None:
    """Runs `probe`, the job's prefix over no records (`prefix`), which reads the records' `data` under its
    first stateful operator; when Spark cannot, the refusal says that `what` needs it there."""
    try:
        probe()
    except Exception as exc:
        raise JobContractError(
            spec,
            f"{what} is supported when the records' data column reaches it (it names each record): "
            f"{first_line(exc)}",
        ) from exc


def _processor(out: Any) -> dict:
    """A user's processor's keys (its grouping columns) and time mode (`_time_mode`)."""
    keys, time_mode = _time_mode(out)
    return {PlanKey.KEYS: keys, PlanKey.TIME_MODE: time_mode}


def _time_mode(out: Any) -> tuple[list[str], str]:
    """The grouping columns of the processor Spark plans for `out` and what its timers fire by (`TIME_MODES`:
    `timeMode` of a `transformWithState...` operator, `timeoutConf` of `applyInPandasWithState`'s)."""
    plan = out._jdf.queryExecution().queryExecutionForExplain().executedPlan()
    node = next(
        n for n in preorder(plan) if kind(n).startswith(("TransformWithState", "FlatMapGroupsInPandas"))
    )
    mode = node.timeoutConf() if kind(node).startswith("FlatMapGroups") else node.timeMode()
    return [a.name() for a in seq(node.groupingAttributes())], TIME_MODES[mode.toString()]


def _sessions(spec: str, session: Any, output: Sequence[dict], mode: str) -> dict:
    """A `session_window` aggregation's gap, window column and keys (the output's record columns)."""
    if mode != OutputMode.APPEND:
        raise JobContractError(
            spec, "a session_window aggregation runs in append mode only (Spark refuses update)"
        )
    sessions = [f for f in output if is_window(f[FieldKey.TYPE])]
    gaps = [m.group(1) for f in sessions if (m := _GAP.search(f[FieldKey.LINEAGE] or ""))]
    if len(sessions) != 1 or len(gaps) != 1:
        raise JobContractError(
            spec,
            "a session_window aggregation's output must keep its session_window column, of a constant gap",
        )
    keys = [
        f[FieldKey.NAME]
        for f in output
        if f[FieldKey.NAME] in RECORD_COLUMNS and f[FieldKey.LINEAGE] == f[FieldKey.NAME]
    ]
    return {
        PlanKey.KEYS: keys,
        PlanKey.WINDOW_COLUMN: sessions[0][FieldKey.NAME],
        PlanKey.GAP: interval_ms(session, gaps)[0],
    }


def _deduplication(spec: str, operator: dict) -> list[str]:
    """The columns a deduplication keys on: the records' own, or columns the job derives from their `key`
    and `data` (`derived`); refused when derived from another column."""
    _derived(spec, operator)
    return [f[FieldKey.NAME] for f in operator[OperatorKey.KEY]]


def _derived(spec: str, operator: dict) -> list[str]:
    """The key columns of a deduplication that the job derives from the records' `key` and `data` (their
    values per record are observed: `prefix.derived`), or the refusal naming one it derives otherwise.

    >>> _derived("m:f", {"key": [{"name": "id", "lineage": "(concat_ws(:, key, data))"}, {"name": "key", "lineage": "key"}]})
    ['id']
    """
    derived = [f for f in operator[OperatorKey.KEY] if f[FieldKey.LINEAGE] != f[FieldKey.NAME]]
    for field in derived:
        read = _NOT_DERIVABLE.findall(field[FieldKey.LINEAGE] or "")
        if read or field[FieldKey.LINEAGE] is None:
            raise JobContractError(
                spec,
                f"deduplicates on {field[FieldKey.NAME]}, derived from {', '.join(sorted(set(read))) or 'no record column'}: "
                "a derived key is supported when computed from the records' key and data only",
            )
    return [f[FieldKey.NAME] for f in derived]


def job_plan(spec: str, session: Any, job: Any, stream: Any) -> tuple[Any, dict]:
    """The job's `transform` of `stream`, and what Spark would key its checkpoint on (`plan_metadata`); a
    `transform` that raises is the job's `JobContractError`, in one line."""
    try:
        out = transformed(job, stream)
    except Exception as exc:
        raise JobContractError(
            spec, f"transform(records) raised {type(exc).__name__}: {first_line(exc)}"
        ) from exc
    return out, plan_metadata(session, out)


def _the_stateful_operators(spec: str, operators: Sequence[dict]) -> Sequence[dict]:
    """The job's stateful operators, top down (Spark's operator ids): one of a kind the suite models, or an
    aggregation over a deduplication, or a processor alone (the operators chained with it are judged with
    it, by its run without a crash); else the refusal that names why not."""
    for op in operators:
        if op[OperatorKey.NAME] in REFUSED:
            raise JobContractError(spec, REFUSED[op[OperatorKey.NAME]])
        if op[OperatorKey.NAME] not in STATEFUL and op[OperatorKey.NAME] not in PROCESSORS:
            raise JobContractError(spec, f"the stateful operator {op[OperatorKey.NAME]} is not supported")
    processors = [op for op in operators if op[OperatorKey.NAME] in PROCESSORS]
    if len(processors) > 1:
        raise JobContractError(spec, "more than one processor in a job is not supported")
    if processors:
        return processors
    kinds = [STATEFUL[op[OperatorKey.NAME]] for op in operators]
    chain = len(kinds) == 2 and kinds[0] == StatefulOperator.AGGREGATION
    if len(operators) > 1 and not chain:
        raise JobContractError(
            spec,
            f"chained stateful operators are not supported: {' over '.join(kinds)} (an aggregation over a "
            "deduplication or over a window aggregation is)",
        )
    if not operators:
        raise WrongSuite(
            spec, "transform has no aggregation or deduplication: a row-wise job runs in --suite streaming"
        )
    return operators


def _delays(spec: str, watermarks: Sequence[dict]) -> list[int]:
    for watermark in watermarks:
        if watermark[WatermarkKey.COLUMN] != "event_time":
            raise JobContractError(
                spec,
                "withWatermark must name the records' event_time column, unchanged (not one derived from it)",
            )
        below = set(watermark[WatermarkKey.BELOW]) - UNDER_A_WATERMARK
        if below == {STACKED}:
            delays = " and ".join(f"{w[WatermarkKey.DELAY_MS]} ms" for w in watermarks)
            raise JobContractError(
                spec, f"withWatermark over another withWatermark (delays {delays}): keep one, on the records"
            )
        if below:
            raise JobContractError(
                spec, f"withWatermark over {', '.join(sorted(below))}: apply it to the records first"
            )
    return [watermark[WatermarkKey.DELAY_MS] for watermark in watermarks]


def interval_ms(session: Any, intervals: Sequence[str]) -> list[int]:
    """Spark interval strings (`"10 seconds"`, `"1.5 seconds"`, `"1 minutes"`) in milliseconds, by Spark.

    One small batch job for all of them; a string Spark cannot read raises (the caller names it).
    """
    if not intervals:
        return []
    columns = [
        F.expr(f"unix_millis(timestamp_millis(0) + INTERVAL '{text}')").alias(f"i{i}")
        for i, text in enumerate(intervals)
    ]
    row = session.range(1).select(*columns).collect()[0]
    return [int(row[f"i{i}"]) for i in range(len(intervals))]


def _aggregation(spec: str, operator: dict, output: Sequence[dict], watermarked: bool, mode: str) -> dict:
    window = operator[OperatorKey.WINDOW]
    key = operator[OperatorKey.KEY]
    window_columns = [f[FieldKey.NAME] for f in output if is_window(f[FieldKey.TYPE])]
    if (window is None) != (not window_columns) or len(window_columns) > 1:
        raise JobContractError(
            spec, "a window aggregation's output must keep its window column (struct of start and end)"
        )
    if window is None and any(f[FieldKey.LINEAGE] == "event_time" for f in key):
        raise JobContractError(spec, "grouping by the raw event_time is not supported: group by a window")
    if mode == OutputMode.APPEND and (not watermarked or window is None):
        what = "a watermark" if not watermarked else "a window"
        raise JobContractError(spec, f"an append-mode aggregation needs {what}: Spark cannot emit it")
    keys = [f[FieldKey.NAME] for f in key if f[FieldKey.NAME] in RECORD_COLUMNS]
    if window is None:
        return {PlanKey.KEYS: keys}
    if not any(RAW_EVENT_TIME in (f[FieldKey.LINEAGE] or "") for f in key):
        raise JobContractError(
            spec,
            "a window over a column derived from event_time is not supported (its windows and lateness are not "
            "the records'): window the records' event_time",
        )
    return {PlanKey.KEYS: keys, PlanKey.WINDOW: window, PlanKey.WINDOW_COLUMN: window_columns[0]}


def _lateness(spec: str, session: Any, job: Any, delays: Sequence[int]) -> int | None:
    promise = getattr(job, "lateness", None)
    if promise is None:
        return delays[0] if len(delays) == 1 else None
    try:
        return interval_ms(session, [promise])[0]
    except Exception as exc:
        raise JobContractError(
            spec, f"lateness {promise!r} is not a Spark interval: {first_line(exc)}"
        ) from exc


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message with text on it (Spark's messages span many)."""
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
