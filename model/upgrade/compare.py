"""The static half of an upgrade check: what Spark keys the old job's checkpoint on, against what the new job
plans, every difference judged (`sources`, `state`, `output`).

`compare(old, new)` takes two `Recorded` dicts (`model.vocabulary.event_time`): the new job's plan, and
the old job's plan, its checkpoint, or both `merged` (the plan says how each field is computed, the
checkpoint what Spark wrote: its state schemas, the files its sources read, its settings, the groups its
state holds). It returns a `Comparison`: every difference with its verdict, what was compared (counts),
and what the old side did not record. Inputs that cannot be judged raise `CannotJudge`.

>>> plan = {"origin": "plan", "sources": [{"kind": "rate", "options": {}}], "operators": [],
...         "watermarks": [], "conf": {}, "output": [], "output_rows": []}
>>> compare(plan, plan).outcome().value
'safe'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.upgrade.difference import Comparison, Difference
from frontier_harness.model.upgrade.output import (
    NULLABLE_SETTING,
    mode_differences,
    output_differences,
    restored,
    setting_differences,
)
from frontier_harness.model.upgrade.sources import source_differences
from frontier_harness.model.upgrade.state import delay_differences, operator_differences
from frontier_harness.model.vocabulary.event_time import (
    FieldKey,
    OperatorKey,
    Origin,
    Recorded,
    SourceKey,
    WatermarkKey,
)
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

Metadata = Mapping[str, Any]
SHOWN_GROUPS = 4
# Differences that explain a change of the output columns too: the output rule then says nothing more.
EXPLAINING = (Area.OPERATORS, Area.STATE, Area.KEY, Area.VALUE, Area.WINDOW, Area.AGGREGATES)


def compare(old: Metadata, new: Metadata) -> Comparison:
    """Every difference between the old job (`old`: a plan, a checkpoint, or both `merged`) and the new
    job's plan `new`, judged."""
    held = held_groups(old)
    pinned = restored(old.get(Recorded.CONF) or {})
    widen = str(pinned[NULLABLE_SETTING]).lower() == "true"
    found: list[Difference] = source_differences(old[Recorded.SOURCES], new[Recorded.SOURCES])
    found += operator_differences(old[Recorded.OPERATORS], new[Recorded.OPERATORS], held, widen)
    stateful = bool(new[Recorded.OPERATORS])
    found += delay_differences(_known_delays(old), _delays(new), old.get(Recorded.WATERMARK_MS), stateful)
    watermarks = len(new.get(Recorded.WATERMARKS) or ())
    found += setting_differences(old.get(Recorded.CONF) or {}, new.get(Recorded.CONF) or {}, watermarks)
    found += mode_differences(old.get(Recorded.OUTPUT_MODE), new.get(Recorded.OUTPUT_MODE), held)
    if not any(d.area in EXPLAINING and d.verdict is not Verdict.SAFE for d in found):
        found += output_differences(
            old.get(Recorded.OUTPUT),
            new.get(Recorded.OUTPUT),
            old.get(Recorded.OUTPUT_ROWS),
            new.get(Recorded.OUTPUT_ROWS),
        )
    return Comparison(tuple(found), _compared(old, new), _not_compared(old, new))


def _delays(recorded: Metadata) -> list[int]:
    """The watermark delays: each `withWatermark`'s (a plan), else those Spark recorded on state key fields."""
    watermarks = recorded.get(Recorded.WATERMARKS)
    if watermarks is not None:
        return sorted({w[WatermarkKey.DELAY_MS] for w in watermarks})
    return sorted(
        {
            f[FieldKey.DELAY_MS]
            for op in recorded[Recorded.OPERATORS]
            for f in op.get(OperatorKey.KEY) or ()
            if f.get(FieldKey.DELAY_MS) is not None
        }
    )


def _known_delays(recorded: Metadata) -> list[int] | None:
    """The old job's watermark delays, or None when its checkpoint cannot tell whether it had a watermark: it
    records a delay only on a state key that holds event time, so a checkpoint without one is known to have
    none only when such a key (a timestamp, or a window of them) carries no delay and its journaled watermark
    is 0.

    >>> window = {"name": "window", "type": {"type": "struct", "fields": [{"type": "timestamp"}]}}
    >>> written = {"origin": "checkpoint", "operators": [{"key": [window]}], "watermark_ms": 0}
    >>> _known_delays(written), _known_delays({**written, "watermark_ms": 20000})
    ([], None)
    """
    delays = _delays(recorded)
    if delays or recorded.get(Recorded.WATERMARKS) is not None:
        return delays
    timed = any(
        "timestamp" in json.dumps(f.get(FieldKey.TYPE))
        for op in recorded[Recorded.OPERATORS]
        for f in op.get(OperatorKey.KEY) or ()
    )
    return [] if timed and not recorded.get(Recorded.WATERMARK_MS) else None


def _compared(old: Metadata, new: Metadata) -> tuple[str, ...]:
    operators = new[Recorded.OPERATORS]
    fields = sum(
        len(op.get(OperatorKey.KEY) or ()) + len(op.get(OperatorKey.VALUE) or ()) for op in operators
    )
    recorded = set(old.get(Recorded.CONF) or {})
    settings = set(restored(old.get(Recorded.CONF) or {})) & set(new.get(Recorded.CONF) or {})
    unrecorded = len(settings - recorded)
    return (
        f"{len(new[Recorded.SOURCES])} source(s)",
        f"{len(operators)} stateful operator(s), {fields} state field(s)",
        f"{len(_delays(new))} watermark delay(s)",
        f"{len(settings)} pinned setting(s)"
        + (f" ({unrecorded} not recorded, taken as Spark restores them)" if unrecorded else ""),
    )


def _not_compared(old: Metadata, new: Metadata) -> tuple[str, ...]:
    if old.get(Recorded.ORIGIN) != Origin.CHECKPOINT:
        return _plan_alone(old, new)
    notes: tuple[str, ...] = (
        "the old job's output mode, output columns and filters: a checkpoint records none of them",
        "how the old job computed its keys and aggregates: a checkpoint records their names and types, so fields are matched by name",
    )
    unbound = [
        i
        for i, (before, after) in enumerate(zip(old[Recorded.SOURCES], new[Recorded.SOURCES]))
        if SourceKey.OPTIONS not in before and SourceKey.FILES not in before and after.get(SourceKey.OPTIONS)
    ]
    if unbound:
        notes += (
            f"the options of source(s) {unbound} (a Kafka topic, a table): a checkpoint records where they "
            "read, not the options that bound it",
        )
    if _delays(new) and _known_delays(old) is None:
        notes += (
            "the old watermark delay: a checkpoint records it only on a state key that holds event time",
        )
    if any(op[OperatorKey.NAME] is None for op in old[Recorded.OPERATORS]):
        notes += (
            "the kind of each stateful operator: the checkpoint has no operator metadata (Spark 3.x wrote it), "
            "and Spark checks none on this restart",
        )
    if any(op.get(OperatorKey.WINDOW) for op in new[Recorded.OPERATORS]):
        notes += (
            "the old window's slide and start: a checkpoint records only the duration of a window it holds",
        )
    return notes


def _plan_alone(old: Metadata, new: Metadata) -> tuple[str, ...]:
    """What the old job's plan alone (no `--checkpoint`) cannot tell: how its checkpoint's state schemas were
    written (`NULLABLE_SETTING`: a checkpoint written before Spark 4.3 lacks it and keeps `count`
    non-nullable, so `count` -> `sum` fails its restart)."""
    if old.get(Recorded.COMMITTED) is not None or not new[Recorded.OPERATORS]:
        return ()
    return (
        "how the running query's checkpoint wrote its state schemas: as this Spark would "
        f"({NULLABLE_SETTING}); a checkpoint written before Spark 4.3 keeps a count non-nullable, one "
        "written by Spark 3.x has no operator metadata and its operators are not checked: give --checkpoint "
        "to read it",
    )


def held_groups(old: Metadata) -> str:
    """The groups in state at the switch: those the checkpoint holds, named, or in words."""
    operators = [op for op in old[Recorded.OPERATORS] if op.get(OperatorKey.GROUPS) is not None]
    if not operators:
        return "the groups in state at the switch (those the watermark has not yet evicted)"
    groups = [g for op in operators for g in op[OperatorKey.GROUPS]]
    batch = old.get(Recorded.COMMITTED)
    if not groups:
        return f"none: the state held no group after batch {batch}"
    shown = "; ".join(_group(g) for g in groups[:SHOWN_GROUPS])
    more = f" and {len(groups) - SHOWN_GROUPS} more" if len(groups) > SHOWN_GROUPS else ""
    return f"the {len(groups)} group(s) held in state after batch {batch} ({shown}{more})"


def _group(group: Mapping[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, Mapping) and {"start", "end"} <= set(v):
            return f"[{v['start']}, {v['end']})"
        return repr(v)

    return ", ".join(f"{k}={value(v)}" for k, v in group.items())


def merged(plan: Metadata, checkpoint: Metadata) -> dict:
    """The old job as its plan says (how each field is computed, its output) and as its checkpoint recorded
    it (its state schemas, the files read, the settings, the watermark and the groups held); `CannotJudge`
    when the plan is not the job that wrote the checkpoint."""
    planned = {op[OperatorKey.ID]: op[OperatorKey.NAME] for op in plan[Recorded.OPERATORS]}
    recorded = {op[OperatorKey.ID]: op[OperatorKey.NAME] for op in checkpoint[Recorded.OPERATORS]}
    # a checkpoint without operator metadata names no operator (None): its ids alone are compared
    seen = {i: name if recorded.get(i, name) is not None else None for i, name in planned.items()}
    if seen != recorded or len(plan[Recorded.SOURCES]) != len(checkpoint[Recorded.SOURCES]):
        raise CannotJudge(
            "--from with --checkpoint",
            f"the old job plans {len(plan[Recorded.SOURCES])} source(s) and the operators {planned}, the checkpoint "
            f"records {len(checkpoint[Recorded.SOURCES])} and {recorded}: it is not the job that wrote the checkpoint",
        )
    written = {op[OperatorKey.ID]: op for op in checkpoint[Recorded.OPERATORS]}
    return {
        **plan,
        **{
            k: checkpoint[k]
            for k in (Recorded.CONF, Recorded.WATERMARK_MS, Recorded.BATCH, Recorded.COMMITTED)
        },
        Recorded.SOURCES: [
            {**p, **{k: v for k, v in c.items() if k in (SourceKey.OFFSET, SourceKey.FILES)}}
            for p, c in zip(plan[Recorded.SOURCES], checkpoint[Recorded.SOURCES])
        ],
        Recorded.OPERATORS: [_operator(op, written[op[OperatorKey.ID]]) for op in plan[Recorded.OPERATORS]],
    }


def _operator(planned: Metadata, written: Metadata) -> dict:
    """An operator as Spark wrote its state (fields, groups), each key field with the plan's lineage, its
    name None when the checkpoint has no operator metadata (Spark then checks none)."""
    return {
        **planned,
        OperatorKey.NAME: planned[OperatorKey.NAME] if written[OperatorKey.NAME] is not None else None,
        OperatorKey.KEY: _fields(written.get(OperatorKey.KEY), planned.get(OperatorKey.KEY)),
        OperatorKey.VALUE: written.get(OperatorKey.VALUE) or planned.get(OperatorKey.VALUE),
        OperatorKey.GROUPS: written.get(OperatorKey.GROUPS),
    }


def _fields(written: Sequence[Metadata] | None, planned: Sequence[Metadata] | None) -> Any:
    if written is None or planned is None or len(written) != len(planned):
        return written if written is not None else planned
    return [{**w, FieldKey.LINEAGE: p.get(FieldKey.LINEAGE)} for w, p in zip(written, planned)]
