"""The process that makes the class archive: a session's JVM runs a few small jobs and dumps its classes at exit.

`class_archive.java_options` starts it in the background (`python -m
frontier_harness.spark_impl.class_archive_builder PATH`, at the lowest CPU priority)
when no archive exists; it holds the build lock (`class_archive.take_lock`) and moves
the finished archive into place, so a reader never sees half of one. It lives apart
from `class_archive` because it starts a session, and the session reads its JVM's
options from `class_archive`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from frontier_harness.spark_impl import session
from frontier_harness.spark_impl.class_archive import (
    BUILD_TIMEOUT_S,
    BUILDER,
    DUMP,
    archive_path,
    prune,
    take_lock,
)


def ensure(path: Path | None = None) -> bool:
    """Builds the archive now (a JVM's start, a few jobs and its exit: about a minute's CPU) unless it exists
    or another process is building it; True if it is in place after. The build runs in a process of its own,
    as `class_archive.java_options` starts it: a build stops the session it runs in and ends its JVM, which
    in the caller's process would be the caller's."""
    path = path or archive_path()
    if not path.exists() and take_lock(path):
        subprocess.run([sys.executable, "-m", BUILDER, str(path)], timeout=BUILD_TIMEOUT_S, check=False)
    return path.exists()


def build(path: Path) -> bool:
    """Builds the archive at `path` in this process, whose lock the caller holds; True if it is in place after."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    os.environ[DUMP] = str(part)
    try:
        _run_small_jobs(session.spark())
        jvm = session.jvm_process()
        session.stop()
        jvm.stdin.close()  # the gateway exits on end of input; the archive is written as it exits
        jvm.wait(timeout=BUILD_TIMEOUT_S)
        if jvm.returncode == 0 and part.exists():
            os.replace(part, path)
            prune(path)
    finally:
        del os.environ[DUMP]
        part.unlink(missing_ok=True)
        path.with_name(path.name + ".lock").unlink(missing_ok=True)
    return path.exists()


def _run_small_jobs(spark) -> None:
    """What the harness's jobs load: Arrow in and out, joins, aggregates, windows, arrays, a checkpoint, Parquet."""
    import tempfile

    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = spark.createDataFrame(pa.table({"k": [1, 2, 2], "t": [0, 1, 2], "d": ["a", "b", "c"]}).to_pandas())
    ranked = rows.withColumn("r", F.row_number().over(Window.partitionBy("k").orderBy("t")))
    grouped = ranked.groupBy("k").agg(F.sum("t").alias("s"), F.collect_list(F.struct("t", "d")).alias("l"))
    joined = grouped.join(rows, "k").select(
        "k", F.explode("l").alias("x"), F.transform("l", lambda x: x["t"])
    )
    joined.localCheckpoint().toArrow()
    with tempfile.TemporaryDirectory() as out:
        joined.write.parquet(out + "/p")
        spark.read.parquet(out + "/p").count()


if __name__ == "__main__":
    # The JVM inherits it: the archive is for later runs, and must not slow the one that started it.
    os.nice(19)
    sys.exit(0 if build(Path(sys.argv[1])) else 1)
