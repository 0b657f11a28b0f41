"""The JVM class archive: mapped when it exists, built once in the background when not, and usable."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from frontier_harness.spark_impl import class_archive, class_archive_builder, session


@pytest.fixture
def started(monkeypatch) -> list:
    """The builders `java_options` starts (recorded, not run)."""
    calls: list = []
    monkeypatch.setattr(class_archive.subprocess, "Popen", lambda args, **kw: calls.append(args))
    monkeypatch.delenv(class_archive.SWITCH, raising=False)
    return calls


def test_an_archive_that_exists_is_mapped_and_checked(tmp_path, started):
    archive = tmp_path / "spark.jsa"
    archive.write_bytes(b"")
    assert class_archive.java_options(archive)[:2] == [
        f"-XX:SharedArchiveFile={archive}",
        "-XX:+VerifySharedSpaces",
    ]
    assert started == []


def test_two_installs_of_one_pyspark_version_get_two_archives(monkeypatch, tmp_path):
    """A JVM maps an archive only with the class path it was dumped with: another venv's PySpark jars
    (same version, another path) need their own archive."""
    import pyspark

    here = class_archive.archive_path()
    monkeypatch.setattr(pyspark, "__file__", str(tmp_path / "other-venv" / "pyspark" / "__init__.py"))
    assert class_archive.archive_path() != here
    assert class_archive.archive_path().name.startswith(f"spark-{pyspark.__version__}-")


def test_a_pyspark_installed_again_at_the_same_path_gets_another_archive(monkeypatch, tmp_path):
    """A virtualenv made again where it was: the same PySpark path, its jars written anew. The JVM refuses an
    archive dumped with the old jars ("A jar file is not the one used while building the shared archive
    file"), so the new jars need their own."""
    import pyspark

    jar = tmp_path / "venv" / "pyspark" / "jars" / "spark-core.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"install one")
    monkeypatch.setattr(pyspark, "__file__", str(jar.parent.parent / "__init__.py"))
    first = class_archive.archive_path()
    jar.write_bytes(b"install two")
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 1_000_000_000))
    assert class_archive.archive_path() != first


def test_without_an_archive_one_builder_starts_and_the_jvm_starts_without_it(tmp_path, started):
    archive = tmp_path / "cache" / "spark.jsa"
    assert class_archive.java_options(archive) == []
    assert class_archive.java_options(archive) == []  # a second JVM meanwhile: the lock is held
    assert started == [
        [sys.executable, "-m", "frontier_harness.spark_impl.class_archive_builder", str(archive)]
    ]


def test_ensure_builds_in_a_process_of_its_own_never_in_the_callers_session(tmp_path, monkeypatch):
    """A build stops the session it runs in and ends its JVM: `ensure` (the bench, a test) runs the builder
    as `java_options` does, and a caller's session is never touched."""
    archive = tmp_path / "spark.jsa"
    ran: list = []
    monkeypatch.setattr(session, "spark", lambda: pytest.fail("ensure built in the caller's session"))
    monkeypatch.setattr(
        class_archive_builder.subprocess, "run", lambda args, **kw: ran.append(args) or archive.touch()
    )
    assert class_archive_builder.ensure(archive)
    assert ran == [[sys.executable, "-m", class_archive.BUILDER, str(archive)]]
    assert class_archive_builder.ensure(archive) and len(ran) == 1  # it exists: nothing built


def test_a_stale_lock_is_taken_over_by_the_next_start(tmp_path, started):
    archive = tmp_path / "spark.jsa"
    lock = tmp_path / "spark.jsa.lock"
    lock.touch()
    stale = time.time() - class_archive.BUILD_TIMEOUT_S - 1
    os.utime(lock, (stale, stale))
    class_archive.java_options(archive)  # removes the dead builder's lock
    class_archive.java_options(archive)
    assert len(started) == 1


def test_switched_off_or_unwritable_the_jvm_starts_as_before(tmp_path, started, monkeypatch):
    read_only = tmp_path / "ro"
    read_only.mkdir(mode=0o500)
    if os.access(read_only, os.W_OK):  # root writes anywhere: make the directory a file instead
        read_only.rmdir()
        read_only.touch()
    assert class_archive.java_options(read_only / "cache" / "spark.jsa") == []
    monkeypatch.setenv(class_archive.SWITCH, "off")
    (tmp_path / "spark.jsa").touch()
    assert class_archive.java_options(tmp_path / "spark.jsa") == []
    assert started == []


def test_a_new_archive_prunes_the_cache_to_the_last_used_ones(tmp_path, monkeypatch, started):
    """Every virtualenv made again builds another archive of some 180 MB (16 in this machine's cache after a
    day): once one is in place, its builder keeps the `KEPT` last used, itself among them; a JVM that maps an
    archive counts as a use."""
    old = [tmp_path / f"spark-4-java-{used}.jsa" for used in range(5)]
    for used, archive in enumerate(old):
        archive.touch()
        os.utime(archive, (used, used))
    class_archive.java_options(old[0])  # mapped now: the last used
    new = tmp_path / "spark-4-java-new.jsa"

    class Exited:  # the builder's JVM, which dumps the archive as it exits
        returncode, stdin = 0, SimpleNamespace(close=lambda: None)

        def wait(self, timeout: float) -> None:
            Path(os.environ[class_archive.DUMP]).touch()

    monkeypatch.setattr(class_archive_builder, "_run_small_jobs", lambda spark: None)
    for name, value in (("spark", lambda: None), ("jvm_process", Exited), ("stop", lambda: None)):
        monkeypatch.setattr(class_archive_builder.session, name, value)
    assert class_archive_builder.build(new)
    assert {p.name for p in tmp_path.glob("*.jsa")} == {new.name, old[0].name, old[4].name}


@pytest.mark.spark
def test_the_built_archive_is_one_a_jvm_can_map():
    """`-Xshare:on` makes a JVM that cannot map the archive fail to start instead of starting without it."""
    if not session.java_available():
        pytest.skip("Java is not installed")
    path = class_archive.archive_path()
    lock = path.with_name(path.name + ".lock")
    deadline = time.monotonic() + class_archive.BUILD_TIMEOUT_S
    while not class_archive_builder.ensure(path) and lock.exists() and time.monotonic() < deadline:
        time.sleep(2)  # a builder another process started is still at it
    assert path.exists()
    env = {**os.environ, "FRONTIER_HARNESS_SPARK_CONF": "spark.driver.extraJavaOptions=-Xshare:on"}
    env.pop(class_archive.SWITCH, None)  # a run with the archive off still checks the one it would map
    code = "from frontier_harness.spark_impl import session; session.spark().range(3).count()"
    ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
