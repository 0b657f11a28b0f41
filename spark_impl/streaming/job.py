"""A user's streaming job in a trial: built by its factory, its writer wrapped, its rows read back.

A job is named `MODULE:FACTORY`; `FACTORY(directory)` returns an object with an optional
`transform(records)`, a `write(batch, batch_id)` and a `read(spark)` (the protocol is
`frontier_harness.properties.checks.streaming.job.StreamingJob`). Here is everything that touches it with Spark:

- `make_job(spec, directory)`: the factory called at a start or restart of the trial's query
  (in the process that runs it), with the trial's job directory;
- `transformed(job, records)`: `transform(records)`, or the records when it has none;
  `joined(job, load)`: a join job's `transform(left, right)` over its two inputs (`is_join`);
- `job_writer(job, fault_dir)`: the `foreachBatch` function: the user's `write`, then the
  `after_sink` crash point (a crash after `write` returned, before Spark commits);
- `read_rows(jobs)`: every trial's `read(spark)` of a wave in one Spark job per schema (a read that
  raises is the job's failure, with its traceback: `raised`);
- `batch_outputs(spec, record_sets)`: the oracle's side, `transform` as a batch job over each
  set of records, many sets per Spark job; `frame_outputs` the same for a stateful job, each set
  (a frame) transformed whole;
- `built(spec, directory)` refuses, before Spark starts, a job that cannot be imported or lacks
  `write` or `read`; `validate(spec, session)` then refuses a job the trials cannot run (a `read` of
  the wrong type, a `transform` that is not row-wise): `JobContractError`, one line naming what is
  wrong, before any trial;

A row is a tuple of `(column, value)` pairs sorted by column name, values as Python values
(lists and maps made hashable, timestamps as epoch milliseconds), so rows compare by name whatever
the column order.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import os
import re
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl import scratch
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.streaming.event_source import SCHEMA as EVENT_SCHEMA
from frontier_harness.spark_impl.streaming.event_source import instant
from frontier_harness.spark_impl.streaming.source import SCHEMA

TRIAL, SET = "_fh_trial", "_fh_set"
CHUNK = 256  # records per oracle job (one task each)
REPARTITIONS = {"Repartition", "RepartitionByExpression", "RebalancePartitions"}
# Logical plan operators that are not row-wise (Spark's names in the analyzed plan).
NOT_ROW_WISE = {
    "Aggregate": "an aggregation",
    "Expand": "an aggregation (cube, rollup or grouping sets)",
    "Deduplicate": "a deduplication",
    "DeduplicateWithinWatermark": "a deduplication",
    "Distinct": "a deduplication",
    "Join": "a join",
    "Window": "a window function",
    "GlobalLimit": "a limit",
    "LocalLimit": "a limit",
    "Sort": "a sort",
    "Intersect": "a set operation",
    "Except": "a set operation",
    "Union": "a union",
}
_OPERATOR = re.compile(r"^[\s:+\-|]*~?([A-Z][A-Za-z]*)")
BATCH_ID = "batch_id"
JOIN_SIDES = ("left", "right")  # a join job's inputs, in `transform(left, right)`'s order

Rows = Counter  # row -> how many times it is held


class JobContractError(ValueError):
    """A job the trials cannot run (not importable, no `write`/`read`, a `read` of the wrong type,
    a `transform` that is not row-wise); the message is one line naming the job and what is wrong."""

    def __init__(self, spec: str, problem: str):
        self.spec, self.problem = spec, problem
        super().__init__(f"--job {spec}: {problem}")


class WrongSuite(JobContractError):
    """A job of the other suite's kind: a stateful transform under the streaming suite, a row-wise one under
    the stateful suite."""


def load_factory(spec: str) -> Callable[[str], Any]:
    """`MODULE:FACTORY` imported (from the working directory too), or `JobContractError`."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise JobContractError(spec, "expected MODULE:FACTORY")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(module), name)
    except Exception as exc:  # an import that fails for any reason is the job's, named in one line
        raise JobContractError(spec, f"cannot import {name!r} from {module!r}: {_one_line(exc)}") from exc
    if not callable(factory):
        raise JobContractError(spec, f"{module}.{name} is a {type(factory).__name__}, not a factory")
    return factory


def make_job(spec: str, directory: os.PathLike | str) -> Any:
    """`FACTORY(directory)`: the job for one start of a trial's query."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    return load_factory(spec)(str(directory))


def transformed(job: Any, records: DataFrame) -> DataFrame:
    """The job's `transform(records)`, or the records unchanged when it has none."""
    transform = getattr(job, "transform", None)
    return records if transform is None else transform(records)


def is_join(job: Any) -> bool:
    """Whether `job` is a stream-stream join job (`StatefulJoinJob`): its `transform` takes two inputs.

    >>> class Join:
    ...     def transform(self, left, right): ...
    >>> is_join(Join()), is_join(object())
    (True, False)
    """
    transform = getattr(job, "transform", None)
    if not callable(transform):
        return False
    try:
        parameters = inspect.signature(transform).parameters.values()
    except (TypeError, ValueError):
        return False
    required = [
        p
        for p in parameters
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(required) == 2


def joined(job: Any, load: Callable[[str], DataFrame]) -> DataFrame:
    """A join job's `transform(left, right)` over `load(side)` of each of its inputs (`JOIN_SIDES`)."""
    return job.transform(*(load(side) for side in JOIN_SIDES))


def job_writer(job: Any, fault_dir: str) -> Callable[[DataFrame, int], None]:
    """The `foreachBatch` function: the user's `write`, then the `after_sink` crash point."""

    def write(batch: DataFrame, batch_id: int) -> None:
        job.write(batch, batch_id)
        faults.fire(fault_dir, CrashPoint.AFTER_SINK)

    return write


def built(spec: str, directory: os.PathLike | str | None = None) -> Any:
    """The job `FACTORY(directory)` makes, with `write` and `read` (and `transform`, if any) callable;
    `JobContractError` otherwise. Needs no Spark: a job that cannot run is refused before it starts."""
    directory = directory or scratch.directory("job-check-")
    try:
        job = make_job(spec, directory)
    except JobContractError:
        raise
    except Exception as exc:
        raise JobContractError(spec, f"the factory raised {_one_line(exc)}") from exc
    missing = [m for m in ("write", "read") if not callable(getattr(job, m, None))]
    if missing:
        raise JobContractError(spec, f"{type(job).__name__} has no {' and no '.join(missing)} method")
    transform = getattr(job, "transform", None)
    if transform is not None and not callable(transform):
        raise JobContractError(spec, f"its transform is a {type(transform).__name__}, not a function")
    return job


def validate(spec: str, session: Any, job: Any, schema: str = SCHEMA) -> list[str]:
    """Refuses a row-wise job the trials cannot run (`JobContractError`); returns `transform`'s columns over
    records of `schema` (our source's; the CDC source's change rows for a CDC job)."""
    check_read(spec, job.read, session)
    return _check_transform(spec, job, session, schema)


def check_read(spec: str, read: Callable[[Any], Any], session: Any) -> None:
    try:
        before = read(session)
    except Exception as exc:
        raise JobContractError(spec, f"read(spark) before any write raised {_one_line(exc)}") from exc
    if before is not None and not isinstance(before, DataFrame):
        raise JobContractError(
            spec, f"read(spark) returned a {type(before).__name__}: expected a DataFrame or None"
        )


def _check_transform(spec: str, job: Any, session: Any, schema: str = SCHEMA) -> list[str]:
    try:
        out = transformed(job, session.createDataFrame([], schema))
    except Exception as exc:
        raise JobContractError(spec, f"transform(records) raised {_one_line(exc)}") from exc
    if not isinstance(out, DataFrame):
        raise JobContractError(spec, f"transform returned a {type(out).__name__}: expected a DataFrame")
    found = sorted({NOT_ROW_WISE[op] for op in plan_operators(out) if op in NOT_ROW_WISE})
    if found:
        raise WrongSuite(
            spec,
            f"transform is not row-wise: its logical plan has {', '.join(found)} "
            "(use select, filter, withColumn; a stateful job runs in --suite stateful)",
        )
    return list(out.columns)


def explained(frame: DataFrame) -> str:
    """What `frame.explain(mode="extended")` prints (classic or Connect): its parsed, analyzed, optimized
    and physical plans."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        frame.explain(mode="extended")
    return text.getvalue()


def plan_operators(frame: DataFrame) -> list[str]:
    """The operator names of `frame`'s analyzed logical plan (as `explain` prints it, classic or Connect)."""
    plan = explained(frame).split("== Analyzed Logical Plan ==", 1)[-1]
    plan = plan.split("== Optimized Logical Plan ==", 1)[0]
    return [m.group(1) for line in plan.splitlines() if (m := _OPERATOR.match(line))]


def read_rows(session: Any, jobs: Sequence[Any], drop: Sequence[str] = ()) -> list[Rows | str]:
    """Each job's `read(spark)` as a multiset of rows (without the columns `drop` names), or why it could not
    be read: a first line, then the job's traceback cut to its frames (`raised`).

    Frames with the same columns are unioned and collected together: one Spark job per schema. A frame that
    does not resolve (an `AnalysisException`, raised in `read` by classic Spark, later by Spark Connect) is
    its job's; an error collecting the rows is raised as it is (the check's: Spark's, or an implementation's).
    """
    results: list[Rows | str] = [Rows() for _ in jobs]
    groups: dict[str, list[DataFrame]] = {}
    for i, job in enumerate(jobs):
        tagged = _tagged(session, job, i, drop)
        if isinstance(tagged, str):
            results[i] = tagged
        elif tagged is not None:
            groups.setdefault(tagged[0], []).append(tagged[1])
    for frames in groups.values():
        for i, rows in _collect_tagged(frames, TRIAL).items():
            results[i] = rows
    return results


def _tagged(session: Any, job: Any, i: int, drop: Sequence[str]) -> tuple[str, DataFrame] | str | None:
    """Job `i`'s `read(spark)`, its columns sorted and tagged `i`, with its schema; None before its first
    write; else why it cannot be read (`read_rows`)."""
    try:
        frame = job.read(session)
    except Exception as exc:
        return f"read(spark) raised {_one_line(exc)}\n{raised(exc)}"
    if frame is None:
        return None
    if not isinstance(frame, DataFrame):
        return f"read(spark) returned a {type(frame).__name__}, not a DataFrame or None"
    try:
        columns = sorted(c for c in frame.columns if c not in drop)
        tagged = frame.select(*[F.col(f"`{c}`") for c in columns]).withColumn(TRIAL, F.lit(i))
        return tagged.schema.simpleString(), tagged
    except AnalysisException as exc:
        return f"read(spark) returned a DataFrame that does not resolve: {_one_line(exc)}"


def batch_outputs(
    spec: str, session: Any, record_sets: Sequence[Sequence[tuple]], cache: dict | None = None
) -> list[Rows]:
    """`transform` as a batch job, without crashes, over each set of `(data, partition, offset)` records.

    Row-wise means a set's output is the sum of its records' outputs, so `transform` runs once
    over the distinct records of all the sets (`record_outputs`), none twice with the same `cache`.
    """
    cache = {} if cache is None else cache
    todo = sorted({r for records in record_sets for r in records} - set(cache))
    if todo:
        job = make_job(spec, scratch.directory("job-oracle-"))
        cache.update(record_outputs(job, session, todo))
    return [sum((cache[r] for r in records), Rows()) for records in record_sets]


def record_outputs(job: Any, session: Any, records: Sequence[tuple]) -> dict[tuple, Rows]:
    """Each record's rows under `transform`, `CHUNK` records a Spark job: record `i` is alone in
    partition `i` of a range, and a row-wise plan keeps partitions, so `spark_partition_id()`
    after the transform names the record a row came from. A plan that repartitions falls back
    to a union of one-record frames."""
    found: dict[tuple, Rows] = {r: Rows() for r in records}
    moves = REPARTITIONS & set(plan_operators(transformed(job, session.createDataFrame([], SCHEMA))))
    for first in range(0, len(records), CHUNK):
        chunk = records[first : first + CHUNK]
        if moves:
            frames = [
                transformed(job, session.createDataFrame([r], SCHEMA)).withColumn(SET, F.lit(i))
                for i, r in enumerate(chunk)
            ]
            tagged = _collect_tagged(frames, SET)
        else:
            out = transformed(job, _one_per_partition(session, chunk)).withColumn(SET, F.spark_partition_id())
            tagged = _collect_tagged([out], SET)
        for i, rows in tagged.items():
            found[chunk[i]] = rows
    return found


def frame_outputs(spec: str, session: Any, frames: Sequence[Sequence[tuple]]) -> list[Rows]:
    """A stateful job's `transform` as a batch job over each frame, a set of `(key, event_time_ms, data,
    partition, offset)` records, whole: one Spark job for every frame (each filtered from one frame of
    records, transformed, tagged, unioned). `withWatermark` does nothing in a batch job, and
    `dropDuplicatesWithinWatermark`, which Spark refuses there, runs as `dropDuplicates`. A `batch_id`
    column is dropped, as from the job's own rows."""
    rows = [
        (i, key, instant(ms), data, p, o) for i, frame in enumerate(frames) for key, ms, data, p, o in frame
    ]
    if not rows:
        return [Rows() for _ in frames]
    job = make_job(spec, scratch.directory("job-oracle-"))
    records = session.createDataFrame(rows, f"{SET} int, {EVENT_SCHEMA}")
    found: dict[int, Rows] = {}
    with within_watermark_as_plain(type(records)):
        outs = [
            transformed(job, records.where(F.col(SET) == i).drop(SET)).withColumn(SET, F.lit(i))
            for i, frame in enumerate(frames)
            if frame
        ]
        found = _collect_tagged(outs, SET, drop=(BATCH_ID,))
    return [found.get(i, Rows()) for i in range(len(frames))]


@contextlib.contextmanager
def within_watermark_as_plain(frame_type: type) -> Iterator[None]:
    """`dropDuplicatesWithinWatermark` runs as `dropDuplicates` on `frame_type` meanwhile (Spark refuses the
    former in a batch job, where the two agree)."""
    original = frame_type.dropDuplicatesWithinWatermark  # type: ignore[attr-defined]
    frame_type.dropDuplicatesWithinWatermark = frame_type.dropDuplicates  # type: ignore[attr-defined]
    try:
        yield
    finally:
        frame_type.dropDuplicatesWithinWatermark = original  # type: ignore[attr-defined]


def _one_per_partition(session: Any, records: Sequence[tuple]) -> DataFrame:
    """The records as a DataFrame of the source's schema, record `i` alone in partition `i`."""
    literal = F.array(
        *[
            F.struct(
                F.lit(data).cast("string").alias("data"),
                F.lit(partition).cast("int").alias("partition"),
                F.lit(offset).cast("long").alias("offset"),
            )
            for data, partition, offset in records
        ]
    )
    ids = session.range(0, len(records), 1, len(records))
    picked = ids.select(F.element_at(literal, (F.col("id") + 1).cast("int")).alias("r"))
    return picked.select("r.data", "r.partition", "r.offset")


def _collect_tagged(frames: list[DataFrame], tag: str, drop: Sequence[str] = ()) -> dict[int, Rows]:
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    found: dict[int, Rows] = {}
    for row in union.collect():
        values = row.asDict(recursive=False)
        key = values.pop(tag)
        for column in drop:
            values.pop(column, None)
        found.setdefault(key, Rows())[row_key(values)] += 1
    return found


def row_key(values: dict[str, Any]) -> tuple:
    """A row as `(column, value)` pairs sorted by column, values hashable."""
    return tuple(sorted((name, _frozen(v)) for name, v in values.items()))


def _frozen(value: Any) -> Any:
    if isinstance(value, Row):
        return row_key(value.asDict(recursive=False))
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, datetime):  # naive in the driver's zone, or aware: the same instant either way
        return round(value.timestamp() * 1000)
    return value


def _one_line(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def raised(exc: BaseException) -> str:
    """`exc`'s traceback as `traceback_of` cuts it: the user's frames and the exception line."""
    return traceback_of("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def traceback_of(text: str) -> str:
    """The Python traceback inside a failed query's message (or a formatted exception's), Spark's, PySpark's
    and this module's frames cut away."""
    start = text.rfind("Traceback (most recent call last):")
    if start < 0:
        return (text.strip().splitlines() or ["(no message)"])[0][:500]
    lines = text[start:].splitlines()
    kept, skipping = [lines[0]], False
    for line in lines[1:]:
        if line.startswith('  File "'):
            skipping = "/pyspark/" in line or "/py4j/" in line or "spark_impl/streaming/job.py" in line
        elif not line.startswith(" "):
            kept.append(line)  # the exception line ends the traceback
            break
        if not skipping:
            kept.append(line)
    return "\n".join(kept)
