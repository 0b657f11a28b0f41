"""What a stateful job's result must hold after a trial's step, by the model's frontiers, never by Spark's
streaming engine.

A trial's step is read as the model reads a micro-batch query (`read_step`): the batches the offset log
binds (their records from the reclocked collection, `committed.committed_batches`), the first batch of
each start of the query, and the watermark policy the checkpoint pinned; the model's watermarks
(`frontier_harness.model.event_time.stateful.watermarks`) follow from them alone. Under a job that filters
its records before its stateful operator, the watermark follows the records its filters pass to it and
the operator reads those they pass on, as observed (`prefix_of`). What the result must
hold (`expected_parts`) is the job's `transform` run as a batch job over the records the model keeps:

- a window aggregation: per window, the records not late for it in the committed batches; every such
  window in update mode, the windows complete by the last committed batch in append mode;
- an aggregation without a window: every committed record;
- a session-window aggregation (append mode): each session the model emitted by the last committed batch
  (`session.sessionize`), over its records, sessions of one group in frames of their own (run as a batch
  job, two sessions of a group would merge);
- a window aggregation over a deduplication (a chain): per window as above, over the records the
  deduplication passes on (`chain.passed_on`); where Spark's choice among a batch's duplicates decides what
  it passes on, one window's rows are those of one of the choices (`inputs`); a window that would count one
  group twice (the group's entry expired in between, so Spark emitted it again) is not judged: its frame,
  run as a batch job, would deduplicate it;
- a window aggregation over a window aggregation (a roll-up, append mode): per outer window complete by
  the last committed batch, the records the inner windows it rolls up kept (`rolled_up`: the inner
  aggregation's windows carried in the batch each completed, `chain.carried`), all in one frame (tumbling
  inner windows: a record is kept or late for its one window);
- a deduplication: the records the model says are emitted, each group at most once per frame (a group
  emitted again after its state expired goes to another frame); where Spark chooses among a batch's
  candidates, one of them, and where an earlier choice decides whether a record is emitted at all,
  maybe none.

Frames (sets of records transformed whole) are packed so a record late for one window of a frame is in
no frame that window is read from (`pack`). `matched` compares the rows the job read with the parts, as
multisets: rows missing, doubled and unexpected.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from frontier_harness.model.errors import UndecidedChoice
from frontier_harness.model.event_time.chain import carried
from frontier_harness.model.event_time.session import Session, sessionize
from frontier_harness.model.event_time.stateful import (
    Aggregated,
    Batch,
    Deduplicated,
    Policy,
    Record,
    Span,
    StatefulPlan,
    Watermarks,
    aggregate,
    deduplicate,
    watermarks,
)
from frontier_harness.model.vocabulary.event_time import OutputMode, StatefulOperator
from frontier_harness.model.vocabulary.streaming import StreamingLabel
from frontier_harness.properties.checks.streaming.committed import committed_batches
from frontier_harness.properties.engine.errors import UnsupportedImplementation
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Outcome

POLICY = "spark.sql.streaming.multipleWatermarkPolicy"
MOST_CHOICES = 256  # inputs a chain's choices may make (`inputs`); more is a history the suite cannot judge
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
    passed = prefix_of(history, obs, plan)
    keys = derived_of(history, obs, plan)

    def batches(reaches: int) -> tuple[Batch, ...]:  # as the watermark (0) or the operator (1) reads them
        return tuple(
            Batch(
                b,
                tuple(_record(r, keys) for r in logged.get(b, []) if not passed or passed[r][reaches]),
                b in starts,
            )
            for b in range(max(ids, default=-1) + 1)
        )

    committed = frozenset(obs[(step, StreamingLabel.COMMITS)])
    return Step(step, batches(1), committed, watermarks(batches(0), plan.delays, policy_of(obs, step)))


def _record(row: tuple, derived: Mapping[tuple, tuple]) -> Record:
    """A record as the source read it, `(key, event_time, data, partition, offset)`, with its derived keys."""
    key, event_time, data, partition, offset = row
    return Record(key, event_time, data, partition, offset, derived.get(row, ()))


def prefix_of(history: History, obs: Observation, plan: StatefulPlan) -> dict[tuple, tuple[bool, bool]]:
    """Under a job that filters before its operator (`plan.prefix`), each record -> whether its filters pass
    it to the watermark and to the operator, as observed at the final step; else nothing (every record
    reaches both).

    >>> plan = StatefulPlan("deduplication", (5_000,), None, ("key",), prefix="operator")
    >>> prefix_of(History("events", ()), {(0, "prefix"): frozenset({(("c", 1, "r0", 0, 0), True, False)})}, plan)
    {('c', 1, 'r0', 0, 0): (True, False)}
    """
    if plan.prefix is None:
        return {}
    found = at_final_step(
        history, obs, StreamingLabel.PREFIX, "the job filters before its stateful operator", "what they pass"
    )
    return {record: (watermark, operator) for record, watermark, operator in found}


def derived_of(history: History, obs: Observation, plan: StatefulPlan) -> dict[tuple, tuple]:
    """Under a job that deduplicates on keys it derives (`plan.derived`), each record that reaches the
    deduplication -> its derived keys' `(name, value)` pairs, as observed at the final step; else nothing.

    >>> plan = StatefulPlan("dropDuplicatesWithinWatermark", (5_000,), None, ("id",), derived=("id",))
    >>> derived_of(History("events", ()), {(0, "derived"): frozenset({(("c", 1, "r0", 0, 0), (("id", "c:r0"),))})}, plan)
    {('c', 1, 'r0', 0, 0): (('id', 'c:r0'),)}
    """
    if not plan.derived:
        return {}
    found = at_final_step(
        history, obs, StreamingLabel.DERIVED, "the job deduplicates on keys it derives", "those keys"
    )
    return dict(found)


def at_final_step(history: History, obs: Observation, label: str, job: str, what: str) -> Any:
    """The observation `label` at the history's final step, which a `job` like this one needs: else the suite
    cannot read the trial (`UnsupportedImplementation`)."""
    found = obs.get((len(history.actions), label))
    if found is None:
        raise UnsupportedImplementation(
            f"{job}: its trials must observe {what} for each record (`{label}` at the final step)"
        )
    return found


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
    """Rows the result must hold: those of one of `picks` (or none, when `optional`); `what` names them.
    An `unjudged` part takes whatever rows the result holds in its pick's window (the model cannot state
    them through the job's transform; `what` says why)."""

    picks: tuple[Pick, ...]
    what: str
    optional: bool = False
    unjudged: bool = False


def expected_parts(plan: StatefulPlan, trial: Step) -> list[Part]:
    """The parts of the result after `trial`'s step (see the module docstring)."""
    if plan.gap is not None:
        return _sessions(plan, trial)
    if plan.inner_window is not None:
        return _rolled_up_windows(plan, trial)
    if plan.operator == StatefulOperator.AGGREGATION:
        return _windows(plan, trial) if plan.window is not None else _everything(trial)
    return _emissions(plan, trial)


def _sessions(plan: StatefulPlan, trial: Step) -> list[Part]:
    """Each session emitted by the last committed batch, the rows of its records (a group at most once a
    frame)."""
    assert plan.gap is not None
    emitted = sessionize(plan.gap, trial.done, trial.marks, plan.keys).emitted
    frames: list[dict[tuple, Session]] = []
    for session in emitted:
        frame = next((f for f in frames if session.group not in f), None)
        if frame is None:
            frames.append(frame := {})
        frame[session.group] = session
    spans: dict[tuple[Frame, Span], list[Session]] = {}  # a pick reads every group's rows of its span
    for f in frames:
        row = tuple(sorted(record_row(r) for s in f.values() for r in s.records))
        for s in f.values():
            spans.setdefault((row, s.span), []).append(s)
    return [
        Part(
            (Pick(row, span),),
            f"session [{span.start}, {span.end}) of {', '.join(repr(s.group) for s in same)}, "
            f"emitted in batch {same[0].batch}",
        )
        for (row, span), same in spans.items()
    ]


def _everything(trial: Step) -> list[Part]:
    records = tuple(record_row(r) for b in trial.done for r in b.records)
    return [Part((Pick(records),), f"every record of batches {sorted(trial.committed)}")] if records else []


def _windows(plan: StatefulPlan, trial: Step) -> list[Part]:
    """Per window, the rows of the aggregation's input; over a deduplication whose choices differ, the
    windows a choice decides are one part, the rows of one of the choices (`_chosen`)."""
    assert plan.window is not None
    kepts = [
        _complete(plan, trial, aggregate(plan.window, batches, trial.marks).kept)
        for batches in inputs(plan, trial)
    ]
    spans = sorted({s for kept in kepts for s in kept})
    same = [s for s in spans if all(s in k and set(k[s]) == set(kepts[0][s]) for k in kepts)]
    frames = pack(plan, {s: kepts[0][s] for s in same})
    parts = [_window(plan, trial, span, frames[span], kepts[0][span]) for span in same]
    chosen = [s for s in spans if s not in same]
    return parts + (_chosen(plan, trial, chosen, kepts) if chosen else [])


def rolled_up(
    plan: StatefulPlan, batches: Sequence[Batch], marks: Watermarks
) -> tuple[Aggregated, Aggregated]:
    """A roll-up's two aggregations: the inner one over the records, the outer one over the inner windows,
    each carried in the batch it completed as a record at its `window_time` whose offset is its start.

    >>> from frontier_harness.model.event_time.stateful import Window
    >>> plan = StatefulPlan("aggregation", (0,), Window(30), inner_window=Window(10))
    >>> r = lambda t: Record("k", t, str(t), 0, t)
    >>> inner, outer = rolled_up(plan, [Batch(0, (r(5), r(15))), Batch(1, (r(40),))], Watermarks((0, 15), 40))
    >>> [(s.end, [c.offset for c in cs]) for s, cs in outer.kept.items()]
    [(30, [0])]
    """
    assert plan.inner_window is not None and plan.window is not None
    inner = aggregate(plan.inner_window, batches, marks)
    return inner, aggregate(plan.window, carried(inner, batches), marks)


def completed(plan: StatefulPlan, batches: Sequence[Batch], marks: Watermarks) -> dict[Span, int]:
    """Each window complete in `batches` (a roll-up's: its outer windows) -> the batch it was complete in."""
    assert plan.window is not None
    if plan.inner_window is not None:
        return dict(rolled_up(plan, batches, marks)[1].completed)
    return dict(aggregate(plan.window, batches, marks).completed)


def _rolled_up_windows(plan: StatefulPlan, trial: Step) -> list[Part]:
    """Per outer window the result holds, the rows of the records its inner windows kept; one frame of every
    record an inner window kept (see the module docstring)."""
    inner, outer = rolled_up(plan, trial.done, trial.marks)
    by_start = {span.start: records for span, records in inner.kept.items()}
    frame = tuple(sorted(record_row(r) for records in inner.kept.values() for r in records))
    parts = []
    for span, windows in sorted(_complete(plan, trial, outer.kept).items()):
        records = [r for w in windows for r in by_start[w.offset]]
        parts.append(Part((Pick(frame, span),), window_named(span, trial, records)))
    return parts


def _complete(plan: StatefulPlan, trial: Step, kept: Mapping[Span, tuple[Record, ...]]) -> Mapping:
    """The windows the result holds: every one in update mode, those complete by the last committed batch
    in append mode."""
    if plan.output_mode != OutputMode.APPEND:
        return kept
    last = trial.last
    return {s: rs for s, rs in kept.items() if last is not None and trial.marks.complete(s.end, last)}


def _window(plan: StatefulPlan, trial: Step, span: Span, frame: Frame, records: Sequence[Record]) -> Part:
    what = window_named(span, trial, records)
    twice = _counted_twice(plan, records)
    if twice is not None:
        return Part((Pick(frame, span),), f"{what}, not judged: {twice}", unjudged=True)
    return Part((Pick(frame, span),), what)


def _chosen(plan: StatefulPlan, trial: Step, spans: Sequence[Span], kepts: Sequence[Mapping]) -> list[Part]:
    """The windows whose records Spark's choices among duplicates decide: with tumbling windows one part
    whose picks are each choice's records of all of them, as one frame (so a job that counts a duplicate
    in two windows is caught); with sliding ones, where a frame would hold windows not complete yet, a part
    per window (each window's rows one of the choices')."""
    assert plan.window is not None
    names = ", ".join(f"[{s.start}, {s.end})" for s in spans)
    what = f"windows {names}, as Spark chooses among duplicates"
    chosen = [{s: k[s] for s in spans if s in k} for k in kepts]
    if any(_counted_twice(plan, rs) for k in chosen for rs in k.values()):
        return [
            Part(
                tuple(Pick((), s) for s in spans), f"{what}, not judged: a group counted twice", unjudged=True
            )
        ]
    if plan.window.slide == plan.window.duration:
        frames = {tuple(sorted(record_row(r) for rs in k.values() for r in rs)) for k in chosen}
        picks = tuple(Pick(f) for f in sorted(frames) if f)
        return [Part(picks, what, optional=() in frames)]
    parts = []
    for span in spans:
        options = {tuple(sorted(record_row(r) for r in k[span])) for k in chosen if span in k}
        named = f"window [{span.start}, {span.end}), as Spark chooses among duplicates"
        maybe = any(span not in k for k in chosen)
        parts.append(Part(tuple(Pick(f, span) for f in sorted(options)), named, optional=maybe))
    return parts


def inputs(plan: StatefulPlan, trial: Step) -> list[tuple[Batch, ...]]:
    """The committed batches as the aggregation reads them: as they are, or, over a deduplication, the
    records it passes on under each combination of Spark's choices (a group's candidates that differ, or
    an emission that depends on an earlier choice, which may be none).

    >>> from frontier_harness.model.event_time.stateful import Deduplication, Watermarks, Window
    >>> r = lambda t, data, off: Record("a", t, data, 0, off)
    >>> plan = StatefulPlan("aggregation", (5,), Window(10), (), "append", None,
    ...     Deduplication("dropDuplicatesWithinWatermark", ("data",)))
    >>> step = Step(1, (Batch(0, (r(3, "x", 0), r(12, "x", 1))),), frozenset({0}), Watermarks((0,), 7))
    >>> [[x.event_time for b in batches for x in b.records] for batches in inputs(plan, step)]
    [[3], [12]]
    """
    if plan.deduplication is None:
        return [trial.done]
    first = plan.deduplication
    out = deduplicate(
        first.keys,
        first.bound(plan.delays),
        trial.done,
        trial.marks,
        plan.delay,
        watermarked=bool(plan.delays),
    )
    choices = [_choices(e.candidates, e.certain) for e in out.emitted]
    count = 1
    for options in choices:
        count *= len(options)
    if count > MOST_CHOICES:
        undecided = [e for e, options in zip(out.emitted, choices) if len(options) > 1]
        raise UndecidedChoice(undecided[0].group, [c.data for c in undecided[0].candidates])
    return [_passed_on(out, trial.done, picked) for picked in itertools.product(*choices)]


def _choices(candidates: Sequence[Record], certain: bool) -> tuple[Record | None, ...]:
    """What an emission may pass on: one of its candidates that differ in event time or data, or, when its
    emission depends on an earlier choice, none."""
    distinct = tuple({(c.event_time, c.data): c for c in reversed(candidates)}.values())[::-1]
    return distinct + (() if certain else (None,))


def _passed_on(
    out: Deduplicated, batches: Sequence[Batch], picked: Sequence[Record | None]
) -> tuple[Batch, ...]:
    emitted: dict[int, list[Record]] = {}
    for emission, record in zip(out.emitted, picked):
        if record is not None:
            emitted.setdefault(emission.batch, []).append(record)
    return tuple(Batch(b.id, tuple(emitted.get(b.id, ())), b.run_start) for b in batches)


def _counted_twice(plan: StatefulPlan, records: Sequence[Record]) -> str | None:
    """Why a window's records, over a deduplication, cannot be run as one frame: a group of the
    deduplication counted twice (its entry expired before it came again), or None."""
    if plan.deduplication is None:
        return None
    groups = Counter(tuple(r.field(k) for k in plan.deduplication.keys) for r in records)
    twice = [g for g, n in groups.items() if n > 1]
    if not twice:
        return None
    return (
        f"it counts group {twice[0]!r} of the deduplication twice (emitted again once its entry expired), "
        "which the job's transform run as a batch job would deduplicate"
    )


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
    return {s: tuple(sorted(record_row(r) for r in records)) for records, spans in groups for s in spans}


def _emissions(plan: StatefulPlan, trial: Step) -> list[Part]:
    delay = plan.delays[0] if plan.delays else 0
    out = deduplicate(plan.keys, plan.bound, trial.done, trial.marks, delay, watermarked=bool(plan.delays))
    single = [e for e in out.emitted if e.certain and len(e.candidates) == 1]
    frames: list[dict[tuple, tuple]] = []  # each frame holds a group at most once
    for emission in single:
        frame = next((f for f in frames if emission.group not in f), None)
        if frame is None:
            frames.append(frame := {})
        frame[emission.group] = record_row(emission.candidates[0])
    parts = [Part((Pick(tuple(sorted(f.values()))),), "the records emitted once each") for f in frames]
    for e in out.emitted:
        if e.certain and len(e.candidates) == 1:
            continue
        picks = tuple(Pick((record_row(c),)) for c in e.candidates)
        what = f"one of {[c.data for c in e.candidates]} (batch {e.batch})" + (
            "" if e.certain else ", or none"
        )
        parts.append(Part(picks, what, optional=not e.certain))
    return parts


def record_row(record: Record) -> tuple:
    """A record as a frame holds it, as the source reads it: `(key, event_time, data, partition, offset)`."""
    return (record.key, record.event_time, record.data, record.partition, record.offset)


def frames_of(parts: Sequence[Part]) -> list[Frame]:
    """Every frame the parts read, once (an unjudged part reads none)."""
    return sorted({p.frame for part in parts if not part.unjudged for p in part.picks})


def rows_of(pick: Pick, outputs: Mapping[Frame, Rows], window_column: str | None) -> Rows:
    """The rows `pick` reads from its frame's output: all, or those whose window is its span."""
    return in_window(outputs[pick.frame], pick.span, window_column)


def in_window(rows: Rows, span: Span | None, window_column: str | None) -> Rows:
    """The rows whose window (the `window_column`) is `span`; all of them when `span` is None.

    >>> in_window(Rows({(("w", (("end", 10), ("start", 0))),): 1, (("w", (("end", 20), ("start", 10))),): 2}), Span(10, 20), "w")
    Counter({(('w', (('end', 20), ('start', 10))),): 2})
    """
    if span is None or window_column is None:
        return Rows(rows)
    want = (("end", span.end), ("start", span.start))
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
    for part in parts:
        if part.unjudged:
            for pick in part.picks:
                remaining -= in_window(remaining, pick.span, window_column)
    missing: list[tuple[Any, str]] = []
    for part in sorted(parts, key=lambda p: len(p.picks)):  # the certain parts first
        if part.unjudged:
            continue
        options = [rows_of(pick, outputs, window_column) for pick in part.picks]
        whole = next((rows for rows in options if not rows - remaining), None)
        if whole is not None:
            remaining -= whole
        elif not part.optional:
            missing += [(row, part.what) for row in sorted(options[0] - remaining, key=repr)]
            remaining -= options[0]
    return Mismatch(tuple(missing), +remaining)
