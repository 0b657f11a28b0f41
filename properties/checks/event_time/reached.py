"""The hard cases a stateful trial reached, read from what it observed, never from the history it meant to run.

The crashes and restarts are the streaming suite's (`streaming.reached`: the crash Spark failed with, the
kill seen, the re-run batch committed). The event-time cases are read from the offset log at the trial's
last step that left the query up: the records each committed batch bound (reclocked through it, as the
oracle reads them: `stateful_rows.read_step`) and the watermarks Spark journaled for it (`batchWatermarkMs`
of `offsets/N`, and `nextBatchWatermarkMs` of `commits/N`):

- a record late for a window it falls in (`window.end <= L(N)`, or its event time for a deduplication),
  exactly at the watermark, late for one window and counted in another;
- a redelivered record (a second record with the key, event time and data of one before it);
- a partition idle while the watermark moves (a batch that moved it held no record of a partition that
  had some before);
- a window complete (some committed batch's E reached its end);
- a record within the promised lateness, beyond the delay;
- a batch that emitted a window (the first whose E reached its end) re-run after `after_sink`;
- the state read after every committed batch (`state`, at the final step);
- a batch whose id has two digits committed and the job's rows read after it (a `read` that orders its
  batches' directories as text puts `batch_id=9` after `batch_id=10`);
- under a deduplication within the watermark (alone or below an aggregation): a duplicate of a group the
  deduplication emitted in an earlier batch, its event time later than the emitted one's by at most the
  delay, not late, and dropped (`deduplicate` over the journaled watermarks); and an entry whose bound
  (the emitted event time plus the delay) a committed batch's E reached exactly (it expired at its bound);
- under a deduplication on keys the job derives that merge keys (`plan.merged_keys`): a record dropped as the
  duplicate of a group the deduplication emitted in an earlier batch from a record of another key (their
  derived keys observed one group's, `Record.derived`), not late;
- under session windows: two records exactly the gap apart in one session (nothing between them), and a
  record behind the watermark it was filtered with by less than the gap (its session not late: counted); a
  record exactly at the watermark is one whose session ends there, and a session complete is one emitted;
- under a roll-up (an aggregation over a window aggregation): an outer window complete in the batch that
  emitted an inner window of it (the next operator reads the row under its own watermarks, SPARK-40925), and
  one that rolls up inner windows emitted in different batches (its state carried across them);
- under a job that filters before its operator (`plan.prefix`, what the filters passed observed at the
  final step): a record of a committed batch the filters dropped; under a filter before the watermark, one
  dropped there that is newer than every record the watermark saw before it (had it passed, the watermark
  would have moved).

>>> from frontier_harness.model.event_time.stateful import Window
>>> marks = journaled_marks({(3, "offset_metadata"): {(0, 0, 0, ()), (1, 25_000, 0, ())}}, 3, 2)
>>> marks.eviction, marks.late(1)
((0, 25000), 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.event_time.session import sessionize
from frontier_harness.model.event_time.stateful import (
    Batch,
    Bound,
    Deduplication,
    Span,
    StatefulPlan,
    Watermarks,
    deduplicate,
)
from frontier_harness.model.vocabulary.streaming import StreamingLabel
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import (
    completed,
    prefix_of,
    read_step,
    rolled_up,
)
from frontier_harness.properties.checks.event_time.strategies.stateful import is_late
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.checks.streaming.committed import (
    committed_batches,
    rerun_after_sink,
    up_steps,
)
from frontier_harness.properties.checks.streaming.strategies.streaming import TWO_DIGITS
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Outcome

LATE = "a record late for a window it falls in"
AT_WATERMARK = "a record exactly at the watermark"
LATE_AND_KEPT = "a record late for one window, counted in another"
REDELIVERY = "a redelivered record"
IDLE = "a partition idle while the watermark moves"
COMPLETE = "a window complete (emitted, evicted)"
PROMISE = "a record within the promised lateness, beyond the delay"
REEMIT = "a batch that emitted a window re-run after after_sink"
STATE_READ = "the state read after every committed batch"
DUPLICATE = "a duplicate within the delay of its group's first, dropped"
EXPIRY = "a deduplication entry expired at its bound (first event time plus the delay)"
SESSION_GAP = "two records exactly the gap apart in one session"
BEHIND = "a record behind the watermark, counted in its session (within the gap)"
FILTERED = "a record the job's filters dropped before its operator"
FILTERED_AHEAD = "a record filtered before the watermark, newer than every record it saw"
MERGED = "a duplicate by the job's derived key, of a record of another key, dropped"
ROLLED_UP_AT_ONCE = "an outer window complete in the batch that emitted an inner window of it"
ROLLED_UP_ACROSS = "an outer window rolling up inner windows emitted in different batches"


def journaled_marks(obs: Observation, step: int, batches: int) -> Watermarks:
    """E(N) of each of the first `batches` batches as Spark journaled them at `step` (0 where none is),
    and the watermark the newest commit hands on."""
    offsets = {b: w for b, w, *_ in obs.get((step, StreamingLabel.OFFSET_METADATA), ())}
    handed = dict(obs.get((step, StreamingLabel.COMMIT_METADATA), ()))
    eviction = tuple(offsets.get(b, 0) for b in range(batches))
    last = max(handed, default=None)
    return Watermarks(eviction, handed[last] if last is not None else (eviction[-1] if eviction else 0))


def reached(plan: StatefulPlan, history: History, obs: Observation, crashes: Sequence[str]) -> list[str]:
    """The hard cases the trial's observation shows (see the module): the streaming suite's among
    `crashes`, and the event-time cases of its committed batches."""
    found = {e for e in streaming.reached(history, obs) if e in (*crashes, TWO_DIGITS)}
    if (len(history.actions), StreamingLabel.STATE) in obs:
        found.add(STATE_READ)
    up = up_steps(obs)
    if not up:
        return sorted(found)
    trial = read_step(history, obs, up[-1], plan)
    if isinstance(trial, Outcome):  # the trial failed there: its property says so
        return sorted(found)
    marks = journaled_marks(obs, trial.step, len(trial.batches))
    done = [b for b in trial.batches if b.id in trial.committed]
    found |= _record_cases(plan, done, marks)
    found |= _idle(done, marks, obs, trial.step)
    if plan.within_watermark and plan.delays:
        found |= _deduplication_cases(plan, done, marks)
    if plan.merged_keys:
        found |= _merged_cases(plan, done, marks)
    if plan.gap is not None:
        found |= _session_cases(plan, done, marks, obs)
    if plan.prefix is not None:
        found |= _filtered(plan, history, obs, trial.step)
    if plan.inner_window is not None:
        found |= _rolled_up_cases(plan, done, marks)
    if plan.window is not None:
        done_in = completed(plan, done, marks)
        found |= {COMPLETE} if any(marks.eviction[b] > 0 for b in done_in.values()) else set()
        if _reemitted(obs, set(done_in.values())):
            found.add(REEMIT)
    return sorted(found)


def _rolled_up_cases(plan: StatefulPlan, done: Sequence[Batch], marks: Watermarks) -> set[str]:
    """Under a roll-up: an outer window complete in the batch that also emitted an inner window it rolls up,
    and one that rolls up inner windows emitted in different batches."""
    inner, outer = rolled_up(plan, done, marks)
    found: set[str] = set()
    for span, windows in outer.kept.items():
        emitted = {inner.completed[Span(w.offset, w.event_time + 1)] for w in windows}
        found |= {ROLLED_UP_AT_ONCE} if outer.completed.get(span) in emitted else set()
        found |= {ROLLED_UP_ACROSS} if len(emitted) > 1 else set()
    return found


def _record_cases(plan: StatefulPlan, done: Sequence[Batch], marks: Watermarks) -> set[str]:
    found: set[str] = set()
    newest: int | None = None
    seen: set[tuple] = set()
    for batch in done:
        mark = marks.late(batch.id)
        for r in batch.records:
            late = is_late(plan, r.event_time, mark)
            found |= {LATE} if any(late) else set()
            found |= {LATE_AND_KEPT} if any(late) and not all(late) else set()
            at = (
                [s.end == mark for s in plan.record_window.containing(r.event_time)]
                if plan.record_window
                else [r.event_time + (plan.gap or 0) == mark]
            )
            found |= {AT_WATERMARK} if plan.delays and mark > 0 and any(at) else set()
            if newest is not None and plan.lateness and plan.delays:
                found |= {PROMISE} if newest - plan.lateness < r.event_time <= newest - plan.delay else set()
            found |= {REDELIVERY} if (r.key, r.event_time, r.data) in seen else set()
            seen.add((r.key, r.event_time, r.data))
        newest = max(
            [r.event_time for r in batch.records] + ([newest] if newest is not None else []), default=None
        )
    return found


def _session_cases(
    plan: StatefulPlan, done: Sequence[Batch], marks: Watermarks, obs: Observation
) -> set[str]:
    """Two records the gap apart in one session, a record behind the watermark counted, a session emitted,
    and a batch that emitted one run again after `after_sink`."""
    assert plan.gap is not None
    out = sessionize(plan.gap, done, marks, plan.keys)
    found: set[str] = set()
    for session in (*out.emitted, *out.open):
        times = sorted(r.event_time for r in session.records)
        found |= {SESSION_GAP} if any(b - a == plan.gap for a, b in zip(times, times[1:])) else set()
    for batch in done:
        mark = marks.late(batch.id)
        found |= (
            {BEHIND} if any(r.event_time <= mark < r.event_time + plan.gap for r in batch.records) else set()
        )
    emitting = {s.batch for s in out.emitted if s.batch is not None}
    found |= {COMPLETE} if any(marks.eviction[b] > 0 for b in emitting) else set()
    return found | ({REEMIT} if _reemitted(obs, emitting) else set())


def _deduplication_cases(plan: StatefulPlan, done: Sequence[Batch], marks: Watermarks) -> set[str]:
    """A duplicate within the delay dropped, and an entry expired at its bound, in the committed batches."""
    keys = plan.deduplicated_on or ()
    out = deduplicate(keys, Bound.FIRST_PLUS_DELAY, done, marks, plan.delay)
    emitted: dict[int, dict[tuple, Any]] = {}  # batch -> group -> the record it emitted (None: a choice)
    for e in out.emitted:
        emitted.setdefault(e.batch, {})[e.group] = e.candidates[0] if len(e.candidates) == 1 else None
    latest: dict[tuple, Any] = {}  # group -> the record it emitted last, in a batch before
    found: set[str] = set()
    for batch in done:
        for r in batch.records:
            group, kept = tuple(r.field(k) for k in keys), latest.get(tuple(r.field(k) for k in keys))
            dropped = group not in emitted.get(batch.id, {}) and r.event_time > marks.late(batch.id)
            if dropped and kept is not None and 0 < r.event_time - kept.event_time <= plan.delay:
                found.add(DUPLICATE)
        latest.update(emitted.get(batch.id, {}))
    bounds = {c.event_time + plan.delay for e in out.emitted if e.certain for c in e.candidates[:1]}
    found |= {EXPIRY} if bounds & {marks.eviction[b.id] for b in done} else set()
    return found


def _merged_cases(plan: StatefulPlan, done: Sequence[Batch], marks: Watermarks) -> set[str]:
    """A record dropped, not late, as the duplicate of a group emitted in an earlier batch from a record of
    another key (the deduplication's groups by the keys the job derived).

    >>> from frontier_harness.model.event_time.stateful import Record
    >>> plan = StatefulPlan("dropDuplicatesWithinWatermark", (5_000,), None, ("t",), derived=("t",), merged_keys=(("b", "c"),))
    >>> r = lambda key, t, data, tenant: Record(key, t, data, 0, t, (("t", tenant),))
    >>> marks = Watermarks((0, 5_000), 5_000)
    >>> _merged_cases(plan, [Batch(0, (r("b", 10_000, "r0", "b"),)), Batch(1, (r("c", 12_000, "r1", "b"),))], marks)
    {"a duplicate by the job's derived key, of a record of another key, dropped"}
    >>> _merged_cases(plan, [Batch(0, (r("b", 10_000, "r0", "b"),)), Batch(1, (r("c", 12_000, "r1", "c"),))], marks)
    set()
    """
    first = plan.deduplication or Deduplication(plan.operator, plan.keys)
    out = deduplicate(first.keys, first.bound(plan.delays), done, marks, plan.delay, bool(plan.delays))
    late = set(out.late)
    emitted: dict[int, set[tuple]] = {}
    for e in out.emitted:
        emitted.setdefault(e.batch, set()).add(e.group)
    keys: dict[tuple, set[str]] = {}  # group -> the keys of the records it emitted, in the batches before
    for batch in done:
        for r in batch.records:
            group = tuple(r.field(k) for k in first.keys)
            if (
                r not in late
                and group not in emitted.get(batch.id, set())
                and keys.get(group, set()) - {r.key}
            ):
                return {MERGED}
        for e in out.emitted:
            if e.batch == batch.id:
                keys.setdefault(e.group, set()).update(c.key for c in e.candidates)
    return set()


def _filtered(plan: StatefulPlan, history: History, obs: Observation, step: int) -> set[str]:
    """A record of a batch committed at `step` the job's filters dropped, and one dropped under the
    watermark newer than every record the watermark saw in its batch and before (`prefix_of`: observed)."""
    logged = committed_batches(history, obs, step)
    if isinstance(logged, Outcome):
        return set()
    passed = prefix_of(history, obs, plan)
    found: set[str] = set()
    newest: int | None = None
    for batch in sorted(logged):
        records = [(r, *passed[tuple(r)]) for r in logged[batch]]
        newest = max(
            [r[1] for r, seen, _ in records if seen] + ([newest] if newest is not None else []), default=None
        )
        found |= {FILTERED} if any(not kept for *_, kept in records) else set()
        ahead = any(not seen and (newest is None or r[1] > newest) for r, seen, _ in records)
        found |= {FILTERED_AHEAD} if ahead else set()
    return found


def _idle(done: Sequence[Batch], marks: Watermarks, obs: Observation, step: int) -> set[str]:
    """A batch with records after which the watermark rose held none of a partition that had some before."""
    handed = dict(obs.get((step, StreamingLabel.COMMIT_METADATA), ()))
    fed: set[int] = set()
    for batch in done:
        if not batch.records:
            continue
        now = {r.partition for r in batch.records}
        after = (
            marks.eviction[batch.id + 1] if batch.id + 1 < len(marks.eviction) else handed.get(batch.id, 0)
        )
        if after > marks.eviction[batch.id] and fed - now:
            return {IDLE}
        fed |= now
    return set()


def _reemitted(obs: Observation, emitting: set[int]) -> bool:
    """A batch that emitted a window, logged and uncommitted when `after_sink` crashed, committed later."""
    return bool(rerun_after_sink(obs) & emitting)
