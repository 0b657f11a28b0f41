"""A stateful job's plan as the stateful suite needs it: its watermarks, its one stateful operator, and
the jobs the suite refuses (each in one line, `JobContractError`, before any trial).

`stateful_plan(spec, session, job)` builds the job's `transform` over the stateful source's stream
(never started) and reads Spark's analyzed logical plan, as `explain` prints it (classic or Connect),
into a dict keyed by `PlanKey`:

- `delays`: one per `EventTimeWatermark`, in milliseconds (Spark's interval strings converted by Spark);
- `operator` and `keys`: the `Aggregate`, `Deduplicate` or `DeduplicateWithinWatermark`, and the record
  columns it keys on (an aggregation: its grouping columns besides the window);
- `window` (`[duration, slide, start]` ms) and `window_column`: the `window(...)` an aggregation groups
  by, read from the expression Spark's TimeWindowing rule writes, and the output column (a struct of
  `start` and `end` timestamps) that holds it;
- `output_mode` and `lateness` (ms) from the job's attributes (`lateness` defaults to the delay of the
  job's only `withWatermark`).

Refused: complete mode, `session_window`, `applyInPandasWithState` and the other arbitrary-state
operators, `transformWithState`, chained stateful operators, stream-stream joins, an append-mode
aggregation without a watermark or without a window, and what the suite cannot model (a watermark on
another column than the records' `event_time` or over filtered records, a deduplication on derived
columns or after a filter, an aggregation grouped by the raw event time, no stateful operator), and a Spark Connect session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.ingestion import OutputMode, PlanKey, StatefulOperator
from frontier_harness.spark_impl.streaming.event_source import NAME, SCHEMA, EventSource
from frontier_harness.spark_impl.streaming.job import (
    JobContractError,
    WrongSuite,
    explained,
    transformed,
)

RECORD_COLUMNS = tuple(field.split()[0] for field in SCHEMA.split(", "))
MODES = (OutputMode.APPEND, OutputMode.UPDATE)
STATEFUL = {
    "Aggregate": StatefulOperator.AGGREGATION,
    "Deduplicate": StatefulOperator.DEDUPLICATION,
    "DeduplicateWithinWatermark": StatefulOperator.DEDUPLICATION_WITHIN_WATERMARK,
}
ARBITRARY_STATE = {
    "FlatMapGroupsWithState": "(flat)MapGroupsWithState",
    "FlatMapGroupsInPandasWithState": "applyInPandasWithState",
    "TransformWithState": "transformWithState",
    "TransformWithStateInPandas": "transformWithStateInPandas",
    "TransformWithStateInPySpark": "transformWithState",
}
UNDER_A_WATERMARK = {"Project", "SubqueryAlias", "StreamingRelationV2", "StreamingRelation"}
_NODE = re.compile(r"^(?P<indent>[\s:+\-|]*)~?(?P<name>[A-Z][A-Za-z0-9]*)(?P<rest>.*)$")
_WATERMARK = re.compile(r"EventTimeWatermark [0-9a-f-]+, (?P<column>\w+)#(?P<id>\d+): \w+, (?P<delay>.+)$")
_ATTRIBUTE = re.compile(r"(\w+)#(\d+)L?(?:-T\d+ms)?")
_SLIDE = re.compile(r"LongType\) - (\d+)\) % (\d+)\)")  # (start, slide) in microseconds
_DURATION = re.compile(r"\) \+ (\d+)\), LongType, TimestampType\)")


class Node:
    """One line of an analyzed plan: its operator, the rest of the line, and the lines under it."""

    def __init__(self, name: str, rest: str, depth: int):
        self.name, self.rest, self.depth = name, rest, depth
        self.children: list[Node] = []

    def walk(self) -> list[Node]:
        return [self, *(n for child in self.children for n in child.walk())]


def analyzed(frame: DataFrame) -> Node:
    """The analyzed logical plan of `frame` as a tree of `Node`s."""
    text = explained(frame).split("== Analyzed Logical Plan ==", 1)[-1].split("== Optimized", 1)[0]
    root: Node | None = None
    stack: list[Node] = []
    for line in text.splitlines()[2:]:  # the first line after the title is the output schema
        match = _NODE.match(line)
        if not match:
            continue
        node = Node(match["name"], match["rest"], len(match["indent"]))
        while stack and stack[-1].depth >= node.depth:
            stack.pop()
        if stack:
            stack[-1].children.append(node)
        else:
            root = node
        stack.append(node)
    assert root is not None, text
    return root


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
    try:
        out = transformed(job, stream)
    except Exception as exc:
        raise JobContractError(spec, f"transform(records) raised {type(exc).__name__}: {exc}") from exc
    root = analyzed(out)
    nodes = root.walk()
    _refuse_unsupported(spec, nodes)
    operator = _the_stateful_operator(spec, nodes)
    delays = _delays(spec, session, nodes)
    plan: dict[str, Any] = {
        PlanKey.OPERATOR: STATEFUL[operator.name],
        PlanKey.DELAYS: delays,
        PlanKey.OUTPUT_MODE: mode,
        PlanKey.COLUMNS: list(out.columns),
        PlanKey.WINDOW: None,
        PlanKey.WINDOW_COLUMN: None,
    }
    if operator.name == "Aggregate":
        plan.update(_aggregation(spec, operator, out, bool(delays), mode))
    else:
        plan[PlanKey.KEYS] = _record_columns(spec, operator, "deduplicates on")
        if any(n.name == "Filter" for n in operator.walk()[1:]):
            raise JobContractError(
                spec, "a filter before its deduplication is not supported: filter after it"
            )
    plan[PlanKey.LATENESS] = _lateness(spec, session, job, delays)
    return plan


def _refuse_unsupported(spec: str, nodes: Sequence[Node]) -> None:
    text = " ".join(n.rest for n in nodes)
    if "session_window" in text:
        raise JobContractError(spec, "session_window is not supported (tumbling and sliding windows are)")
    for node in nodes:
        if node.name in ARBITRARY_STATE:
            raise JobContractError(spec, f"{ARBITRARY_STATE[node.name]} is not supported: arbitrary state")
        if node.name == "Join" and sum(n.name.startswith("StreamingRelation") for n in node.walk()) > 1:
            raise JobContractError(spec, "a stream-stream join is not supported")
    stateful = [n for n in nodes if n.name in STATEFUL]
    if len(stateful) > 1:
        names = " over ".join(STATEFUL[n.name] for n in stateful)
        raise JobContractError(spec, f"chained stateful operators are not supported: {names}")
    if not stateful:
        raise WrongSuite(
            spec, "transform has no aggregation or deduplication: a row-wise job runs in --suite streaming"
        )


def _the_stateful_operator(spec: str, nodes: Sequence[Node]) -> Node:
    return next(n for n in nodes if n.name in STATEFUL)


def _source_ids(nodes: Sequence[Node]) -> dict[str, str]:
    """The records' columns by attribute id, as the stream's relation names them."""
    relation = next(n for n in nodes if n.name.startswith("StreamingRelation"))
    return {i: name for name, i in _ATTRIBUTE.findall(relation.rest) if name in RECORD_COLUMNS}


def _delays(spec: str, session: Any, nodes: Sequence[Node]) -> list[int]:
    found = []
    ids = _source_ids(nodes)
    for node in nodes:
        if node.name != "EventTimeWatermark":
            continue
        match = _WATERMARK.search(node.name + node.rest)
        if match is None or ids.get(match["id"]) != "event_time":
            raise JobContractError(spec, "withWatermark must name the records' event_time column")
        below = {n.name for n in node.walk()[1:]} - UNDER_A_WATERMARK
        if below:
            raise JobContractError(
                spec, f"withWatermark over {', '.join(sorted(below))}: apply it to the records first"
            )
        found.append(match["delay"].strip())
    return interval_ms(session, found)


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


def _aggregation(spec: str, operator: Node, out: DataFrame, watermarked: bool, mode: str) -> dict:
    grouping = operator.rest.split("], [", 1)[0]
    tagged = [name for name, _ in _ATTRIBUTE.findall(grouping)]
    window_columns = [f.name for f in out.schema.fields if _is_window(f.dataType.simpleString())]
    expression = " ".join(n.rest for n in operator.walk())
    slide, duration = _SLIDE.search(expression), _DURATION.search(expression)
    if (slide is None) != (not window_columns) or len(window_columns) > 1:
        raise JobContractError(
            spec, "a window aggregation's output must keep its window column (struct of start and end)"
        )
    if "event_time" in tagged and slide is None:
        raise JobContractError(spec, "grouping by the raw event_time is not supported: group by a window")
    if mode == OutputMode.APPEND and (not watermarked or slide is None):
        what = "a watermark" if not watermarked else "a window"
        raise JobContractError(spec, f"an append-mode aggregation needs {what}: Spark cannot emit it")
    keys = [name for name in tagged if name in RECORD_COLUMNS]
    if slide is None:
        return {PlanKey.KEYS: keys}
    assert duration is not None
    start, step = int(slide.group(1)) // 1000, int(slide.group(2)) // 1000
    return {
        PlanKey.KEYS: keys,
        PlanKey.WINDOW: [int(duration.group(1)) // 1000, step, start],
        PlanKey.WINDOW_COLUMN: window_columns[0],
    }


def _is_window(type_name: str) -> bool:
    return type_name == "struct<start:timestamp,end:timestamp>"


def _record_columns(spec: str, operator: Node, what: str) -> list[str]:
    named = _ATTRIBUTE.findall(operator.rest.split("]", 1)[0])
    ids = _source_ids(operator.walk())
    outside = [name for name, i in named if ids.get(i) != name]
    if outside:
        raise JobContractError(
            spec, f"{what} {', '.join(outside)}: only the records' own columns are supported"
        )
    return [name for name, _ in named]


def _lateness(spec: str, session: Any, job: Any, delays: Sequence[int]) -> int | None:
    promise = getattr(job, "lateness", None)
    if promise is None:
        return delays[0] if len(delays) == 1 else None
    try:
        return interval_ms(session, [promise])[0]
    except Exception as exc:
        raise JobContractError(spec, f"lateness {promise!r} is not a Spark interval: {exc}") from exc
