"""Words of the cdc capability: a Structured Streaming query over a PostgreSQL logical replication slot.

A *cdc* history writes transactions into PostgreSQL and drives the query: sessions `begin`,
`write` (`op`, `key`, `value`, `count` rows from `key` on) and `commit`; the query is `trigger`ed
(with a streaming `CrashPoint` `fault`, `kill` for a SIGKILL of a separate driver) and `restart`ed;
PostgreSQL itself crashes and restarts (`postgres_restart`); `slot_ahead` advances the slot past the
checkpoint while the query is down. Each trigger and restart is observed under the `CdcLabel`s.

>>> sorted(CdcAction)
['begin', 'commit', 'postgres_restart', 'restart', 'slot_ahead', 'trigger', 'write']
>>> Op("update") is Op.UPDATE
True
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import Word


class CdcAction(Word):
    """A step of a cdc history: `begin(session)`, `write(session, op, key, value, count)`,
    `commit(session)`, `trigger(fault?, kill?)`, `restart`, `postgres_restart`, `slot_ahead`."""

    BEGIN = "begin"
    WRITE = "write"
    COMMIT = "commit"
    TRIGGER = "trigger"
    RESTART = "restart"
    POSTGRES_RESTART = "postgres_restart"
    SLOT_AHEAD = "slot_ahead"


class CdcArg(Word):
    """Argument keys of a cdc history (a trigger's `fault` and `kill` are `IngestionArg`'s)."""

    SESSION = "session"
    OP = "op"
    KEY = "key"
    VALUE = "value"
    COUNT = "count"


class Op(Word):
    """A row change: the source table's rows are `(key, value)`, the key its primary key."""

    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"


class CdcLabel(Word):
    """What a cdc observation's `(step, label)` key holds after a trigger, a restart or the final step.

    `offsets` (batch id, end LSN), `commits` (batch ids), `changes` (batch id, xid, seq, op, key,
    value, how many times the sink holds it; our sink only), `table` (key, value, count: the
    materialized table, ours or a user's job's `read`), `transactions` (the history's transaction
    number, its xid, its commit end LSN, its row changes and whether a key changed twice in it, as
    PostgreSQL's own decoder reported them), `slot` (confirmed
    flush LSN, restart LSN, `wal_status`), `source_commits` (every `commit(end)` the source made,
    numbered), `starts` (each start of the query, numbered: its first batch, the slot's confirmed flush
    LSN and the newest committed batch's end LSN just before it), `crash` (the point that fired), `killed`
    (the point a separate driver reached, then died of SIGKILL), `postgres` (each postmaster start
    time seen so far), `down` (the query is down), `error` (`(CdcError, message)`).
    """

    OFFSETS = "offsets"
    COMMITS = "commits"
    CHANGES = "changes"
    TABLE = "table"
    TRANSACTIONS = "transactions"
    SLOT = "slot"
    SOURCE_COMMITS = "source_commits"
    STARTS = "starts"
    CRASH = "crash"
    KILLED = "killed"
    POSTGRES = "postgres"
    DOWN = "down"
    ERROR = "error"


class CdcError(Word):
    """The first field of a cdc `error` row: the source refused (a slot ahead of the stream, a slot that
    lost its WAL), the query failed otherwise, a user's job failed or its read did."""

    SOURCE_REFUSED = "the cdc source refused"
    QUERY_FAILED = "StreamingQueryException"
    JOB_FAILED = "the job failed"
    JOB_READ_FAILED = "the job's read failed"


class CdcOption(Word):
    """The CDC source's options: `dsn` (a libpq connection string), `slot`, `publication`, and the trials'
    `journal` (a directory where crash points fire and `commit(end)` calls are journaled)."""

    DSN = "dsn"
    SLOT = "slot"
    PUBLICATION = "publication"
    JOURNAL = "journal"


def lsn_text(value: int) -> str:
    """An LSN in PostgreSQL's `X/Y` text (two hex halves), as its messages name it.

    >>> lsn_text(6456936), lsn_text(1 << 32)
    ('0/628668', '1/0')
    """
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"
