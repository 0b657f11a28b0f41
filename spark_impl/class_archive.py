"""A class-data-sharing archive of the classes a Spark driver loads: a JVM that maps it starts seconds sooner.

HotSpot's dynamic CDS (JDK 13 and later; Spark 4 needs 17) writes the classes a
JVM loaded to an archive when it exits (`-XX:ArchiveClassesAtExit`); a later JVM
maps them (`-XX:SharedArchiveFile`) instead of reading, parsing and verifying
them again from some 250 jars. Every CLI command, replay and crash trial starts a
JVM (what it saves: docs/figures.md, `spark_start_s`).

The archive is made once per PySpark install and Java: the first session that
finds none starts `python -m frontier_harness.spark_impl.class_archive_builder PATH`
in the background, at the lowest CPU priority, and goes on without it. That
process (`class_archive_builder`: apart from this module, since it starts a
session and the session reads its options here) runs a few small jobs in a JVM
that dumps at exit, waits for the JVM to end, and moves the archive into place,
so a reader never sees half of one. The archive carries a checksum
(`-XX:+VerifySharedSpaces`), and a JVM that cannot use it (another Java, other
jars) starts without it, as `-Xshare:auto` does: the archive changes how fast a
JVM starts, never what it computes. `FRONTIER_HARNESS_CLASS_ARCHIVE=off` turns it off.
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
DUMP = "FRONTIER_HARNESS_CLASS_ARCHIVE_DUMP"  # set for the builder's JVM: the path it dumps to
CHECKED = "-XX:+VerifySharedSpaces"  # a checksum in the archive: a torn or altered one is refused, not used
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")  # the JVM warns of every class it cannot archive
KEPT = 3  # archives kept in the cache (`prune`): the last used, one of them the newest
BUILD_TIMEOUT_S = 600  # a lock older than this is a builder that died: the next start tries again
BUILDER = (
    "frontier_harness.spark_impl.class_archive_builder"  # the process that makes one (it starts a session)
)


def java_options(path: Path | None = None) -> list[str]:
    """The driver JVM's options for the archive at `path` (default `archive_path()`): map it when it
    exists; otherwise start building it in the background, and start without it."""
    if os.environ.get(SWITCH) == "off":
        return []
    if dump := os.environ.get(DUMP):
        return [f"-XX:ArchiveClassesAtExit={dump}", CHECKED, *QUIET]
    try:
        path = path or archive_path()
    except (OSError, RuntimeError):  # no home directory, no Java: no archive
        return []
    if path.exists():
        with contextlib.suppress(OSError):  # a read-only cache: the archive is mapped all the same
            os.utime(path)  # its last use, which `prune` keeps the most recent by
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


def prune(kept: Path, keep: int = KEPT) -> list[Path]:
    """Removes the archives beside `kept` but the `keep` last used (`kept` among them), and returns them.
    Every virtualenv made again, as CI makes one a run, is another install and builds another archive
    of some 180 MB: this machine's cache held 16 after a day's runs. A removed archive still mapped by
    a running JVM stays readable until that JVM exits; a virtualenv whose archive went builds it again.

    >>> import tempfile
    >>> cache = Path(tempfile.mkdtemp())
    >>> for used, name in enumerate(["spark-4-java-a.jsa", "spark-4-java-b.jsa", "spark-4-java-c.jsa"]):
    ...     (cache / name).touch(); os.utime(cache / name, (used, used))
    >>> [p.name for p in prune(cache / "spark-4-java-a.jsa", keep=2)]
    ['spark-4-java-b.jsa']
    >>> sorted(p.name for p in cache.iterdir())
    ['spark-4-java-a.jsa', 'spark-4-java-c.jsa']
    """
    others = sorted(
        (p for p in kept.parent.glob("spark-*-java-*.jsa") if p != kept),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    removed = others[max(keep - 1, 0) :]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def archive_path() -> Path:
    """`$XDG_CACHE_HOME/frontier-harness/` (else `~/.cache/...`): one archive per PySpark install and Java.

    A JVM maps an archive only with the class path it was dumped with, each jar as it was then (its
    size and modification time), so two virtualenvs holding the same PySpark version at two paths need
    two archives (keyed by version alone, the second venv's JVMs silently started without one), and so
    does a virtualenv made again at the same path (keyed by path alone, its JVMs refused the archive).
    """
    import pyspark

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "frontier-harness"
    java = (
        Path(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    )
    real = Path(java or "java").resolve()
    stamp = real.stat().st_mtime_ns if real.exists() else 0  # a Java updated in place is another Java
    install = Path(pyspark.__file__).resolve().parent
    jars = ";".join(
        f"{j.name}:{j.stat().st_size}:{j.stat().st_mtime_ns}" for j in sorted(install.glob("jars/*.jar"))
    )
    java_id = hashlib.sha256(f"{real}:{stamp}:{install}:{jars}".encode()).hexdigest()[:12]
    return cache / f"spark-{pyspark.__version__}-java-{java_id}.jsa"


def build_in_background(path: Path) -> None:
    """Starts the builder for `path`, detached, unless another process is building it."""
    if not take_lock(path):
        return
    subprocess.Popen(
        [sys.executable, "-m", BUILDER, str(path)],
        cwd=path.parent,  # its Spark log and SPARK_HOME links go there, not in the user's directory
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a crash trial's SIGKILL of its process group leaves it alone
    )


def take_lock(path: Path) -> bool:
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
