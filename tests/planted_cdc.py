"""Deliberately broken CDC sources: the cdc suite must catch each through its own search.

Spark runs a Python source in processes of its own, so a planted bug is a source class the trials are
handed: each overrides what a batch ends at (`newest`) or what it reads (`rows_in`), and keeps the crash
points the trials arm. Each factory is importable as `--impl tests.planted_cdc:NAME`, so a counterexample replays.
"""

from __future__ import annotations

from typing import Any

from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.spark_impl.cdc import slot as slots
from frontier_harness.spark_impl.cdc.source import CdcSource, CdcStreamReader
from frontier_harness.spark_impl.cdc.trial import run_trials

ROWS_PER_BATCH = 50


class EagerReader(CdcStreamReader):
    """Bug: `read` advances the slot to the batch's end as soon as it has read it, before Spark made the
    batch durable: a crash after the offsets leaves the slot past the checkpoint."""

    def rows_in(self, start: int, end: int) -> list[tuple]:
        found = super().rows_in(start, end)
        self._session(lambda conn: slots.advance(conn, self.slot, end))
        return found


class CuttingReader(CdcStreamReader):
    """Bug: a batch holds at most `ROWS_PER_BATCH` row changes, cut wherever that falls: a transaction's
    last change closes at its commit end LSN, any other just past its own LSN, so a batch cut inside a
    large transaction ends where no transaction does, and the reader keeps the changes closing in its range.

    Just past, not at: a transaction's first change can sit at the very LSN the slot starts from (nothing
    else wrote WAL between), and one closing there would fall before the stream's first batch. That is
    a second bug, and one that shows only when no other WAL record came between (not on a busy server):
    a replay on another machine would hold."""

    def _pieces(self, start: int) -> list[tuple[int, tuple]]:
        def pieces(conn: Any) -> list[tuple[int, tuple]]:
            found = []
            for t in self.peek(conn, None):
                for c in t.changes:
                    closing = t.end_lsn if c.seq == len(t.changes) - 1 else c.lsn + 1
                    if closing > start and t.end_lsn > start:
                        found.append(
                            (closing, (t.end_lsn, t.xid, c.seq, c.op, c.relation, c.before, c.after))
                        )
            return found

        return self._session(pieces)

    def newest(self, start: int) -> int:
        found = self._pieces(start)[:ROWS_PER_BATCH]
        return found[-1][0] if found else start

    def rows_in(self, start: int, end: int) -> list[tuple]:
        return [row for closing, row in self._pieces(start) if closing <= end]


class ChangeLsnReader(CdcStreamReader):
    """Bug: the offset is just past the newest change's LSN, not its transaction's commit end LSN, and a
    batch reads the changes closing in its range: a batch ends where no transaction does.

    Just past, not at, as `CuttingReader`: a change at the very LSN the slot starts from (a quiet server)
    would otherwise never be read, a second bug that a replay on a busier server would not show."""

    def _changes(self, conn: Any) -> list[tuple[int, tuple]]:
        return [
            (c.lsn + 1, (t.end_lsn, t.xid, c.seq, c.op, c.relation, c.before, c.after))
            for t in self.peek(conn, None)
            for c in t.changes
        ]

    def newest(self, start: int) -> int:
        return max((lsn for lsn, _ in self._session(self._changes) if lsn > start), default=start)

    def rows_in(self, start: int, end: int) -> list[tuple]:
        return [row for lsn, row in self._session(self._changes) if start < lsn <= end]


class EagerSource(CdcSource):
    format_name, stream_reader = "frontier_cdc_eager", EagerReader


class CuttingSource(CdcSource):
    format_name, stream_reader = "frontier_cdc_cutting", CuttingReader


class ChangeLsnSource(CdcSource):
    format_name, stream_reader = "frontier_cdc_change_lsn", ChangeLsnReader


def _trials(source: type) -> SparkImplementation:
    class Planted(SparkImplementation):
        def observe_cdc(self, domain: Any, histories: Any) -> list[dict]:
            return run_trials(histories, source=source)

    return Planted()


def slot_advanced_at_read() -> SparkImplementation:
    return _trials(EagerSource)


def batch_ends_inside_a_transaction() -> SparkImplementation:
    return _trials(CuttingSource)


def offsets_from_change_lsns() -> SparkImplementation:
    return _trials(ChangeLsnSource)
