"""Which records a stateful job's stateless prefix passes on, to its watermark and to its first stateful
operator: the prefix run by Spark as a batch job over the records.

A job may filter its records before its first stateful operator (`where`, `filter`). Where the filter runs
is Spark's optimizer's choice, measured on 4.3: it pushes a deterministic filter that does not read the
event time under `withWatermark` wherever the job wrote it (`records.withWatermark(...).where(key != "c")`
filters before the watermark, which then follows the records kept only), and keeps one that reads the
event time above it (the watermark follows every record, the operator reads those kept).
`filters_before(frame)` reads where from the optimized plan of the job's stream: `Prefix.WATERMARK` when a
filter runs under the watermark, `Prefix.OPERATOR` when one runs between the watermark and the operator
only, or None (`IS NOT NULL` conditions drop none of the source's records: Spark's TimeWindowing and
constraint inference add them); filters on both sides of the watermark are `PrefixNotModeled`.

`reaching(session, job, histories, where)` runs the job's `transform` over each history's records as a
batch job and reads the rows its analyzed plan holds under its first stateful operator: the `data` of each
(it names the record in its history; a redelivery repeats it, and what the prefix does with it).
`derived(session, job, histories, columns)` reads the same rows' `columns` beside it: the values of the
keys a job derives from a record before its deduplication (`withColumn("id", concat_ws(":", "key",
"data")).dropDuplicatesWithinWatermark(["id"])`). `state_keys(session, job, histories)` evaluates an
aggregation's grouping expressions besides its window over them: the value Spark finds each record's
state by (`groupBy(lower("key"), window(...))` files a record of key `A` under `("a",)`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.event_time import Prefix
from frontier_harness.spark_impl import scratch
from frontier_harness.spark_impl.event_time.plan_metadata import (
    STATEFUL_NODES,
    is_window,
    kind,
    preorder,
    seq,
)
from frontier_harness.spark_impl.streaming.event_source import SCHEMA, instant
from frontier_harness.spark_impl.streaming.job import make_job, transformed, within_watermark_as_plain

WATERMARK = "EventTimeWatermark"
SET = "_frontier_harness_history"  # the history a record is of, in the one frame of a wave's records


class PrefixNotModeled(ValueError):
    """A job's filters run on both sides of its watermark: the suite follows one place only."""


def filters_before(frame: Any) -> str | None:
    """Where the job whose stream `frame` is filters its records before its first stateful operator, by
    Spark's optimized plan (see the module docstring): a `Prefix`, or None."""
    nodes = preorder(frame._jdf.queryExecution().queryExecutionForExplain().optimizedPlan())
    lowest = [n for n in nodes if kind(n) in STATEFUL_NODES][-1]
    under_operator = preorder(lowest)[1:]
    watermark = next((n for n in under_operator if kind(n) == WATERMARK), None)
    under_watermark = preorder(watermark)[1:] if watermark is not None else []
    below = any(_drops(n) for n in under_watermark)
    above = any(_drops(n) for n in under_operator if not any(n.equals(u) for u in under_watermark))
    if below and above:
        raise PrefixNotModeled("the job filters its records both under and over its watermark")
    return Prefix.WATERMARK if below else Prefix.OPERATOR if above else None


def _drops(node: Any) -> bool:
    """Whether a plan node is a filter with a condition besides `IS NOT NULL` ones."""
    return kind(node) == "Filter" and any(kind(c) != "IsNotNull" for c in _conjuncts(node.condition()))


def _conjuncts(condition: Any) -> list:
    if kind(condition) != "And":
        return [condition]
    return [c for child in seq(condition.children()) for c in _conjuncts(child)]


def job_for(spec: str) -> Any:
    """The job `spec` (MODULE:FACTORY) names, made in a directory of its own: `reaching` and `derived` run
    its `transform` only."""
    return make_job(spec, scratch.directory("job-prefix-"))


def reaching(
    session: Any, job: Any, histories: Sequence[Sequence[tuple]], where: str
) -> list[list[tuple[bool, bool]]]:
    """For each history's `(key, event_time_ms, data, partition, offset)` records (their `data` unique in
    a history but for a redelivery, which repeats the record), whether the job's filters (`where`, a
    `Prefix`) pass each to the watermark and to the first stateful operator. Each history's records are
    transformed apart, in one Spark job; a prefix that drops the records' `data` column raises Spark's
    `AnalysisException`."""
    passed = {(r[0], r[1]) for r in _rows_under(session, job, histories, lambda _: ["data"])}
    return [
        [((i, r[2]) in passed or where == Prefix.OPERATOR, (i, r[2]) in passed) for r in records]
        for i, records in enumerate(histories)
    ]


def derived(
    session: Any, job: Any, histories: Sequence[Sequence[tuple]], columns: Sequence[str]
) -> list[dict[str, tuple]]:
    """For each history's records (as `reaching` takes them), each record that reaches the first stateful
    operator, by its `data` -> the values of `columns` (keys the job derives from its key and data) there.
    One Spark job; a prefix that drops `data` or a column raises Spark's `AnalysisException`."""
    return _by_data(_rows_under(session, job, histories, lambda _: ["data", *columns]), len(histories))


def state_keys(session: Any, job: Any, histories: Sequence[Sequence[tuple]]) -> list[dict[str, tuple]]:
    """For each history's records (as `reaching` takes them), each record that reaches the job's first
    stateful operator, an aggregation, by its `data` -> the values of its grouping expressions besides the
    window, in their order: the key (with the window) Spark finds the record's state by. One Spark job."""
    return _by_data(_rows_under(session, job, histories, _grouping), len(histories))


def _grouping(aggregation: Any) -> list:
    """`data`, and an aggregation node's grouping expressions but its window (a struct of a `start` and an
    `end` timestamp), as columns over the rows under it."""
    expressions = seq(aggregation.groupingExpressions())
    kept = [e for e in expressions if not is_window(json.loads(e.dataType().json()))]
    return ["data", *(F.expr(e.sql()) for e in kept)]


def _by_data(rows: Sequence, histories: int) -> list[dict[str, tuple]]:
    """Rows `(history index, data, *values)` as each history's `data -> values`."""
    found: list[dict[str, tuple]] = [{} for _ in range(histories)]
    for row in rows:
        found[row[0]][row[1]] = tuple(row[2:])
    return found


def _rows_under(
    session: Any, job: Any, histories: Sequence[Sequence[tuple]], columns: Callable[[Any], Sequence]
) -> list:
    """The rows under the job's first stateful operator, each history's records transformed apart, as
    `(history index, *columns(operator))`: one Spark job."""
    rows = [(i, k, instant(ms), d, p, o) for i, records in enumerate(histories) for k, ms, d, p, o in records]
    frame = session.createDataFrame(rows, f"{SET} int, {SCHEMA}")
    kept: list[Any] = []
    with within_watermark_as_plain(type(frame)):
        for i in range(len(histories)):
            plan = transformed(job, frame.where(F.col(SET) == i).drop(SET))._jdf.queryExecution().analyzed()
            lowest = [n for n in preorder(plan) if kind(n) in STATEFUL_NODES][-1]
            under = _rows_of(session, seq(lowest.children())[0])
            kept.append(under.select(F.lit(i).alias(SET), *columns(lowest)))
    return functools.reduce(DataFrame.union, kept).collect() if kept else []


def _rows_of(session: Any, node: Any) -> DataFrame:
    """The rows a batch plan's node holds, as a DataFrame."""
    jvm = session._jvm
    return DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(session._jsparkSession, node), session)
