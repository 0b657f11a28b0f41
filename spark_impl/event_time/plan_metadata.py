"""What Spark keys a checkpoint on, read from a job's plan objects before any data runs (a classic session).

`plan_metadata(session, frame)` asks Spark for the plan `explain` prints, the `IncrementalExecution` a
streaming query plans each batch with (`QueryExecution.queryExecutionForExplain`), and reads its objects
through py4j into a `Recorded` dict (`frontier_harness.model.vocabulary.event_time`):

- `sources`: each `StreamingRelation` (a v1 source: `file:json`, `file:parquet`, ...) or
  `StreamingRelationV2` (`kafka`, `rate`, a Python data source's name) of the analyzed plan, in the
  pre-order Spark numbers them in (`MicroBatchExecution` gives each the next source id as it transforms
  the plan), with the options that bind its offsets (`path`, `subscribe`, `subscribePattern`, `assign`);
- `operators`: each `StateStoreWriter` of the physical plan (Spark's `StateOpIdRule` numbers them top
  down from 0), with its short name (what `state/<id>/_metadata/metadata` records and
  `STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA` compares), its partitions, and for an
  aggregation or a deduplication the state schema Spark validates on a restart
  (`StateSchemaCompatibilityChecker`): the key is `keyExpressions`, the value the aggregation's
  `stateManager.getStateValueSchema` or the deduplication's `schemaForValueRow`. From the analyzed
  plan, in the same order: each key field's `lineage` (the expression it is computed by, expression ids
  and watermark marks left out, aliases followed down to the sources' columns), the aggregate
  functions, the window (`[duration, slide, start]` ms) and the filters between the operator and its
  sources (`rows`);
- `watermarks`: each `EventTimeWatermark` (its column's lineage, its delay in ms as Spark converts it, the
  operators between it and its source);
- `output` and `output_rows`: the job's output columns with their lineage, and the filters above the
  operators; `conf`: the settings Spark pins in `offsets/N`, as a batch of this session would journal them.

A Spark Connect session holds no plan objects on the client: only `explain`'s text and the output
schema, so `plan_metadata` refuses it (`PlanNotReadable`, one line).

>>> render("(total#9 * 2)", {9: "n#5L", 5: "count(1)"})
'((count(1)) * 2)'
>>> render("window#12-T5000ms", {12: "named_struct(start, event_time#1-T5000ms)"})
'(named_struct(start, event_time))'
>>> window_spec("((conv(t, LongType) - 0) % 10000000) ... ((s) + 10000000), LongType, TimestampType)")
[10000, 10000, 0]
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from py4j.java_gateway import get_field

from frontier_harness.model.vocabulary.event_time import (
    FieldKey,
    OperatorKey,
    Origin,
    Recorded,
    SourceKey,
    WatermarkKey,
)
from frontier_harness.spark_impl.errors import PlanNotReadable

# Where Spark's `OffsetSeqMetadata` lives (it moved in Spark 4.1); `OffsetSeqMetadata(0, 0, conf)` is the
# metadata a batch of this session would journal, its `conf` the settings Spark pins (`relevantSQLConfs`).
OFFSET_SEQ_METADATA = tuple(
    f"org.apache.spark.sql.execution.streaming.{package}OffsetSeqMetadata"
    for package in ("checkpointing.", "")
)
BINDING_OPTIONS = ("path", "subscribe", "subscribepattern", "assign")
FILE_FORMATS = ("json", "parquet", "csv", "text", "orc", "avro")
# Physical operators that write state (Spark's `StateStoreWriter`s), by class name.
STATE_WRITERS = (
    "StateStoreSaveExec",
    "SessionWindowStateStoreSaveExec",
    "StreamingDeduplicateExec",
    "StreamingDeduplicateWithinWatermarkExec",
    "StreamingSymmetricHashJoinExec",
    "FlatMapGroupsWithStateExec",
    "FlatMapGroupsInPandasWithStateExec",
    "TransformWithStateExec",
    "TransformWithStateInPySparkExec",
    "TransformWithStateInPandasExec",
    "StreamingGlobalLimitExec",
)
# The analyzed plan's nodes that plan into one of them, in the same pre-order.
STATEFUL_NODES = (
    "Aggregate",
    "Deduplicate",
    "DeduplicateWithinWatermark",
    "Distinct",
    "Join",
    "FlatMapGroupsWithState",
    "FlatMapGroupsInPandasWithState",
    "TransformWithState",
    "TransformWithStateInPySpark",
    "TransformWithStateInPandas",
    "GlobalLimit",
)
# `name#id`, with a watermark's mark (`-T5000ms`); a name may be an unaliased call (`avg(offset)#20`).
_ATTRIBUTE = re.compile(r"(\w+\([^()#]*\)|\w+)#(\d+)L?(?:-T\d+ms)?")
_MARK = re.compile(r"-T\d+ms")
_SLIDE = re.compile(r"LongType\) - (\d+)\) % (\d+)\)")  # (start, slide) in microseconds
_DURATION = re.compile(r"\) \+ (\d+)\), LongType, TimestampType\)")


def plan_metadata(session: Any, frame: Any) -> dict:
    """What Spark would key `frame`'s checkpoint on (see the module docstring), or `PlanNotReadable`."""
    if getattr(session, "_jvm", None) is None or not hasattr(frame, "_jdf"):
        raise PlanNotReadable(
            "a Spark Connect session gives only explain's text and the output schema: reading what Spark keys "
            "a checkpoint on needs the plan objects of a classic session (a local Spark or --master)"
        )
    execution = frame._jdf.queryExecution().queryExecutionForExplain()
    analyzed, physical = execution.analyzed(), execution.executedPlan()
    logical = preorder(analyzed)
    defs = definitions(logical)
    return {
        Recorded.ORIGIN: Origin.PLAN,
        Recorded.SOURCES: sources(logical),
        Recorded.OPERATORS: operators(logical, preorder(physical), defs),
        Recorded.WATERMARKS: watermarks(logical, defs),
        Recorded.OUTPUT: [_field(a, defs) for a in seq(analyzed.output())],
        Recorded.OUTPUT_ROWS: filters(analyzed, defs, below=False),
        Recorded.CONF: pinned_conf(session),
    }


def pinned_conf(session: Any) -> dict[str, str | None]:
    """The settings a batch of this session would journal in `offsets/N`, and their values, as Spark's own
    `OffsetSeqMetadata` collects them (a value the runtime conf leaves unset read from the session)."""
    jvm = session._jvm
    name = next(n for n in OFFSET_SEQ_METADATA if jvm.org.apache.spark.util.Utils.classIsLoadable(n))
    companion = functools.reduce(getattr, name.split("."), jvm)  # its static forwarder
    conf = json.loads(companion.apply(0, 0, session._jsparkSession.conf()).json())["conf"]
    return {key: value if value is not None else session.conf.get(key, None) for key, value in conf.items()}


def seq(scala: Any) -> list:
    """A Scala collection's elements, in order."""
    items, found = scala.iterator(), []
    while items.hasNext():
        found.append(items.next())
    return found


def preorder(node: Any) -> list:
    """A plan's nodes, each before its children, children left to right (the order Spark numbers in)."""
    return [node, *(n for child in seq(node.children()) for n in preorder(child))]


def kind(node: Any) -> str:
    """A plan node's or an expression's class name."""
    return node.getClass().getSimpleName()


def definitions(nodes: list) -> dict[int, str]:
    """Each attribute an alias (of a projection or an aggregation) or an expansion defines: id -> the
    expression text that defines it."""
    found: dict[int, str] = {}
    for node in nodes:
        name = kind(node)
        listed = (
            node.projectList()
            if name == "Project"
            else node.aggregateExpressions()
            if name == "Aggregate"
            else None
        )
        for expression in seq(listed) if listed is not None else ():
            if kind(expression) == "Alias":
                found[expression.exprId().id()] = expression.child().toString()
        if name == "Expand":  # a sliding window: the first projection defines each output
            first = seq(seq(node.projections())[0])
            for attribute, expression in zip(seq(node.output()), first):
                if kind(expression) != "AttributeReference":
                    found[attribute.exprId().id()] = expression.toString()
    return found


def render(text: str, defs: Mapping[int, str], depth: int = 0) -> str:
    """An expression's text with each attribute an alias defines replaced by its definition, recursively,
    and every other attribute by its name: two plans built apart render the same computation alike."""

    def attribute(match: re.Match) -> str:
        defined = defs.get(int(match.group(2)))
        if defined is None or depth > 32:
            return match.group(1)
        inner = render(defined, defs, depth + 1)
        passed_on = _ATTRIBUTE.fullmatch(defined) is not None  # an alias of an attribute: no new expression
        return inner if passed_on or re.fullmatch(r"\w+", inner) else f"({inner})"

    return _MARK.sub("", _ATTRIBUTE.sub(attribute, text))


def is_window(data_type: Any) -> bool:
    """Whether a (JSON) data type is a window's: a struct of a `start` and an `end` timestamp.

    >>> is_window({"type": "struct", "fields": [{"name": "start", "type": "timestamp"}, {"name": "end", "type": "timestamp"}]})
    True
    """
    fields = data_type.get("fields", []) if isinstance(data_type, dict) else []
    return [(f["name"], f["type"]) for f in fields] == [("start", "timestamp"), ("end", "timestamp")]


def window_spec(text: str) -> list[int] | None:
    """`[duration, slide, start]` in ms of the window a (rendered) `window()` expression computes, or None: the
    outermost one's, written last, where its time column is itself computed from a window (a roll-up).

    >>> inner = "((conv(t, LongType) - 0) % 10000000) ... ((s) + 10000000), LongType, TimestampType)"
    >>> window_spec(f"((conv({inner}, LongType) - 0) % 30000000) ... ((s) + 30000000), LongType, TimestampType)")
    [30000, 30000, 0]
    """
    slides, durations = _SLIDE.findall(text), _DURATION.findall(text)
    if not slides or not durations:
        return None
    return [int(durations[-1]) // 1000, int(slides[-1][1]) // 1000, int(slides[-1][0]) // 1000]


def sources(nodes: list) -> list[dict]:
    """The streaming relations, in Spark's source order: each one a source, even a relation read twice (a
    self-union: Spark logs an offset for each, measured on 4.3)."""
    found = []
    for node in nodes:
        name = kind(node)
        if name == "StreamingRelation":
            source = node.dataSource()
            fmt = source.className()
            options = _scala_map(source.options())
            label = f"file:{fmt}" if fmt in FILE_FORMATS else fmt
        elif name == "StreamingRelationV2":
            label = node.sourceName()
            options = dict(node.extraOptions().asCaseSensitiveMap())
        else:
            continue
        binding = {k: v for k, v in options.items() if k.lower() in BINDING_OPTIONS}
        found.append({SourceKey.KIND: label, SourceKey.OPTIONS: binding})
    return found


def _scala_map(scala: Any) -> dict[str, str]:
    pairs = (seq(scala.toSeq()) if hasattr(scala, "toSeq") else []) or []
    return {str(p._1()): str(p._2()) for p in pairs}


def operators(logical: list, physical: list, defs: Mapping[int, str]) -> list[dict]:
    """Each stateful operator, by operator id: the physical plan's, with the analyzed plan's lineage when the
    two list the same number of stateful operators."""
    writers = [n for n in physical if kind(n) in STATE_WRITERS]
    analyzed = [n for n in logical if _stateful(n)]
    paired = zip(writers, analyzed if len(analyzed) == len(writers) else [None] * len(writers))
    found = [_operator(writer, node, defs) for writer, node in paired]
    return sorted(found, key=lambda op: op[OperatorKey.ID])


def _stateful(node: Any) -> bool:
    name = kind(node)
    if name not in STATEFUL_NODES or not node.isStreaming():
        return False
    return name != "Join" or all(child.isStreaming() for child in seq(node.children()))


def _operator(writer: Any, node: Any, defs: Mapping[int, str]) -> dict:
    info = writer.getStateInfo()
    name = kind(writer)
    key = value = None
    if name in ("StateStoreSaveExec", "StreamingDeduplicateExec", "StreamingDeduplicateWithinWatermarkExec"):
        key = [_field(a, defs) for a in seq(writer.keyExpressions())]
        schema = (
            writer.stateManager().getStateValueSchema()
            if name == "StateStoreSaveExec"
            else writer.schemaForValueRow()
        )
        value = [_struct_field(f) for f in json.loads(schema.json())["fields"]]
    window = next(
        (spec for f in key or () if (spec := window_spec(f[FieldKey.LINEAGE] or "")) is not None), None
    )
    return {
        OperatorKey.ID: int(info.operatorId()),
        OperatorKey.NAME: writer.shortName(),
        OperatorKey.PARTITIONS: int(info.numPartitions()),
        OperatorKey.KEY: key,
        OperatorKey.VALUE: value,
        OperatorKey.AGGREGATES: aggregates(node, defs) if node is not None else None,
        OperatorKey.WINDOW: window,
        OperatorKey.ROWS: filters(node, defs) if node is not None else None,
    }


def _field(attribute: Any, defs: Mapping[int, str]) -> dict:
    metadata = json.loads(attribute.metadata().json())
    return {
        FieldKey.NAME: attribute.name(),
        FieldKey.TYPE: json.loads(attribute.dataType().json()),
        FieldKey.NULLABLE: bool(attribute.nullable()),
        FieldKey.LINEAGE: render(attribute.toString(), defs),
        FieldKey.DELAY_MS: metadata.get("spark.watermarkDelayMs"),
    }


def _struct_field(field: Mapping[str, Any]) -> dict:
    return {
        FieldKey.NAME: field["name"],
        FieldKey.TYPE: field["type"],
        FieldKey.NULLABLE: field["nullable"],
        FieldKey.LINEAGE: None,
        FieldKey.DELAY_MS: field.get("metadata", {}).get("spark.watermarkDelayMs"),
    }


def aggregates(node: Any, defs: Mapping[int, str]) -> list[str] | None:
    """An aggregation's functions, rendered, each once, in order (None for another operator)."""
    if kind(node) != "Aggregate":
        return None
    found: dict[str, None] = {}
    for expression in seq(node.aggregateExpressions()):
        for function in _aggregate_functions(expression):
            found.setdefault(render(function.aggregateFunction().toString(), defs))
    return list(found)


def _aggregate_functions(expression: Any) -> Iterator[Any]:
    if kind(expression) == "AggregateExpression":
        yield expression
        return
    for child in seq(expression.children()):
        yield from _aggregate_functions(child)


def filters(node: Any, defs: Mapping[int, str], below: bool = True) -> list[str]:
    """The conditions of the filters at and under `node` (under it only, `below`), pre-order, down to the
    first stateful operator or source on each path, rendered."""
    if not below and _stateful(node):
        return []
    found = [render(node.condition().toString(), defs)] if not below and kind(node) == "Filter" else []
    return found + [c for child in seq(node.children()) for c in filters(child, defs, below=False)]


def watermarks(nodes: list, defs: Mapping[int, str]) -> list[dict]:
    """Each `withWatermark`: its column's lineage, its delay in ms (Spark's conversion of the interval), and
    the operators between it and its source."""
    found = []
    for node in nodes:
        if kind(node) != "EventTimeWatermark":
            continue
        below = [kind(n) for n in preorder(node)[1:]]
        found.append(
            {
                WatermarkKey.COLUMN: render(node.eventTime().toString(), defs),
                WatermarkKey.DELAY_MS: int(_delay_ms(node)),
                WatermarkKey.BELOW: below,
            }
        )
    return found


def _delay_ms(node: Any) -> int:
    """The watermark's delay as Spark converts it (`EventTimeWatermark.getDelayMs`): its interval's months
    as 31 days, its days as 24 hours, its microseconds truncated to milliseconds."""
    delay = node.delay()
    months, days, micros = (get_field(delay, name) for name in ("months", "days", "microseconds"))
    return (months * 31 + days) * 86_400_000 + micros // 1000
