"""Spark as the oracle of the upgrade check: a job of `tests/jobs/upgrades.py` writes a checkpoint over two
batches, the new job restarts on it with a third, and what Spark did is kept: the error it raised, or every
row each run wrote. The same new job run from the start over the same files, with the same runs, is what
it would have written had it always run.

The input is three JSON files, one batch each (`maxFilesPerTrigger` 1), their modification times set so
Spark reads them in order; event times in seconds:

- batch 0: a@12 x, a@13 y, b@14 x; batch 1: a@25 z, b@16 w: under a 5 s watermark, 20 s after it, so
  [10 s, 20 s) is evicted by the no-data batch that follows, and a's [20 s, 30 s) is held at the switch;
- batch 2, after the switch: a@27 z and a@28 r update a's [20 s, 30 s); a@17 v is late for the journaled
  20 s but not for a 10 s delay's 15 s; a@45 q moves the watermark to 40 s, completing [20 s, 30 s).

All runs share the harness's Spark session (one JVM); each job starts with its `conf` set (`job_conf`). An
old job's checkpoint is written once, at `WORKING`, stored, and copied back to `WORKING` for each change
(the file source logs absolute paths: a copy elsewhere is a move).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
from pyspark.errors import StreamingQueryException

from frontier_harness.spark_impl import scratch as scratch_directories
from frontier_harness.spark_impl.streaming.event_source import instant
from frontier_harness.spark_impl.streaming.job import make_job, row_key, transformed
from frontier_harness.spark_impl.upgrade.planned import job_conf

JOBS = "tests.jobs.upgrades"
BATCHES = (
    (("a", 12, "x", 0, 1), ("a", 13, "y", 0, 2), ("b", 14, "x", 1, 3)),
    (("a", 25, "z", 0, 4), ("b", 16, "w", 1, 5)),
    (("a", 27, "z", 0, 6), ("a", 17, "v", 0, 7), ("a", 28, "r", 0, 9), ("a", 45, "q", 0, 8)),
)
SWITCH = 2  # the batches before it run under the old job
# `counts`'s checkpoint as Spark 3.5 wrote it over the batches before the switch (ci/record_spark35_checkpoint.py)
SPARK35 = Path(__file__).parent / "recorded" / "spark35_counts.tar.gz"
_CLASS = re.compile(r"\[([A-Z][A-Z_]+)(?:\.[A-Z_]+)?\]")  # a class, and its sub-class dropped
# Not the job's error: the query's, and the matrix's own `foreachBatch` sink's around what the job raised in it
WRAPPERS = ("STREAM_FAILED", "FOREACH_BATCH_USER_FUNCTION_ERROR")


@attrs.frozen
class Ran:
    """What Spark did: the error class it raised (`AssertionError` for its bare assertion), or each run's
    rows (the rows a run wrote, as `row_key`s)."""

    error: str | None
    runs: tuple[Counter, ...] = ()


def scratch() -> Path:
    """A directory of this process's, removed when it exits (`spark_impl/scratch.py`)."""
    return scratch_directories.directory("upgrade-")


def put(job_dir: Path, batch: int) -> None:
    """Batch `batch`'s file in the job's input, dated after the ones before it."""
    folder = job_dir / "input"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"b{batch}.json"
    lines = [
        json.dumps(
            {"key": k, "event_time": instant(s * 1000).isoformat(), "data": d, "partition": p, "offset": o}
        )
        for k, s, d, p, o in BATCHES[batch]
    ]
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (1_700_000_000 + 10 * batch,) * 2)


def run(spark: Any, name: str, root: Path) -> Ran:
    """One `availableNow` start of job `name` (in `root/job`) on `root/checkpoint`: its rows, or Spark's error."""
    job = make_job(f"{JOBS}:{name}", root / "job")
    rows: Counter = Counter()

    def keep(batch: Any, _: int) -> None:
        rows.update(row_key(r.asDict(recursive=False)) for r in batch.collect())

    with job_conf(spark, job):  # the query keeps the settings it started with
        stream = transformed(job, job.source(spark)).writeStream.outputMode(job.output_mode)
        query = (
            stream.foreachBatch(keep)
            .option("checkpointLocation", str(root / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
    try:
        query.awaitTermination()
    except StreamingQueryException as exc:
        return Ran(error_class(str(exc)))
    return Ran(None, (rows,))


def error_class(text: str) -> str:
    """The error class a failed query's message names first past its `WRAPPERS`, or `AssertionError`.

    >>> error_class("[STREAM_FAILED] Query [id = 1] terminated with exception: [STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided")
    'STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE'
    >>> error_class("[STREAM_FAILED] ...: [FOREACH_BATCH_USER_FUNCTION_ERROR] ...: [CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS] ...")
    'CANNOT_LOAD_STATE_STORE'
    """
    if "assertion failed" in text:
        return "AssertionError"
    return next((c for c in _CLASS.findall(text) if c not in WRAPPERS), text.splitlines()[0][:200])


@functools.cache
def stored(spark: Any, old: str, working: Path) -> Path:
    """The old job's checkpoint and input after the batches before the switch, written at `working` and kept."""
    _clear(working)
    for batch in range(SWITCH):
        put(working / "job", batch)
    first = run(spark, old, working)
    assert first.error is None, first.error
    keep = scratch() / old
    shutil.copytree(working, keep)
    (keep / "rows.json").write_text(json.dumps([list(map(list, r)) for r in first.runs[0].elements()]))
    return keep


def restored(spark: Any, old: str, working: Path, moved: bool = False) -> Path:
    """The old job's checkpoint and input as its run left them, at `working` (or, `moved`, copied with its
    input to another directory): the root to restart the new job in."""
    keep = stored(spark, old, working)
    root = scratch() / "moved" if moved else working
    _clear(root)
    shutil.copytree(keep, root)
    return root


def from_spark35(root: Path) -> Path:
    """`counts`'s checkpoint as Spark 3.5 wrote it (`SPARK35`), restored at `root` with its input and rows,
    the input files its source log names rewritten from where it was recorded to `root`: the root to
    restart the new job in."""
    _clear(root)
    with tarfile.open(SPARK35) as archive:
        archive.extraction_filter = getattr(tarfile, "data_filter", None)  # none before Python 3.11.4
        archive.extractall(root)
    recorded = (root / "root").read_text().strip()
    for log in (root / "checkpoint" / "sources" / "0").iterdir():
        log.write_text(log.read_text().replace(recorded, str(root)))
    for batch in range(SWITCH):
        put(root / "job", batch)
    return root


def restarted(spark: Any, new: str, root: Path) -> Ran:
    """The new job restarted on the old job's checkpoint at `root` with the batch after the switch: the old
    run's rows, then the new run's (or the error Spark raised)."""
    before = Counter(_row(r) for r in json.loads((root / "rows.json").read_text()))
    put(root / "job", SWITCH)
    after = run(spark, new, root)
    return Ran(after.error, (before, *after.runs))


@functools.cache
def always(spark: Any, new: str) -> Ran:
    """The new job run from the start over the same batches, with the same runs."""
    root = scratch() / new
    for batch in range(SWITCH):
        put(root / "job", batch)
    first = run(spark, new, root)
    put(root / "job", SWITCH)
    second = run(spark, new, root)
    assert first.error is None and second.error is None, (first.error, second.error)
    return Ran(None, first.runs + second.runs)


def _clear(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _row(pairs: list) -> tuple:
    return tuple((name, _hashable(value)) for name, value in pairs)


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def differs(upgraded: Ran, fresh: Ran, group: tuple[str, ...], renamed: dict[str, str]) -> bool:
    """Whether the rows of the groups written after the switch (by either run) differ, over the whole run:
    the old job's rows read under the new job's names (`renamed`)."""

    def named(row: tuple) -> tuple:
        return tuple(sorted((renamed.get(k, k), v) for k, v in row))

    old_rows = Counter({named(r): n for r, n in upgraded.runs[0].items()})
    runs = [(old_rows, *upgraded.runs[1:]), fresh.runs]
    switched = {_group(r, group) for rows in (upgraded.runs[-1], fresh.runs[-1]) for r in rows}

    def of_switched(rows_by_run: tuple[Counter, ...]) -> Counter:
        total: Counter = Counter()
        for rows in rows_by_run:
            total.update({r: n for r, n in rows.items() if _group(r, group) in switched})
        return total

    return of_switched(runs[0]) != of_switched(runs[1])


def _group(row: tuple, group: tuple[str, ...]) -> tuple:
    values = dict(row)
    return tuple(values.get(column) for column in group)
