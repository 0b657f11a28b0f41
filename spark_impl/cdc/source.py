"""A Spark streaming source over a PostgreSQL logical replication slot (`pgoutput`, decoded by us).

`spark.readStream.format("frontier_cdc").option("dsn", DSN).option("slot", S).option("publication", P)`
streams the row changes of the transactions the slot holds, one row per change:
`lsn` (its transaction's commit end LSN), `xid`, `seq` (its place in the transaction), `op`
(`insert`, `update`, `delete`, `truncate`), `relation` (`schema.table`), `before` and `after` (the row
as column -> PostgreSQL's text; `before` as the table's replica identity sends it).

Offsets are commit end LSNs, `{"lsn": n}`: a transaction belongs to the batch `(start, end]` when its end
LSN is above `start` and at or below `end`, so a transaction is never split across batches.

- `initialOffset`: the slot's `confirmed_flush_lsn` when the query first starts; Spark asks at every start
  until batch 0 commits, so with a `journal` the first answer is kept there and given again (without one,
  a slot moved before batch 0 committed is read from where it stands, its changes before lost unnoticed);
- `latestOffset`: the end LSN of the newest committed transaction the slot holds (peeked, not consumed);
- `partitions(start, end)`: one partition (a slot serves one session at a time);
- `read`: peeks up to `end` (PostgreSQL decodes from the slot's confirmed flush LSN) and keeps the
  transactions in `(start, end]`, so a batch Spark runs again reads the same rows;
- `commit(end)`: Spark made everything up to `end` durable: the slot advances to `end`, and PostgreSQL
  may release the WAL before it.

A slot whose confirmed flush LSN is past where the stream resumes (`start`) has released changes the
stream still needs: `latestOffset` and `read` refuse with `CdcSourceError`, naming the LSN range lost.
So does a slot PostgreSQL invalidated (`wal_status = 'lost'`).

The CDC trials give the source one option, `path`: a directory whose `source.json` holds the other
options, and which is the `journal`. With a `journal` (a directory), the crash points of
`frontier_harness.spark_impl.streaming.faults` fire in `latestOffset` and `partitions` when the batch has
new changes, and every `commit(end)` is journaled (`journal.jsonl`), for the trials to observe.
Spark runs the reader in a Python process of its own and `read` in its workers: nothing is kept
between calls but the options.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import psycopg
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from frontier_harness.model.vocabulary.cdc import CdcOption, lsn_text
from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl.cdc import slot as slots
from frontier_harness.spark_impl.cdc.pgoutput import Transaction
from frontier_harness.spark_impl.cdc.postgres import connect
from frontier_harness.spark_impl.errors import CdcSourceError
from frontier_harness.spark_impl.streaming import faults

NAME = "frontier_cdc"
SCHEMA = (
    "lsn long, xid long, seq int, op string, relation string, "
    "before map<string, string>, after map<string, string>"
)
LSN = "lsn"
JOURNAL = "journal.jsonl"
INITIAL = "initial.json"  # in the journal: where the stream began (`initialOffset`)
PATH, CONFIG = "path", "source.json"
RECONNECT_S = 60.0  # how long a call waits for a restarting server
T = TypeVar("T")


class LsnRange(InputPartition):
    """The transactions ending in `(start, end]`."""

    def __init__(self, start: int, end: int):
        self.start, self.end = start, end


def rows(transactions: Sequence[Transaction], start: int, end: int) -> Iterator[tuple]:
    """The change rows of the transactions whose end LSN is in `(start, end]`.

    >>> from frontier_harness.spark_impl.cdc.pgoutput import Change
    >>> t = Transaction(7, 100, 140, (Change(0, 96, "insert", "public.t", None, {"k": "1"}),))
    >>> list(rows([t], 0, 140)), list(rows([t], 140, 200))
    ([(140, 7, 0, 'insert', 'public.t', None, {'k': '1'})], [])
    """
    for txn in transactions:
        if start < txn.end_lsn <= end:
            for c in txn.changes:
                yield (txn.end_lsn, txn.xid, c.seq, c.op, c.relation, c.before, c.after)


class CdcStreamReader(DataSourceStreamReader):
    """The stream reader over one slot (stateless: see the module docstring)."""

    def __init__(self, options: dict):
        if options.get(PATH):  # the trials': the options in a file, the directory the journal
            options = {
                **json.loads((Path(options[PATH]) / CONFIG).read_text()),
                CdcOption.JOURNAL: options[PATH],
            }
        self.dsn, self.slot = options[CdcOption.DSN], options[CdcOption.SLOT]
        self.publication = options[CdcOption.PUBLICATION]
        self.journal = options.get(CdcOption.JOURNAL)

    def _fire(self, point: str) -> None:
        if self.journal:
            faults.fire(self.journal, point)

    def _resumable(self, conn: psycopg.Connection, start: int) -> None:
        """Refuses a slot that released changes after `start` (or lost its WAL): they cannot be read."""
        confirmed = slots.required(conn, self.slot).confirmed_flush
        if confirmed > start:
            raise CdcSourceError(
                f"replication slot {self.slot!r} is ahead of the stream: its confirmed flush LSN "
                f"{lsn_text(confirmed)} is past {lsn_text(start)}, where the stream resumes; the changes in "
                f"({lsn_text(start)}, {lsn_text(confirmed)}] are gone upstream"
            )

    def _session(self, work: Callable[[psycopg.Connection], T]) -> T:
        """`work` on a new connection; run again on a new one when the server went away under it (a
        restart of PostgreSQL), until `RECONNECT_S` have passed."""
        deadline = time.monotonic() + RECONNECT_S
        while True:
            try:
                with connect(self.dsn, timeout_s=RECONNECT_S) as conn:
                    return work(conn)
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def initialOffset(self) -> dict:
        """The slot's confirmed flush LSN when the query first asked, kept in the journal (`INITIAL`): Spark
        asks again at every start until batch 0 commits, and a slot moved meanwhile must be refused from
        where the stream began, not silently read from where the slot stands now."""
        if not self.journal:
            return {LSN: self._confirmed()}
        kept = Path(self.journal) / INITIAL
        if not kept.exists():
            written = kept.with_suffix(".tmp")
            written.write_text(json.dumps({LSN: self._confirmed()}))
            os.replace(written, kept)  # a reader never sees half of it
        return {LSN: json.loads(kept.read_text())[LSN]}

    def _confirmed(self) -> int:
        return self._session(lambda conn: slots.required(conn, self.slot).confirmed_flush)

    def latestOffset(self, start: dict, limit) -> dict:
        found = self.newest(start[LSN])
        if found > start[LSN]:
            self._fire(CrashPoint.BEFORE_OFFSETS)
            return {LSN: found}
        return start

    def newest(self, start: int) -> int:
        """The end LSN of the newest committed transaction the slot holds (`start` when none is newer)."""

        def newest(conn: psycopg.Connection) -> int:
            self._resumable(conn, start)
            return max((t.end_lsn for t in self.peek(conn, None)), default=start)

        return self._session(newest)

    def peek(self, conn: psycopg.Connection, upto: int | None) -> list[Transaction]:
        return slots.peek(conn, self.slot, self.publication, upto)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if end[LSN] <= start[LSN]:
            return []
        self._fire(CrashPoint.AFTER_OFFSETS)
        return [LsnRange(start[LSN], end[LSN])]

    def read(self, partition: LsnRange) -> Iterator[tuple]:  # type: ignore[override]  # Spark passes back partitions()'s ranges
        yield from self.rows_in(partition.start, partition.end)

    def rows_in(self, start: int, end: int) -> list[tuple]:
        """The change rows of the transactions ending in `(start, end]`."""

        def found(conn: psycopg.Connection) -> list[Transaction]:
            self._resumable(conn, start)
            return self.peek(conn, end)

        return list(rows(self._session(found), start, end))

    def commit(self, end: dict) -> None:
        self._session(lambda conn: slots.advance(conn, self.slot, end[LSN]))
        if self.journal:
            with open(Path(self.journal) / JOURNAL, "a") as journal:
                journal.write(json.dumps({LSN: end[LSN], "pid": os.getpid()}) + "\n")


class CdcSource(DataSource):
    """`spark.readStream.format("frontier_cdc")` with the options `dsn`, `slot`, `publication` (and the
    trials' `journal`); a subclass names another format and reader (the planted bugs')."""

    format_name, stream_reader = NAME, CdcStreamReader

    @classmethod
    def name(cls) -> str:
        return cls.format_name

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema) -> DataSourceStreamReader:
        missing = [
            o for o in (CdcOption.DSN, CdcOption.SLOT, CdcOption.PUBLICATION) if not self.options.get(o)
        ]
        if missing and not self.options.get(PATH):
            raise CdcSourceError(f"the {NAME} source needs the options {', '.join(missing)}")
        return self.stream_reader(dict(self.options))
