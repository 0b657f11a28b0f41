"""The throwaway PostgreSQL cluster: logical decoding on a Unix socket, gone after a failed start, and one
line naming the fix when PostgreSQL is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontier_harness.spark_impl.cdc import postgres
from frontier_harness.spark_impl.errors import PostgresMissing, PostgresUnavailable


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
