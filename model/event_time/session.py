"""Session windows in Spark's micro-batches: gap-based, merging, late by their own end, emitted at their end.

Spark 4.3's `session_window(event_time, gap)` aggregation (`SessionWindowStateStoreRestoreExec`,
`MergingSessionsIterator`, `SessionWindowStateStoreSaveExec`; each rule pinned against a real query by
`tests/test_spark_stateful_operators.py`):

- **A record opens the session `[t, t + gap)`.** Sessions of one group (the grouping keys besides the
  session) merge when the later one starts at or before the earlier one's end (`MergingSessionsIterator`:
  `start <= end`): two records exactly `gap` apart share a session, `gap + 1 ms` apart do not; a record
  between two sessions can bridge them. A merged session spans its records' first time to the last plus gap.
- **Late by its own session's end.** The restore step drops an input row when its session's end is at or
  below L: a record is late when `t + gap <= L`, so a record up to `gap` behind the watermark still counts.
- **Emitted and evicted at its end (append mode only).** At the end of each batch every session whose end is
  at or below E is emitted, once, and dropped; Spark refuses update mode for session windows. A record that
  is not late can still fall within the gap of a session already emitted: it opens a new session rather than
  extending the emitted one (a batch query over the same records would have made one session).
- **State bound:** a session's end (it grows when the session merges).

>>> r = lambda t, data: Record("b", t, data, 0, 0)
>>> batches = [Batch(0, (r(100_000, "x"), r(110_000, "y"))), Batch(1, ()), Batch(2, ())]
>>> out = sessionize(10_000, batches, Watermarks((0, 98_000, 120_000), 120_000))
>>> [(s.span.start, s.span.end, [x.data for x in s.records], s.batch) for s in out.emitted]
[(100000, 120000, ['x', 'y'], 2)]
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from frontier_harness.model.event_time.stateful import EVENT_TIME, Batch, Record, Span, Watermarks


@attrs.frozen
class Session:
    """One session of `group`: its span, its records, and the batch it was emitted in (None: still open)."""

    group: tuple
    span: Span
    records: tuple[Record, ...]
    batch: int | None = None

    def touches(self, other: Session) -> bool:
        """Whether two sessions of a group merge: each starts at or before the other's end.

        >>> s = lambda a, b: Session((), Span(a, b), ())
        >>> s(0, 10).touches(s(10, 20)), s(0, 10).touches(s(11, 21))
        (True, False)
        """
        return self.span.start <= other.span.end and other.span.start <= self.span.end

    def merge(self, other: Session) -> Session:
        """The session spanning both."""
        span = Span(min(self.span.start, other.span.start), max(self.span.end, other.span.end))
        return Session(self.group, span, self.records + other.records)


@attrs.frozen
class Sessions:
    """What a session-window aggregation emits (`emitted`, in order), the records it dropped as late, and the
    sessions still open after the last batch (its state)."""

    emitted: tuple[Session, ...]
    late: tuple[Record, ...]
    open: tuple[Session, ...]


def sessionize(
    gap: int, batches: Sequence[Batch], marks: Watermarks, keys: Sequence[str] = ("key",)
) -> Sessions:
    """The session windows of gap `gap` (ms) per group of `keys` over `batches` (ids in order from 0), in
    append mode, under the operator's watermarks."""
    open_: dict[tuple, list[Session]] = {}
    emitted: list[Session] = []
    late: list[Record] = []
    for batch in batches:
        for record in batch.records:
            if EVENT_TIME.le(record.event_time + gap, marks.late(batch.id)):
                late.append(record)
                continue
            group = tuple(record.field(k) for k in keys)
            session = Session(group, Span(record.event_time, record.event_time + gap), (record,))
            open_[group] = _merged(open_.get(group, []), session)
        for group, sessions in open_.items():
            done = [s for s in sessions if EVENT_TIME.le(s.span.end, marks.eviction[batch.id])]
            emitted.extend(attrs.evolve(s, batch=batch.id) for s in sorted(done, key=lambda s: s.span))
            open_[group] = [s for s in sessions if s not in done]
    still = tuple(s for sessions in open_.values() for s in sessions)
    return Sessions(tuple(emitted), tuple(late), still)


def _merged(sessions: list[Session], session: Session) -> list[Session]:
    """`sessions` (none touching another) with `session` added: merged with each it touches, again and again
    as it grows."""
    touching = [s for s in sessions if s.touches(session)]
    if not touching:
        return [*sessions, session]
    for s in touching:
        session = s.merge(session)
    return _merged([s for s in sessions if s not in touching], session)
