"""The throwaway PostgreSQL cluster: logical decoding on a Unix socket, gone after a failed start, and one
line naming the fix when PostgreSQL is not installed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from frontier_harness.spark_impl.cdc import postgres
from frontier_harness.spark_impl.errors import PostgresMissing, PostgresUnavailable
from tests.helpers import gone_within


def test_the_cluster_decodes_logically_on_a_unix_socket_in_its_own_directory(postgres_cluster):
    with postgres.connect(postgres_cluster.dsn) as conn:
        settings = dict(conn.execute("SELECT name, setting FROM pg_settings").fetchall())
    assert settings["wal_level"] == "logical"
    assert settings["listen_addresses"] == ""
    assert settings["unix_socket_directories"] == str(postgres_cluster.root)
    assert (postgres_cluster.root / f".s.PGSQL.{postgres_cluster.port}").is_socket()


def test_without_postgres_it_fails_in_one_line_naming_the_fix(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(postgres.glob, "glob", lambda pattern: [])
    monkeypatch.setattr(postgres.tempfile, "mkdtemp", lambda **kw: pytest.fail("made a directory"))
    with pytest.raises(PostgresMissing) as caught:
        postgres.Cluster.start()
    message = str(caught.value)
    assert "\n" not in message and "ci/install-postgres.sh" in message, message


def test_a_start_that_fails_removes_its_directory(monkeypatch):
    made: list[Path] = []
    mkdtemp = postgres.tempfile.mkdtemp
    monkeypatch.setattr(
        postgres.tempfile, "mkdtemp", lambda **kw: made.append(Path(mkdtemp(**kw))) or str(made[-1])
    )
    monkeypatch.setitem(postgres.SETTINGS, "wal_level", "no_such_level")
    with pytest.raises(PostgresUnavailable, match="pg_ctl"):
        postgres.Cluster.start()
    assert made and not made[0].exists()


# A process that starts a cluster, says where it is and its server's pid, and waits to be killed.
OWNER = """
import time
from frontier_harness.spark_impl.cdc import postgres
cluster = postgres.Cluster.start()
print(cluster.root, (cluster.data / "postmaster.pid").read_text().split()[0], flush=True)
time.sleep(300)
"""


def test_a_cluster_whose_process_dies_of_sigkill_is_stopped_and_removed_all_the_same():
    """`Cluster._guard`: the process that started the cluster is SIGKILLed with its group (a CI job's timeout),
    which runs no exit hook; its server stops and its directory goes within seconds. Before, a `check` stopped
    by Ctrl-C left its cdc lane's server running (its lanes' process leaves by `os._exit`)."""
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    root, server = owner.stdout.readline().split()
    os.killpg(owner.pid, signal.SIGKILL)
    owner.wait()
    assert gone_within(30, int(server), paths=(Path(root),)), (
        "the server or its directory outlived its process"
    )
