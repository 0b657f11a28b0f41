"""A logical replication slot, read without consuming it and advanced only when told.

- `peek(conn, slot, publication, upto)`: the committed transactions the slot holds, decoded from
  `pgoutput` (`frontier_harness.spark_impl.cdc.pgoutput`): PostgreSQL decodes from the slot's
  `confirmed_flush_lsn` and returns whole transactions, those ending at or before `upto` when given
  (the `streaming` option, which would split a large transaction, is off); nothing is consumed;
- `state(conn, slot)`: `confirmed_flush_lsn`, `restart_lsn` and `wal_status` (`lost` once PostgreSQL
  released WAL the slot still needed);
- `advance(conn, slot, lsn)`: `pg_replication_slot_advance`, only forward (PostgreSQL never moves a slot
  back, and refuses to);
- `create(conn, slot)` and `publish(conn, publication, table)`: what a CDC stream needs upstream.

A slot serves one session at a time: a call that finds it active elsewhere (a driver that was just
killed, whose backend has not yet exited) waits for it, up to `BUSY_TIMEOUT_S`.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
import psycopg

from frontier_harness.model.vocabulary.cdc import lsn_text
from frontier_harness.spark_impl.cdc.pgoutput import Transaction, lsn, transactions
from frontier_harness.spark_impl.errors import CdcSourceError

PLUGIN = "pgoutput"
BUSY_TIMEOUT_S = 30.0
PEEK = (
    "SELECT lsn, xid, data FROM pg_logical_slot_peek_binary_changes(%s, %s::pg_lsn, NULL, "
    "'proto_version', '1', 'publication_names', %s)"
)


@attrs.frozen
class SlotState:
    """Where a slot stands: its confirmed flush LSN (what a stream may resume after), its restart LSN
    (the oldest WAL it keeps) and PostgreSQL's `wal_status` for it."""

    confirmed_flush: int
    restart_lsn: int | None
    wal_status: str | None


def state(conn: psycopg.Connection, slot: str) -> SlotState | None:
    """The slot's state, None when there is no such slot."""
    row = conn.execute(
        "SELECT confirmed_flush_lsn, restart_lsn, wal_status FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    ).fetchone()
    if row is None:
        return None
    confirmed, restart, wal = row
    return SlotState(lsn(confirmed) if confirmed else 0, lsn(restart) if restart else None, wal)


def required(conn: psycopg.Connection, slot: str) -> SlotState:
    """The slot's state; `CdcSourceError` when it does not exist or PostgreSQL released its WAL."""
    found = state(conn, slot)
    if found is None:
        raise CdcSourceError(f"replication slot {slot!r} does not exist (create it with the {PLUGIN} plugin)")
    if found.wal_status == "lost":
        raise CdcSourceError(
            f"replication slot {slot!r} lost WAL it needed (wal_status 'lost', confirmed flush "
            f"{lsn_text(found.confirmed_flush)}): the changes after it are gone upstream"
        )
    return found


def peek(conn: psycopg.Connection, slot: str, publication: str, upto: int | None = None) -> list[Transaction]:
    """The committed transactions the slot holds (ending at or before `upto`), without consuming them."""
    bound = lsn_text(upto) if upto is not None else None
    rows = _busy_retry(lambda: conn.execute(PEEK, (slot, bound, publication)).fetchall())
    return transactions(rows)


def advance(conn: psycopg.Connection, slot: str, to: int) -> None:
    """Moves the slot's confirmed flush LSN forward to `to` (a call that would move it back does nothing)."""
    current = required(conn, slot).confirmed_flush
    if to > current:
        _busy_retry(
            lambda: conn.execute("SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (slot, lsn_text(to)))
        )


def create(conn: psycopg.Connection, slot: str) -> int:
    """A new logical slot with the `pgoutput` plugin; returns its first confirmed flush LSN."""
    row = conn.execute(
        "SELECT lsn FROM pg_create_logical_replication_slot(%s, %s)", (slot, PLUGIN)
    ).fetchone()
    assert row is not None
    return lsn(row[0])


def publish(conn: psycopg.Connection, publication: str, table: str) -> None:
    """A publication of `table` (its changes are what `pgoutput` sends)."""
    conn.execute(f'CREATE PUBLICATION "{publication}" FOR TABLE {table}')


def _busy_retry(call: Any) -> Any:
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            return call()
        except psycopg.errors.ObjectInUse:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
