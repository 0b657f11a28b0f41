"""The lateness a job promises, held against the rows it wrote: a record the promise covers is counted.

A job promises (`StatefulPlan.lateness`) to count every record that is less than `lateness` behind the
newest event time of the batches committed before its own (Spark's documented guarantee for a delay,
stated by the job for itself). The model says which records the query's watermark drops as late
(`aggregate(...).late`, per record and window; `deduplicate(...).late`, per record): those of them the
promise covers are its broken promises, unless the job's rows count them anyway. So, at a step:

- a window aggregation: for each window with a covered record the model drops, the job's rows for that
  window must be the job's `transform` over the window's records the model keeps plus the covered ones
  (one frame, `Promise.pick`); in append mode a late window is one that is complete;
- a roll-up (an aggregation over a window aggregation): the same per outer window complete by then, over
  the records its inner windows kept plus the covered ones late for those inner windows;
- a deduplication: each covered record the model drops, of a group the model emitted nothing of, must
  have its row in the result (or another covered record of its group, where Spark would choose).

Where the promise is within every watermark's delay it covers no record the model drops: the
property is implied by `exactly_once` and says so (`implied`).

>>> from frontier_harness.model.event_time.stateful import Window
>>> implied(StatefulPlan("aggregation", (5_000,), Window(10_000), ("key",), "update", 5_000))
'the promised lateness (5000 ms) is within the watermark delay (5000 ms): every record it covers is one the model keeps, so exactly_once checks it'
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from frontier_harness.model.event_time.stateful import (
    Batch,
    Bound,
    Record,
    Span,
    StatefulPlan,
    aggregate,
    deduplicate,
)
from frontier_harness.model.vocabulary.event_time import StatefulOperator
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import (
    Pick,
    Step,
    record_row,
    rolled_up,
)


@attrs.frozen
class Promise:
    """What the promise requires of the result after a step: the rows of `picks` (one of them), for the
    covered records the model drops (`records`, each with its batch) in `span` (None: a deduplication)."""

    span: Span | None
    records: tuple[tuple[Record, int], ...]
    picks: tuple[Pick, ...]


def implied(plan: StatefulPlan) -> str | None:
    """Why the promise needs no check of its own for `plan` (it covers no record the model drops), or None."""
    if plan.lateness is None:
        return "the job promises no lateness (set its `lateness`)"
    if not plan.delays:
        return "the job has no watermark: no record is dropped as late"
    if plan.gap is not None:
        return "a promise over session windows is not modeled yet (exactly_once judges the rows)"
    if plan.deduplication is not None:
        return "a promise over an aggregation over a deduplication is not modeled yet (exactly_once judges the rows)"
    if plan.operator == StatefulOperator.AGGREGATION and plan.bound is Bound.NONE:
        return "its aggregation's key holds no event time: no record is dropped as late"
    if plan.lateness <= min(plan.delays):
        return (
            f"the promised lateness ({plan.lateness} ms) is within the watermark delay ({min(plan.delays)} ms): "
            "every record it covers is one the model keeps, so exactly_once checks it"
        )
    return None


def covered(plan: StatefulPlan, batches: Sequence[Batch], record: Record, batch: int) -> int | None:
    """The newest event time before `batch` when the promise covers `record` there (None when it does not;
    the first batch's records are behind nothing, and covered).

    >>> plan = StatefulPlan("aggregation", (1_000,), None, (), "update", 10_000)
    >>> r = lambda t: Record("k", t, str(t), 0, 0)
    >>> batches = [Batch(0, (r(35_000),)), Batch(1, (r(29_000), r(20_000)))]
    >>> covered(plan, batches, r(29_000), 1), covered(plan, batches, r(20_000), 1)
    (35000, None)
    """
    assert plan.lateness is not None
    before = [r.event_time for b in batches if b.id < batch for r in b.records]
    newest = max(before, default=None)
    if newest is None:
        return record.event_time
    return newest if record.event_time > newest - plan.lateness else None


def promises(plan: StatefulPlan, trial: Step) -> list[Promise]:
    """What the promise requires after `trial`'s step beyond what the model keeps (see the module)."""
    done = trial.done
    batch_of = {r: b.id for b in done for r in b.records}
    if plan.inner_window is not None:
        return _rolled_up(plan, trial, batch_of)
    if plan.window is not None:
        agg = aggregate(plan.window, done, trial.marks)
        late: dict[Span, list[tuple[Record, int]]] = {}
        for record, span in agg.late:
            batch = batch_of[record]
            if covered(plan, done, record, batch) is not None:
                late.setdefault(span, []).append((record, batch))
        return [
            Promise(
                span,
                tuple(records),
                (Pick(_frame([*agg.kept.get(span, ()), *(r for r, _ in records)]), span),),
            )
            for span, records in sorted(late.items())
        ]
    delay = plan.delays[0]
    out = deduplicate(plan.keys, plan.bound, done, trial.marks, delay, watermarked=True)
    emitted = {e.group for e in out.emitted}
    groups: dict[tuple, list[tuple[Record, int]]] = {}
    for record in out.late:
        batch = batch_of[record]
        group = tuple(record.field(k) for k in plan.keys)
        if group not in emitted and covered(plan, done, record, batch) is not None:
            groups.setdefault(group, []).append((record, batch))
    return [
        Promise(None, tuple(records), tuple(Pick(_frame([r])) for r, _ in records))
        for _, records in sorted(groups.items())
    ]


def _rolled_up(plan: StatefulPlan, trial: Step, batch_of: dict[Record, int]) -> list[Promise]:
    """Under a roll-up, for each outer window complete by the last committed batch that rolls up an inner
    window a covered record was late for: the transform over the records its inner windows kept and those
    covered ones (one frame)."""
    inner, _ = rolled_up(plan, trial.done, trial.marks)
    last, window = trial.last, plan.window
    assert window is not None
    if last is None:
        return []

    def outer(span: Span) -> list[Span]:  # the complete outer windows holding an inner window's window_time
        return [w for w in window.containing(span.end - 1) if trial.marks.complete(w.end, last)]

    late: dict[Span, list[tuple[Record, int]]] = {}
    for record, span in inner.late:
        batch = batch_of[record]
        if covered(plan, trial.done, record, batch) is not None:
            for w in outer(span):
                late.setdefault(w, []).append((record, batch))
    kept: dict[Span, list[Record]] = {}
    for span, records in inner.kept.items():
        for w in outer(span):
            kept.setdefault(w, []).extend(records)
    return [
        Promise(w, tuple(records), (Pick(_frame([*kept.get(w, ()), *(r for r, _ in records)]), w),))
        for w, records in sorted(late.items())
    ]


def _frame(records: Sequence[Record]) -> tuple:
    return tuple(sorted(record_row(r) for r in records))
