"""What Spark's Python workers, its memory pages and a trial's checkpoint cost: no PySpark compiled afresh per
worker, no 64 MB page per task that holds a row, no process started per checkpoint file (`spark_impl/session.py`,
`spark_impl/streaming/query.py`); and the user's settings a Connect server cannot take. No Spark here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyspark
import pytest

from frontier_harness.spark_impl import class_archive, session
from frontier_harness.spark_impl.errors import SparkConfError
from frontier_harness.spark_impl.streaming import query


def test_workers_get_a_spark_home_without_the_uncompiled_pyspark_zip(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setattr(session, "LOG", tmp_path / "spark.log")
    session._workers_import_compiled_pyspark()
    home, real = Path(os.environ["SPARK_HOME"]), Path(pyspark.__file__).parent
    assert (home / "jars").resolve() == (real / "jars").resolve()
    assert (home / "bin" / "spark-submit").exists()
    assert (real / "python" / "lib" / "pyspark.zip").exists() and not (home / "python").exists()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    session._workers_import_compiled_pyspark()  # a second process (the background lanes') finds it made
    assert os.environ["SPARK_HOME"] == str(home)


def test_a_pyspark_installed_elsewhere_gets_links_of_its_own(tmp_path, monkeypatch):
    """A virtualenv deleted and made again: its PySpark is at another path, and the links made for the
    deleted one dangle (every Spark start failed: no `bin/spark-submit`)."""
    monkeypatch.setattr(session, "LOG", tmp_path / "spark.log")
    for where in ("old", "new"):
        monkeypatch.delenv("SPARK_HOME", raising=False)
        (tmp_path / where / "bin").mkdir(parents=True)
        (tmp_path / where / "bin" / "spark-submit").touch()
        monkeypatch.setattr(
            "pyspark.find_spark_home._find_spark_home", lambda where=where: str(tmp_path / where)
        )
        session._workers_import_compiled_pyspark()
        shutil.rmtree(tmp_path / "old", ignore_errors=True)
    assert (Path(os.environ["SPARK_HOME"]) / "bin" / "spark-submit").exists()


def test_a_spark_home_of_the_users_own_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "theirs"))
    monkeypatch.setattr(session, "LOG", tmp_path / "spark.log")
    session._workers_import_compiled_pyspark()
    assert os.environ["SPARK_HOME"] == str(tmp_path / "theirs") and not (tmp_path / "spark-home").exists()


def test_a_local_session_allocates_small_pages_unless_the_user_sets_their_own(tmp_path, monkeypatch):
    monkeypatch.setattr(session, "LOG", tmp_path / "spark.log")
    monkeypatch.setenv(class_archive.SWITCH, "off")  # no archive built in the background by a test
    assert session._jvm_launch_conf("1", {})["spark.buffer.pageSize"] == "4m"
    theirs = {"spark.buffer.pageSize": "64m"}
    assert session._jvm_launch_conf("1", theirs)["spark.buffer.pageSize"] == "64m"


class FakeRuntime:
    """A running Connect server's conf: SQL settings change, `static` ones (with their values) do not."""

    def __init__(self, static: dict[str, str]):
        self.settings = dict(static)
        self.static = set(static)

    def isModifiable(self, key: str) -> bool:  # noqa: N802 (Spark's name)
        return key not in self.static

    def get(self, key: str, default: Any = None) -> Any:
        return self.settings.get(key, default)

    def set(self, key: str, value: str) -> None:
        assert key not in self.static, f"Cannot modify the value of the Spark config: {key}"
        self.settings[key] = value


def test_a_setting_a_running_connect_server_cannot_change_is_bad_input_that_names_it():
    runtime = FakeRuntime(static={"spark.buffer.pageSize": "64m"})
    session.set_at_runtime(runtime, {"spark.sql.shuffle.partitions": "4"})
    assert runtime.settings["spark.sql.shuffle.partitions"] == "4"
    session.set_at_runtime(runtime, {"spark.buffer.pageSize": "64m"})  # the server started with it: fine
    with pytest.raises(
        SparkConfError, match=r"spark\.buffer\.pageSize=4m: a running Spark Connect server cannot"
    ):
        session.set_at_runtime(runtime, {"spark.buffer.pageSize": "4m"})


class FakeSession:
    """A classic session's conf, and a JVM that knows the classes named in `loadable`."""

    def __init__(self, loadable: set[str]):
        self.settings: dict[str, str] = {}
        utils = SimpleNamespace(Utils=SimpleNamespace(classIsLoadable=loadable.__contains__))
        self._jvm = SimpleNamespace(
            org=SimpleNamespace(apache=SimpleNamespace(spark=SimpleNamespace(util=utils)))
        )
        self.conf = self

    def get(self, key: str, default: Any = None) -> Any:
        return self.settings.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.settings[key] = value


def test_a_trial_checkpoint_uses_the_file_system_manager_under_the_name_this_spark_knows():
    for name in query.FILE_SYSTEM_MANAGERS:
        fake = FakeSession({name})
        query._checkpoints_without_processes(fake)
        assert fake.settings == {query.CHECKPOINT_MANAGER: name}
    unknown = FakeSession(set())
    query._checkpoints_without_processes(unknown)
    assert unknown.settings == {}  # Spark's own default stays
