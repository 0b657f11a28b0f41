"""The stateful operators' rules: which operators, what their state is keyed on and holds.

On the first batch after a restart Spark checks, in order (`IncrementalExecution.state`):

- the operators: each id's short name in the checkpoint's operator metadata must be the plan's, and no id
  may be added or removed; a stateless query that becomes stateful has no state directory, which Spark 4.3
  refuses (`MISSING_STATE`, SPARK-54307);
- each operator's key schema, then its value schema, by `schema.compatible` (types and order; names never
  compared).

A checkpoint without operator metadata (written by Spark 3.5 or before: its operators are known by id
alone, their names None) skips the first check (`UNCHECKED`, measured). The restart writes the new job's
operators into the checkpoint as its metadata, then runs the first batch: an operator the old job did not
have fails to load a state it never wrote (`CANNOT_LOAD`), and from then on the old job fails its restart
on the checkpoint too (`OPERATORS_NOT_MATCH`); an operator the new job dropped is never read again, its
groups never updated or emitted. An id kept under another kind is judged by its schemas alone, and the
load failure is placed after the schema checks, as Spark plans a batch before it runs it: neither measured.
A checkpoint with metadata for some operators and not others cannot be judged.

What passes both checks may still change the results, because nothing in the checkpoint records how a key
or a value is computed (`STATE_KEY`):

- a key computed differently at a position (two keys of one type swapped, a window of another duration, a
  key derived otherwise): Spark finds a group's state by the value of its key, so a new group whose value
  (window and key columns) an old group had continues that group's state, whatever records made it; the
  new job's other groups start from zero, and the old groups no new one meets are orphaned, never updated
  again (in append mode each is emitted when the watermark passes it);
- another aggregate over a buffer of the same types (`count` -> `sum` of a long column): each group in
  state at the switch mixes the two;
- another filter before the operator: the groups in state at the switch hold what the old filter let
  through;
- another watermark delay: the restart restores the journaled watermark, and only then does the new
  delay move it: records of the first batches after the switch are judged late against the old one;
- a watermark added: the restart restores the journaled watermark, 0 for a job without one, so the first
  batch after the switch judges no record late, and the groups in state were never evicted;
- a watermark removed: nothing reads the journaled watermark any more, so no record is late and nothing
  is evicted: a record of a group the old watermark evicted starts that group again from zero.

A key whose name alone changed (the same column or expression, renamed) carries the state on: safe. From a
checkpoint, a key field is known only by its name and type: fields are matched by name. The state of
another operator (a stream-stream join, arbitrary state, a session window, a limit) is not read: an
upgrade of a job holding one cannot be judged (`CannotJudge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.upgrade.difference import (
    CANNOT_LOAD,
    KEY_NOT_COMPATIBLE,
    MISSING_STATE,
    OPERATOR_CHECK,
    OPERATORS_NOT_MATCH,
    SCHEMA_CHECK,
    STATE_KEY,
    UNCHECKED,
    VALUE_NOT_COMPATIBLE,
    WATERMARK,
    Difference,
)
from frontier_harness.model.upgrade.schema import as_nullable, compatible, shown
from frontier_harness.model.vocabulary.event_time import FieldKey, OperatorKey
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

Operator = Mapping[str, Any]
READ = ("stateStoreSave", "dedupe", "dedupeWithinWatermark")  # the operators whose state the model reads
ORPHANED = (
    "Spark finds a group's state by its key's value: a new group whose value (window and key columns) an old "
    "group had continues that group's state, whatever records made it; the new job's other groups start from "
    "zero, and the old groups no new one meets are orphaned (never updated again; in append mode emitted when "
    "the watermark passes them)"
)


def operator_differences(
    old: Sequence[Operator], new: Sequence[Operator], held: str, widen: bool
) -> list[Difference]:
    """The differences between the old job's stateful operators and the new job's; `held` names the groups
    in state at the switch, `widen` says whether state schemas are widened to nullable (the pinned
    `alwaysNullableOutput`)."""
    before = {op[OperatorKey.ID]: op[OperatorKey.NAME] for op in old}
    after = {op[OperatorKey.ID]: op[OperatorKey.NAME] for op in new}
    found = []
    if None in before.values() and set(before.values()) != {None}:
        raise CannotJudge(
            f"operators {_named(before)}",
            "the checkpoint has operator metadata for some operators and not for others: what Spark checks "
            "on such a restart was not measured",
        )
    if None in before.values():
        found += _unchecked(before, after, held)
    elif before and before != after:
        found.append(
            Difference(
                Area.OPERATORS,
                f"{_named(before)} -> {_named(after)}",
                Verdict.RESTART_FAILS,
                "each stateful operator id must keep its kind, and none may be added or removed",
                OPERATOR_CHECK,
                error=OPERATORS_NOT_MATCH,
                fix=f"keep the stateful operators {_named(before)}; a job with other operators needs a new checkpoint",
            )
        )
    elif not before and after:
        found.append(
            Difference(
                Area.OPERATORS,
                f"none -> {_named(after)}",
                Verdict.RESTART_FAILS,
                "a checkpoint without stateful operators has no state directory: Spark refuses to start "
                "stateful operators on it",
                OPERATOR_CHECK,
                error=MISSING_STATE,
                fix="start the stateful job on a new checkpoint",
            )
        )
    kept = {op[OperatorKey.ID]: op for op in old}
    for op in new:
        match = kept.get(op[OperatorKey.ID])
        if match is None or match[OperatorKey.NAME] not in (None, op[OperatorKey.NAME]):
            continue
        if op[OperatorKey.NAME] not in READ:
            raise CannotJudge(
                f"operator {op[OperatorKey.ID]} ({op[OperatorKey.NAME]})",
                "the model reads the state of aggregations and deduplications; a change to this operator's "
                "state (a join's four stores, arbitrary or session state) is not compared",
            )
        found += _operator(match, op, held, widen)
    return found


def _unchecked(before: Mapping[int, str | None], after: Mapping[int, str], held: str) -> list[Difference]:
    """The operators added and removed on a checkpoint without operator metadata, which Spark does not check
    (see the module docstring).

    >>> [d.verdict.value for d in _unchecked({0: None}, {0: "stateStoreSave", 1: "dedupe"}, "g")]
    ['restart fails']
    >>> [d.verdict.value for d in _unchecked({0: None}, {}, "g")]
    ['restarts, results change']
    """
    found = []
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    if added:
        found.append(
            Difference(
                Area.STATE,
                f"operator(s) {added} ({', '.join(after[i] for i in added)}) added to a checkpoint without operator metadata",
                Verdict.RESTART_FAILS,
                "a checkpoint Spark 3.x wrote has no operator metadata, so the restart checks no operator: it "
                "writes the new job's operators into the checkpoint, and the first batch fails to load the state "
                "of an operator the old job never had; from then on the old job fails its restart on the "
                f"checkpoint too ({OPERATORS_NOT_MATCH})",
                UNCHECKED,
                error=CANNOT_LOAD,
                fix=f"keep the stateful operators {sorted(before)}, or start on a new checkpoint; to go back "
                "after the attempt, restore the checkpoint from a copy taken before it",
            )
        )
    if removed:
        found.append(
            Difference(
                Area.OPERATORS,
                f"operator(s) {removed} removed from a checkpoint without operator metadata",
                Verdict.RESULTS_CHANGE,
                "a checkpoint Spark 3.x wrote has no operator metadata, so the restart checks no operator: the "
                "state of an operator the new job does not have is never read again",
                UNCHECKED,
                rows=f"{held}: never updated or emitted again",
            )
        )
    return found


def _named(operators: Mapping[int, str | None]) -> str:
    return "[" + ", ".join(f"{i}: {name}" for i, name in sorted(operators.items())) + "]"


def _operator(old: Operator, new: Operator, held: str, widen: bool) -> list[Difference]:
    name = f"operator {new[OperatorKey.ID]} ({new[OperatorKey.NAME]})"
    schemas = _schemas(name, old, new, widen)
    if any(d.verdict is Verdict.RESTART_FAILS for d in schemas):
        return schemas
    keys = _window(name, old, new, held) + _keys(name, old, new, held)
    return schemas + keys + _values(name, old, new, held) + _rows(name, old, new, held, bool(keys))


def _schemas(name: str, old: Operator, new: Operator, widen: bool) -> list[Difference]:
    found = []
    for area, part, error in (
        (Area.KEY, OperatorKey.KEY, KEY_NOT_COMPATIBLE),
        (Area.VALUE, OperatorKey.VALUE, VALUE_NOT_COMPATIBLE),
    ):
        stored, planned = old.get(part), new.get(part)
        if stored is None or planned is None:
            continue
        stored, planned = (as_nullable(stored), as_nullable(planned)) if widen else (stored, planned)
        if not compatible(stored, planned):
            found.append(
                Difference(
                    area,
                    f"{name}'s {area}: {shown(stored)} -> {shown(planned)}",
                    Verdict.RESTART_FAILS,
                    "a state schema keeps its number, order and types of fields (names are never compared)",
                    SCHEMA_CHECK,
                    error=error,
                    fix=_schema_fix(area, stored),
                )
            )
    return found


def _schema_fix(area: str, stored: Sequence[Mapping[str, Any]]) -> str:
    if area == Area.KEY:
        return f"group (or deduplicate) by fields of the types {shown(stored)}, in that order"
    return (
        f"keep aggregates whose buffers are {shown(stored)} (count and sum of a long column share one long)"
    )


def _window(name: str, old: Operator, new: Operator, held: str) -> list[Difference]:
    before, after = old.get(OperatorKey.WINDOW), new.get(OperatorKey.WINDOW)
    if before is None or after is None:
        return []
    if all(b is None or b == a for b, a in zip(before, after)):
        return []
    return [
        Difference(
            Area.WINDOW,
            f"{name}'s window {_window_shown(before)} -> {_window_shown(after)}",
            Verdict.RESULTS_CHANGE,
            "the window key's type is the same whatever its duration: Spark does not notice",
            STATE_KEY,
            rows=f"{held}: {ORPHANED}",
        )
    ]


def _window_shown(window: Sequence[int | None]) -> str:
    duration, slide, start = window
    parts = [f"{duration} ms"]
    if slide is not None and slide != duration:
        parts.append(f"sliding {slide} ms")
    if start:
        parts.append(f"from {start} ms")
    return "[" + ", ".join(parts) + "]"


def _keys(name: str, old: Operator, new: Operator, held: str) -> list[Difference]:
    """The key fields, position by position (a window field is the window rule's)."""
    before, after = old.get(OperatorKey.KEY), new.get(OperatorKey.KEY)
    if before is None or after is None or len(before) != len(after):
        return []
    pairs = [(b, a) for b, a in zip(before, after) if not _is_window(b) and not _is_window(a)]
    recomputed = [(b, a) for b, a in pairs if not _same_column(b, a)]
    if recomputed:
        shown_pairs = ", ".join(f"{_field_shown(b)} -> {_field_shown(a)}" for b, a in recomputed)
        swapped = sorted(b[FieldKey.NAME] for b, _ in recomputed) == sorted(
            a[FieldKey.NAME] for _, a in recomputed
        )
        what = "keys swapped" if swapped and len(recomputed) > 1 else "a key computed otherwise"
        return [
            Difference(
                Area.KEY,
                f"{name}'s {what}: {shown_pairs}",
                Verdict.RESULTS_CHANGE,
                "the state is keyed by the values of its key fields by position, of the same types: Spark does not notice",
                STATE_KEY,
                rows=f"{held}: {ORPHANED}",
            )
        ]
    renamed = [(b, a) for b, a in pairs if b[FieldKey.NAME] != a[FieldKey.NAME]]
    if not renamed:
        return []
    return [
        Difference(
            Area.KEY,
            f"{name}'s key renamed: "
            + ", ".join(f"{b[FieldKey.NAME]} -> {a[FieldKey.NAME]}" for b, a in renamed),
            Verdict.SAFE,
            "names are never compared, and the same values key the same groups: the state carries on",
            SCHEMA_CHECK,
        )
    ]


def _same_column(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two key fields hold the same values: the same lineage where both are known; else (a
    checkpoint records only names) the same name, or a new field computed as the old one's column."""
    before, after = old.get(FieldKey.LINEAGE), new.get(FieldKey.LINEAGE)
    if before is not None and after is not None:
        return bool(before == after)
    return old[FieldKey.NAME] in (new[FieldKey.NAME], after)


def _field_shown(field: Mapping[str, Any]) -> str:
    lineage = field.get(FieldKey.LINEAGE)
    return (
        field[FieldKey.NAME]
        if lineage in (None, field[FieldKey.NAME])
        else f"{field[FieldKey.NAME]} = {lineage}"
    )


def _is_window(field: Mapping[str, Any]) -> bool:
    data_type = field[FieldKey.TYPE]
    fields = data_type.get("fields", []) if isinstance(data_type, dict) else []
    return [(f["name"], f["type"]) for f in fields] == [("start", "timestamp"), ("end", "timestamp")]


def _values(name: str, old: Operator, new: Operator, held: str) -> list[Difference]:
    """Another aggregate over a buffer of the same types: by the functions (plans), else by the buffers'
    names (a checkpoint records the buffer, not the function)."""
    before, after = old.get(OperatorKey.AGGREGATES), new.get(OperatorKey.AGGREGATES)
    if before is None or after is None:
        before = [f[FieldKey.NAME] for f in old.get(OperatorKey.VALUE) or ()]
        after = [f[FieldKey.NAME] for f in new.get(OperatorKey.VALUE) or ()]
    if before == after:
        return []
    return [
        Difference(
            Area.AGGREGATES,
            f"{name}'s aggregates {', '.join(before)} -> {', '.join(after)}",
            Verdict.RESULTS_CHANGE,
            "the state holds the aggregation buffer, of the same types here: the new functions update the old buffers",
            STATE_KEY,
            rows=f"{held}: each one's value mixes the old aggregate's and the new one's",
        )
    ]


def _rows(name: str, old: Operator, new: Operator, held: str, keyed_otherwise: bool) -> list[Difference]:
    before, after = old.get(OperatorKey.ROWS), new.get(OperatorKey.ROWS)
    if before is None or after is None or sorted(before) == sorted(after) or keyed_otherwise:
        return []
    return [
        Difference(
            Area.INPUT,
            f"{name}'s input filters [{'; '.join(before)}] -> [{'; '.join(after)}]",
            Verdict.RESULTS_CHANGE,
            "the state holds what the old filters let through: the new ones apply only from the switch on",
            STATE_KEY,
            rows=f"{held}: each one holds records the new filters would have judged otherwise",
        )
    ]


def delay_differences(
    old: Sequence[int] | None, new: Sequence[int], watermark_ms: int | None, stateful: bool
) -> list[Difference]:
    """The watermark delays `old` (None: not known, a checkpoint records none) -> `new`, for a new job that is
    `stateful` (a stateless one reads no watermark): another delay, a watermark added, or one removed.

    >>> [d.what for d in delay_differences([], [5000], 0, True)], delay_differences([], [5000], 0, False)
    (['delays [] -> [5000 ms]'], [])
    >>> [d.verdict.value for d in delay_differences([5000], [], 20000, True)]
    ['restarts, results change']
    >>> delay_differences(None, [5000], 0, True)  # a checkpoint that cannot tell
    []
    """
    if old is None or not stateful or sorted(old) == sorted(new):
        return []
    if not old or not new:
        return [_watermark_added(new, watermark_ms) if new else _watermark_removed(old)]
    journaled = f"{watermark_ms} ms" if watermark_ms is not None else "the one journaled in offsets/N"
    return [
        Difference(
            Area.WATERMARK,
            f"delays {_ms(old)} -> {_ms(new)}",
            Verdict.RESULTS_CHANGE,
            "the watermark's value survives a restart, its delay is the new plan's",
            WATERMARK,
            rows=(
                f"the records of the first batches after the switch near the watermark ({journaled}): judged late "
                "against the old job's watermark until the new delay moves it, so the groups between the two "
                "watermarks (windows, or deduplicated keys) hold other records than either job alone"
            ),
        )
    ]


def _ms(delays: Sequence[int]) -> str:
    return "[" + ", ".join(f"{d} ms" for d in delays) + "]"


def _watermark_added(new: Sequence[int], watermark_ms: int | None) -> Difference:
    journaled = f"{watermark_ms} ms" if watermark_ms is not None else "the one journaled in offsets/N"
    return Difference(
        Area.WATERMARK,
        f"delays [] -> {_ms(new)}",
        Verdict.RESULTS_CHANGE,
        "a watermark added: the restart restores the journaled watermark, which a job without one left at 0; "
        "nothing checks that the old job had a watermark",
        WATERMARK,
        rows=(
            f"the groups in state at the switch, never evicted, and the records of the first batch after it, "
            f"judged against the journaled watermark ({journaled}): counted where the new job, run from the "
            "start, drops them as late or has evicted their group"
        ),
    )


def _watermark_removed(old: Sequence[int]) -> Difference:
    return Difference(
        Area.WATERMARK,
        f"delays {_ms(old)} -> []",
        Verdict.RESULTS_CHANGE,
        "a watermark removed: the journaled watermark stays in offsets/N, but no operator reads it: "
        "no record is late and no state is evicted from the switch on",
        WATERMARK,
        rows=(
            "the groups the old watermark evicted: a record of one, late for the old job, starts it again "
            "from zero, where the new job, run from the start, holds all its records"
        ),
    )
