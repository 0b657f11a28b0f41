"""One CDC trial's database: the table its sessions write, the stream's slot, and an observer of the WAL.

`Upstream.create(server, name)` makes a database `name` holding the table `t (k int PRIMARY KEY, v text)`
(`REPLICA IDENTITY FULL`: an update or delete sends the whole old row), a publication of it, the
stream's slot (`pgoutput`, read by `frontier_harness.spark_impl.cdc.source`) and an observer slot
(`test_decoding`, PostgreSQL's own text decoder): the observer consumes what it reads and tells, for
each transaction, its xid and commit end LSN (`COMMIT` rows carry it), independently of the decoder
under test. Sessions (`begin`, `write`, `commit`) are connections of their own; a transaction is
numbered in the order it began, and its xid taken when it begins.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from frontier_harness.model.vocabulary.cdc import Op
from frontier_harness.spark_impl.cdc import slot as slots
from frontier_harness.spark_impl.cdc.pgoutput import lsn
from frontier_harness.spark_impl.cdc.postgres import Server, connect

TABLE = "t"
KEY = re.compile(r"\bk\[integer\]:(-?\d+)")  # the key in test_decoding's text of a row change
OBSERVER_PLUGIN = "test_decoding"
WRITES = {
    Op.INSERT: f"INSERT INTO {TABLE} SELECT g, %(v)s FROM generate_series(%(lo)s::int, %(hi)s::int) AS g",
    Op.UPDATE: f"UPDATE {TABLE} SET v = %(v)s WHERE k BETWEEN %(lo)s::int AND %(hi)s::int",
    Op.DELETE: f"DELETE FROM {TABLE} WHERE k BETWEEN %(lo)s::int AND %(hi)s::int",
}


class Upstream:
    """A trial's database (see the module docstring); `close` drops it."""

    def __init__(self, server: Server, name: str):
        self.server, self.name = server, name
        self.dsn = f"{server.dsn} dbname={name}"  # libpq: a later keyword overrides an earlier one
        self.slot, self.publication, self.observer = name, name, f"{name}_observer"
        self.sessions: dict[int, psycopg.Connection] = {}
        self.open: dict[int, int] = {}  # session -> the number of its open transaction
        self.xids: dict[int, int] = {}  # transaction number -> xid
        self.ends: dict[int, int] = {}  # xid -> commit end LSN, as the observer read it
        self.keys: dict[int, list[int]] = {}  # xid -> the key of each of its row changes, in order
        self.started_at: list[str] = []  # each postmaster start time seen
        self.first_lsn = 0

    @classmethod
    def create(cls, server: Server, name: str) -> Upstream:
        upstream = cls(server, name)
        with connect(server.dsn) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        with upstream.connection() as conn:
            conn.execute(f"CREATE TABLE {TABLE} (k int PRIMARY KEY, v text)")
            conn.execute(f"ALTER TABLE {TABLE} REPLICA IDENTITY FULL")
            slots.publish(conn, upstream.publication, TABLE)
            conn.execute(
                "SELECT pg_create_logical_replication_slot(%s, %s)", (upstream.observer, OBSERVER_PLUGIN)
            )
            upstream.first_lsn = slots.create(conn, upstream.slot)
        upstream.postmaster()
        return upstream

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with connect(self.dsn) as conn:
            yield conn

    def _session(self, session: int) -> psycopg.Connection:
        if session not in self.sessions:
            self.sessions[session] = connect(self.dsn)
        return self.sessions[session]

    def begin(self, session: int) -> int:
        """Opens a transaction in `session`; returns its number."""
        conn = self._session(session)
        conn.execute("BEGIN")
        row = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
        assert row is not None
        number = len(self.xids)
        self.xids[number], self.open[session] = row[0] & 0xFFFFFFFF, number
        return number

    def write(self, session: int, op: str, key: int, value: str | None, count: int) -> None:
        self._session(session).execute(WRITES[Op(op)], {"v": value, "lo": key, "hi": key + count - 1})

    def commit(self, session: int) -> None:
        self._session(session).execute("COMMIT")
        del self.open[session]

    def observe(self) -> None:
        """Consumes what the observer slot holds: each committed transaction's xid and end LSN."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT lsn, data FROM pg_logical_slot_get_changes(%s, NULL, NULL, 'include-xids', '1')",
                (self.observer,),
            ).fetchall()
        changed: list[int] = []
        for at, data in rows:
            if data.startswith("BEGIN "):
                changed = []
            elif data.startswith("COMMIT "):
                xid = int(data.split()[1])
                self.ends[xid], self.keys[xid] = lsn(at), changed
            elif (key := KEY.search(data)) is not None:
                changed.append(int(key.group(1)))

    def transactions(self) -> frozenset[tuple[int, int, int, int, bool]]:
        """`(number, xid, end LSN, row changes, a key changed twice)` of every transaction of the history
        PostgreSQL committed."""
        return frozenset(
            (n, x, self.ends[x], len(self.keys[x]), len(set(self.keys[x])) < len(self.keys[x]))
            for n, x in self.xids.items()
            if x in self.ends
        )

    def slot_state(self) -> slots.SlotState | None:
        with self.connection() as conn:
            return slots.state(conn, self.slot)

    def postmaster(self) -> list[str]:
        """Every postmaster start time seen so far, this one last if new."""
        with self.connection() as conn:
            row = conn.execute("SELECT pg_postmaster_start_time()::text").fetchone()
        assert row is not None
        if not self.started_at or self.started_at[-1] != row[0]:
            self.started_at.append(row[0])
        return self.started_at

    def crash_restart(self) -> None:
        """PostgreSQL crashes and starts again: the sessions' connections, and any open transaction, are
        gone (the history opens none across it)."""
        self._close_sessions()
        self.server.crash_restart()
        self.postmaster()

    def advance_ahead(self) -> int | None:
        """Advances the stream's slot to the newest committed transaction's end LSN; returns it (None when
        nothing was committed)."""
        self.observe()
        newest = max(self.ends.values(), default=None)
        if newest is not None:
            with self.connection() as conn:
                slots.advance(conn, self.slot, newest)
        return newest

    def _close_sessions(self) -> None:
        for conn in self.sessions.values():
            conn.close()
        self.sessions.clear()
        self.open.clear()

    def close(self) -> None:
        """Drops the database, its slots with it (a slot still active is dropped by `FORCE`'s termination)."""
        self._close_sessions()
        try:
            with connect(self.server.dsn, timeout_s=10) as admin:
                for name in (self.slot, self.observer):
                    _drop_slot(admin, name)
                admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        except Exception:  # a server that is gone takes the database with it
            pass


def _drop_slot(admin: Any, name: str) -> None:
    admin.execute(
        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = %s AND active",
        (name,),
    )
    admin.execute(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s", (name,)
    )
