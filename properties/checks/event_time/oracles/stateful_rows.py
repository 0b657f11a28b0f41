"""What a stateful job's result must hold after a trial's step, by the model's frontiers, never by Spark's
streaming engine.

A trial's step is read as the model reads a micro-batch query (`read_step`): the batches the offset log
binds (their records from the reclocked collection, `committed.committed_batches`), the first batch of
each start of the query, and the watermark policy the checkpoint pinned; the model's watermarks
(`frontier_harness.model.event_time.stateful.watermarks`) follow from them alone. What the result must
hold (`expected_parts`) is the job's `transform` run as a batch job over the records the model keeps:

- a window aggregation: per window, the records not late for it in the committed batches; every such
  window in update mode, the windows complete by the last committed batch in append mode;
- an aggregation without a window: every committed record;
- a deduplication: the records the model says are emitted, each group at most once per frame (a group
  emitted again after its state expired goes to another frame); where Spark chooses among a batch's
  candidates, one of them, and where an earlier choice decides whether a record is emitted at all,
  maybe none.

Frames (sets of records transformed whole) are packed so a record late for one window of a frame is in
no frame that window is read from (`pack`). `matched` compares the rows the job read with the parts, as
multisets: rows missing, doubled and unexpected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from frontier_harness.model.event_time.stateful import (
    Batch,
    Policy,
    Record,
    Span,
    StatefulPlan,
    Watermarks,
    aggregate,
    deduplicate,
    watermarks,
)
from frontier_harness.model.vocabulary.ingestion import OutputMode, StatefulOperator, StreamingLabel
from frontier_harness.properties.checks.streaming.committed import committed_batches
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Outcome

POLICY = "spark.sql.streaming.multipleWatermarkPolicy"
Frame = tuple[tuple, ...]  # records as the source reads them: (key, event_time, data, partition, offset)
Rows = Counter  # row -> count; a row is ((column, value), ...) sorted by column


@attrs.frozen
class Step:
    """One step of a trial as the model reads it: every batch logged (in id order), the committed ones,
    and the model's watermarks."""

    step: int
    batches: tuple[Batch, ...]
    committed: frozenset[int]
    marks: Watermarks

    @property
    def done(self) -> tuple[Batch, ...]:
        """The committed batches (every batch but an uncommitted last one)."""
        return tuple(b for b in self.batches if b.id in self.committed)

    @property
    def last(self) -> int | None:
        """The newest committed batch."""
        return max(self.committed, default=None)


def read_step(history: History, obs: Observation, step: int, plan: StatefulPlan) -> Step | Outcome:
    """The trial at `step` as the model reads it, or the failing outcome `committed_batches` gives."""
    logged = committed_batches(history, obs, step, uncommitted=True)
    if isinstance(logged, Outcome):
        return logged
    ids = {b for b, *_ in obs[(step, StreamingLabel.OFFSET_METADATA)]}
    starts = {b for (b,) in obs.get((step, StreamingLabel.RUNS), ())}
    batches = tuple(
        Batch(b, tuple(Record(*r) for r in logged.get(b, [])), b in starts)
        for b in range(max(ids, default=-1) + 1)
    )
    committed = frozenset(obs[(step, StreamingLabel.COMMITS)])
    return Step(step, batches, committed, watermarks(batches, plan.delays, policy_of(obs, step)))


def policy_of(obs: Observation, step: int) -> Policy:
    """The watermark policy the checkpoint's first batch pinned (Spark's default, `min`, if none)."""
    rows = sorted(obs.get((step, StreamingLabel.OFFSET_METADATA), ()))
    conf = dict(rows[0][3]) if rows else {}
    return Policy(conf.get(POLICY, Policy.MIN))


def journaled(obs: Observation, trial: Step) -> str | None:
    """Where the watermark Spark journaled in `offsets/N` differs from the model's E(N), or None."""
    for batch, watermark, *_ in sorted(obs[(trial.step, StreamingLabel.OFFSET_METADATA)]):
        model = trial.marks.eviction[batch]
        if watermark != model:
            return (
                f"offsets/{batch} journals batchWatermarkMs {watermark}, the model's E({batch}) is {model} "
                f"(the newest event time of the batches before it, minus the delay, never going back)"
            )
    return None


@attrs.frozen
class Pick:
    """Rows of one frame's transform: all of them (`span` None) or those of one window."""

    frame: Frame
    span: Span | None = None


@attrs.frozen
class Part:
    """Rows the result must hold: those of one of `picks` (or none, when `optional`); `what` names them."""

    picks: tuple[Pick, ...]
    what: str
    optional: bool = False


def expected_parts(plan: StatefulPlan, trial: Step) -> list[Part]:
    """The parts of the result after `trial`'s step (see the module docstring)."""
    if plan.operator == StatefulOperator.AGGREGATION:
        return _windows(plan, trial) if plan.window is not None else _everything(trial)
    return _emissions(plan, trial)


def _everything(trial: Step) -> list[Part]:
    records = tuple(_row(r) for b in trial.done for r in b.records)
    return [Part((Pick(records),), f"every record of batches {sorted(trial.committed)}")] if records else []


def _windows(plan: StatefulPlan, trial: Step) -> list[Part]:
    assert plan.window is not None
    kept = aggregate(plan.window, trial.done, trial.marks).kept
    if plan.output_mode == OutputMode.APPEND:
        last = trial.last
        kept = {s: rs for s, rs in kept.items() if last is not None and trial.marks.complete(s.end, last)}
    frames = pack(plan, kept)
    return [Part((Pick(frames[span], span),), window_named(span, trial, kept[span])) for span in sorted(kept)]


def window_named(span: Span, trial: Step, records: Sequence[Record]) -> str:
    """A window as a failure names it: its bounds and the committed batches whose records it counts.

    >>> window_named(Span(0, 10), Step(3, (Batch(0, (Record("k", 5, "d", 0, 0),)),), frozenset({0}), None), [])
    'window [0, 10), counting batches []'
    """
    batches = sorted({b.id for b in trial.done for r in b.records if r in records})
    return f"window [{span.start}, {span.end}), counting batches {batches}"


def pack(plan: StatefulPlan, kept: Mapping[Span, Sequence[Record]]) -> dict[Span, Frame]:
    """Each window's frame: windows share one while every record of it that falls in one of them is kept
    for that window (a record late for a window never reaches that window's rows).

    >>> from frontier_harness.model.event_time.stateful import Window
    >>> r = lambda t: Record("k", t, str(t), 0, t)
    >>> plan = StatefulPlan("aggregation", (0,), Window(10, 5))
    >>> frames = pack(plan, {Span(0, 10): [r(7)], Span(5, 15): [r(7), r(12)], Span(10, 20): [r(12)]})
    >>> len(set(frames.values()))
    1
    >>> len(set(pack(plan, {Span(5, 15): [r(7)], Span(0, 10): []}).values()))  # r(7) late for [0, 10)
    2
    """
    assert plan.window is not None
    window = plan.window
    groups: list[tuple[set[Record], set[Span]]] = []
    for span in sorted(kept):
        own = set(kept[span])
        for records, spans in groups:
            union, members = records | own, spans | {span}
            if all(
                {r for r in union if s in window.containing(r.event_time)} == set(kept[s]) for s in members
            ):
                records |= own
                spans.add(span)
                break
        else:
            groups.append((own, {span}))
    return {s: tuple(sorted(_row(r) for r in records)) for records, spans in groups for s in spans}


def _emissions(plan: StatefulPlan, trial: Step) -> list[Part]:
    delay = plan.delays[0] if plan.delays else 0
    out = deduplicate(plan.keys, plan.bound, trial.done, trial.marks, delay, watermarked=bool(plan.delays))
    single = [e for e in out.emitted if e.certain and len(e.candidates) == 1]
    frames: list[dict[tuple, tuple]] = []  # each frame holds a group at most once
    for emission in single:
        frame = next((f for f in frames if emission.group not in f), None)
        if frame is None:
            frames.append(frame := {})
        frame[emission.group] = _row(emission.candidates[0])
    parts = [Part((Pick(tuple(sorted(f.values()))),), "the records emitted once each") for f in frames]
    for e in out.emitted:
        if e.certain and len(e.candidates) == 1:
            continue
        picks = tuple(Pick((_row(c),)) for c in e.candidates)
        what = f"one of {[c.data for c in e.candidates]} (batch {e.batch})" + (
            "" if e.certain else ", or none"
        )
        parts.append(Part(picks, what, optional=not e.certain))
    return parts


def _row(record: Record) -> tuple:
    return (record.key, record.event_time, record.data, record.partition, record.offset)


def frames_of(parts: Sequence[Part]) -> list[Frame]:
    """Every frame the parts read, once."""
    return sorted({p.frame for part in parts for p in part.picks})


def rows_of(pick: Pick, outputs: Mapping[Frame, Rows], window_column: str | None) -> Rows:
    """The rows `pick` reads from its frame's output: all, or those whose window is its span."""
    rows = outputs[pick.frame]
    if pick.span is None or window_column is None:
        return Rows(rows)
    want = (("end", pick.span.end), ("start", pick.span.start))
    return Rows({row: n for row, n in rows.items() if dict(row).get(window_column) == want})


@attrs.frozen
class Mismatch:
    """Rows the result lacks (`missing`, with the part they belong to) and rows it has beyond the parts."""

    missing: tuple[tuple[Any, str], ...]
    extra: Rows

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra


def matched(
    actual: Rows, parts: Sequence[Part], outputs: Mapping[Frame, Rows], window_column: str | None
) -> Mismatch:
    """Each part's rows taken from the result (one pick of a part with several, the first that is wholly
    there); what no part takes is extra."""
    remaining = Counter(actual)
    missing: list[tuple[Any, str]] = []
    for part in sorted(parts, key=lambda p: len(p.picks)):  # the certain parts first
        options = [rows_of(pick, outputs, window_column) for pick in part.picks]
        whole = next((rows for rows in options if not rows - remaining), None)
        if whole is not None:
            remaining -= whole
        elif not part.optional:
            missing += [(row, part.what) for row in sorted(options[0] - remaining, key=repr)]
            remaining -= options[0]
    return Mismatch(tuple(missing), +remaining)
