"""A class-data-sharing archive of the classes a Spark driver loads: a JVM that maps it starts seconds sooner.

HotSpot's dynamic CDS (JDK 13 and later; Spark 4 needs 17) writes the classes a
JVM loaded to an archive when it exits (`-XX:ArchiveClassesAtExit`); a later JVM
maps them (`-XX:SharedArchiveFile`) instead of reading, parsing and verifying
them again from some 250 jars. Measured on 2 cores: a session's start and first
job 10.1 s -> 6.4 s; `check --suite collections --domain total` (one process)
15.3 s -> 10.2 s. Every CLI command, replay and crash trial starts a JVM.

The archive is made once per PySpark version and Java: the first session that
finds none starts `python -m frontier_harness.spark_impl.class_archive PATH` in
the background, at the lowest CPU priority, and goes on without it. That
process runs a few small jobs in a JVM that dumps at exit, waits for the JVM to
end, and moves the archive into place, so a reader never sees half of one. The
archive carries a checksum (`-XX:+VerifySharedSpaces`), and a JVM that cannot
use it (another Java, other jars) starts without it, as `-Xshare:auto` does: the
archive changes how fast a JVM starts, never what it computes.
`FRONTIER_HARNESS_CLASS_ARCHIVE=off` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SWITCH = "FRONTIER_HARNESS_CLASS_ARCHIVE"  # "off": no archive
_DUMP = "FRONTIER_HARNESS_CLASS_ARCHIVE_DUMP"  # set for the builder's JVM: the path it dumps to
CHECKED = "-XX:+VerifySharedSpaces"  # a checksum in the archive: a torn or altered one is refused, not used
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")  # the JVM warns of every class it cannot archive
BUILD_TIMEOUT_S = 600  # a lock older than this is a builder that died: the next start tries again


def java_options(path: Path | None = None) -> list[str]:
    """The driver JVM's options for the archive at `path` (default `archive_path()`): map it when it
    exists; otherwise start building it in the background, and start without it."""
    if os.environ.get(SWITCH) == "off":
        return []
    if dump := os.environ.get(_DUMP):
        return [f"-XX:ArchiveClassesAtExit={dump}", CHECKED, *QUIET]
    try:
        path = path or archive_path()
    except (OSError, RuntimeError):  # no home directory, no Java: no archive
        return []
    if path.exists():
        return mapping(path)
    with contextlib.suppress(OSError):  # a read-only cache: no archive, the JVM starts as it always did
        build_in_background(path)
    return []


def mapping(path: Path) -> list[str]:
    """The options of a JVM that maps the archive at `path`, checked, and quiet about it.

    >>> mapping(Path("/cache/spark.jsa"))
    ['-XX:SharedArchiveFile=/cache/spark.jsa', '-XX:+VerifySharedSpaces', '-Xlog:cds=off', '-Xlog:cds+dynamic=off']
    """
    return [f"-XX:SharedArchiveFile={path}", CHECKED, *QUIET]


def archive_path() -> Path:
    """`$XDG_CACHE_HOME/frontier-harness/` (else `~/.cache/...`): one archive per PySpark install and Java.

    A JVM maps an archive only with the class path it was dumped with, so two virtualenvs holding the
    same PySpark version at two paths need two archives (keyed by version alone, the second venv's
    JVMs silently started without one).
    """
    import pyspark

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "frontier-harness"
    java = (
        Path(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    )
    real = Path(java or "java").resolve()
    stamp = real.stat().st_mtime_ns if real.exists() else 0  # a Java updated in place is another Java
    install = Path(pyspark.__file__).resolve().parent
    java_id = hashlib.sha256(f"{real}:{stamp}:{install}".encode()).hexdigest()[:12]
    return cache / f"spark-{pyspark.__version__}-java-{java_id}.jsa"


def build_in_background(path: Path) -> None:
    """Starts the builder for `path`, detached, unless another process is building it."""
    if not _lock(path):
        return
    subprocess.Popen(
        [sys.executable, "-m", __name__, str(path)],
        cwd=path.parent,  # its Spark log and SPARK_HOME links go there, not in the user's directory
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a crash trial's SIGKILL of its process group leaves it alone
    )


def ensure(path: Path | None = None) -> bool:
    """Builds the archive now (a JVM's start, a few jobs and its exit: ~45 s on 2 cores) unless it exists
    or another process is building it; True if it is in place after."""
    path = path or archive_path()
    return path.exists() or (_lock(path) and build(path))


def build(path: Path) -> bool:
    """Builds the archive at `path` in this process, whose lock the caller holds; True if it is in place after."""
    from frontier_harness.spark_impl import session

    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    os.environ[_DUMP] = str(part)
    try:
        _run_small_jobs(session.spark())
        jvm = session.jvm_process()
        session.stop()
        jvm.stdin.close()  # the gateway exits on end of input; the archive is written as it exits
        jvm.wait(timeout=BUILD_TIMEOUT_S)
        if jvm.returncode == 0 and part.exists():
            os.replace(part, path)
    finally:
        del os.environ[_DUMP]
        part.unlink(missing_ok=True)
        path.with_name(path.name + ".lock").unlink(missing_ok=True)
    return path.exists()


def _lock(path: Path) -> bool:
    """Takes `path`'s build lock; False when a live builder holds it (a stale lock is removed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        with contextlib.suppress(FileNotFoundError):
            if time.time() - lock.stat().st_mtime > BUILD_TIMEOUT_S:
                lock.unlink()
        return False


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
