"""The PostgreSQL server a CDC trial writes to: a throwaway cluster the harness starts, or a user's own.

`Cluster.start()` makes a directory, runs `initdb` there (as the `postgres` user when we are root:
`initdb` refuses root, and the directory is made traversable for it), with `wal_level=logical`, a
Unix socket in that directory and a free port, and starts the server; `stop()` stops it and removes
the directory. `crash_restart()` is a crash of the server: `pg_ctl restart -m immediate` (what was
only in memory is gone, a replication slot's unflushed position among it; WAL replay recovers the
rest). The binaries are found by `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`
(Debian's layout, off PATH); without them `PostgresMissing` says, in one line, to run
`ci/install-postgres.sh`.

`server()` is the process's server: `FRONTIER_HARNESS_POSTGRES` (a libpq connection string of a
superuser, or a role with REPLICATION that may create databases) names a user's own, restarted by the
shell command in `FRONTIER_HARNESS_POSTGRES_RESTART`; without it a throwaway cluster is started on first
use and stopped at exit. `use(server)` installs one (the tests' fixture installs its cluster). A cluster started here is stopped when
the process exits, a multiprocessing child (the background lanes) too.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import multiprocessing.util
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

import psycopg

from frontier_harness.spark_impl.errors import PostgresMissing, PostgresUnavailable

ENV_DSN, ENV_RESTART = "FRONTIER_HARNESS_POSTGRES", "FRONTIER_HARNESS_POSTGRES_RESTART"
USER = "postgres"
START_TIMEOUT_S = 60
SETTINGS = {
    "wal_level": "logical",
    "max_replication_slots": "100",
    "max_wal_senders": "20",
    "max_connections": "100",
    "listen_addresses": "''",
    "fsync": "off",  # a throwaway cluster on one machine: the OS keeps what a crash of the server drops
    "log_min_messages": "warning",
    "log_checkpoints": "off",
}


class Server(Protocol):
    """A server a trial can use: its connection string, and a restart (a crash, for our own cluster)."""

    @property
    def dsn(self) -> str: ...

    def crash_restart(self) -> None: ...


def bindir() -> Path:
    """Where `initdb` and `pg_ctl` are: `pg_config --bindir`, else the newest Debian install."""
    found = []
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True)
        found.append(Path(out.stdout.strip()))
    except (OSError, subprocess.CalledProcessError):
        pass
    found += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)]
    for path in found:
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    raise PostgresMissing(found)


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.name)
    except ValueError:
        return 0.0


def free_port() -> int:
    """A TCP port nothing listens on now (the server's socket file is named by it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A throwaway cluster in a directory of its own (`start`, `crash_restart`, `stop`)."""

    def __init__(self, root: Path, port: int, bin_dir: Path):
        self.root, self.port, self.bin = root, port, bin_dir
        self.started_s = self.stopped_s = 0.0
        self.guard: subprocess.Popen | None = None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def dsn(self) -> str:
        return f"host={self.root} port={self.port} user={USER} dbname=postgres"

    @classmethod
    def start(cls) -> Cluster:
        """initdb and start a cluster; `PostgresMissing` without binaries, `PostgresUnavailable` if it fails."""
        began, binaries = time.perf_counter(), bindir()
        cluster = cls(Path(tempfile.mkdtemp(prefix="frontier-harness-postgres-")), free_port(), binaries)
        try:
            if os.geteuid() == 0:
                os.chmod(cluster.root, 0o755)
                shutil.chown(cluster.root, USER, USER)
            cluster._run(
                "initdb", "-D", str(cluster.data), "-U", USER, "-A", "trust", "-E", "UTF8",
                "--no-sync", "--wal-segsize=1", "--no-instructions",
            )  # fmt: skip
            settings = {**SETTINGS, "unix_socket_directories": f"'{cluster.root}'", "port": str(cluster.port)}
            with open(cluster.data / "postgresql.conf", "a") as conf:
                conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
            cluster.guard = cluster._guard()
            cluster._pg_ctl("start")
        except BaseException:
            cluster.stop()
            raise
        cluster.started_s = time.perf_counter() - began
        return cluster

    def _guard(self) -> subprocess.Popen:
        """A shell in a session of its own whose stdin is a pipe this process holds: at the pipe's end, which
        is this process's exit however it ended (a SIGKILL, a CI job's timeout, a multiprocessing child's
        `os._exit`, which runs no exit hook), it stops the server and removes the directory, as `stop` does.
        Before, a `check` stopped by Ctrl-C left its cdc lane's server running."""
        stop = " ".join(
            shlex.quote(arg)
            for arg in self._command("pg_ctl", "-D", str(self.data), "stop", "-m", "immediate")
        )
        pid, root = shlex.quote(str(self.data / "postmaster.pid")), shlex.quote(str(self.root))
        script = f"cat >/dev/null; if [ -f {pid} ]; then {stop} >/dev/null 2>&1; fi; rm -rf {root}"
        return subprocess.Popen(
            ["sh", "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a kill of this process's group leaves it to do its work
        )

    def _pg_ctl(self, *args: str) -> None:
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", str(START_TIMEOUT_S), *args)

    def _command(self, program: str, *args: str) -> list[str]:
        command = [str(self.bin / program), *args]
        return ["runuser", "-u", USER, "--", *command] if os.geteuid() == 0 else command

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(self._command(program, *args), capture_output=True, text=True, cwd=self.root)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise PostgresUnavailable(
                f"{program} {' '.join(args[:1])} exited {done.returncode}: {' '.join(tail)}"
            )

    def crash_restart(self) -> None:
        """Stops the server as a crash would (`-m immediate`) and starts it again (WAL replay)."""
        self._pg_ctl("restart", "-m", "immediate")

    def stop(self) -> None:
        """Stops the server if it runs and removes its directory (also after a failed start)."""
        began = time.perf_counter()
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(PostgresUnavailable):  # already gone: the directory goes all the same
                self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)
        if self.guard is not None:  # nothing left for it to do
            guard, self.guard = self.guard, None
            assert guard.stdin is not None
            guard.stdin.close()
            guard.wait(timeout=START_TIMEOUT_S)
        self.stopped_s = time.perf_counter() - began


class UserServer:
    """A user's own server: `dsn`, restarted by a shell command (`FRONTIER_HARNESS_POSTGRES_RESTART`)."""

    def __init__(self, dsn: str, restart: str | None):
        self.dsn, self.restart = dsn, restart

    def crash_restart(self) -> None:
        if not self.restart:
            raise PostgresUnavailable(
                f"a cdc trial restarts Postgres: set {ENV_RESTART} to a command that restarts the server at "
                f"{ENV_DSN}, or unset {ENV_DSN} to let the harness start its own"
            )
        done = subprocess.run(self.restart, shell=True, capture_output=True, text=True)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{ENV_RESTART} exited {done.returncode}: {done.stderr.strip()[-300:]}")


_SERVER: list[Any] = []


def use(server: Server | None) -> None:
    """Makes `server` the process's (None: forget it; the next `server()` finds or starts one)."""
    _SERVER[:] = [server] if server is not None else []


def server() -> Server:
    """The process's server: installed by `use`, named by `FRONTIER_HARNESS_POSTGRES`, or a throwaway
    cluster started now and stopped when the process exits."""
    if not _SERVER:
        dsn = os.environ.get(ENV_DSN)
        if dsn:
            use(UserServer(dsn, os.environ.get(ENV_RESTART)))
        else:
            cluster = Cluster.start()
            atexit.register(cluster.stop)
            # a multiprocessing child (the harness's background lanes) leaves through os._exit: no atexit
            multiprocessing.util.Finalize(None, cluster.stop, exitpriority=10)
            use(cluster)
    return _SERVER[0]


def connect(dsn: str, dbname: str | None = None, timeout_s: float = 30.0) -> psycopg.Connection:
    """An autocommit connection, retried while the server is starting or restarting (up to `timeout_s`);
    `PostgresUnavailable` naming the server once that is spent."""
    deadline = time.monotonic() + timeout_s
    target = f"{dsn} dbname={dbname}" if dbname else dsn
    while True:
        try:
            return psycopg.connect(target, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                raise PostgresUnavailable(f"cannot connect to {dsn}: {str(exc).strip()[:300]}") from exc
            time.sleep(0.2)
