"""What an upgraded window aggregation's result must hold after the switch, by the model's rule
(`frontier_harness.model.upgrade.switch`), never by Spark's streaming engine.

At a step after the switch the trial is read as the stateful suite reads it (`stateful_rows.read_step`:
the committed batches, their records, the model's watermarks), and the records the model keeps for each
window are split at the switch batch (the first batch after the newest one committed before the upgrade
restart) into window groups by the value each record's key has: its old key's before the switch under a
key computed otherwise (`Mix.REKEYED`), else its new key's, as observed (`state_keys_of`: the jobs'
grouping expressions run by Spark over the records). Each group's row is a transform run as a batch job over
a frame of its records: the old job's over those before the switch, the new job's over those after (or over
all, or the two summed, by the upgrade's `Mix`). In append mode only the windows complete by the last
committed batch are in the result.

A group the new job groups records of both sides into is one the static verdict named ("the groups in state
at the switch"): `Group.named` says which are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.event_time.stateful import Record, Span, StatefulPlan, aggregate
from frontier_harness.model.upgrade.switch import Mix, split
from frontier_harness.model.vocabulary.event_time import OutputMode
from frontier_harness.model.vocabulary.streaming import StreamingLabel
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import (
    Frame,
    Pick,
    Step,
    at_final_step,
    rows_of,
)
from frontier_harness.properties.checks.streaming.committed import observed_steps
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation

OLD, NEW = "old", "new"


def switch_batch(obs: Observation, switch: int) -> int:
    """The first batch the new job runs: the one after the newest committed before the switch step."""
    before = [s for s in observed_steps(obs) if s < switch]
    return max(obs[(before[-1], StreamingLabel.COMMITS)], default=-1) + 1 if before else 0


@attrs.frozen
class Group:
    """One window group's row: the frames (old job's, new job's) it is read from, whether its value is
    their sum (`added`), whether the new job groups records of both sides of the switch into it (`named`),
    and whether those before it are in the old job's state under another value (`orphaned`)."""

    span: Span
    key: tuple
    frames: tuple[tuple[str, Frame], ...]
    added: bool = False
    named: bool = False
    orphaned: bool = False

    def what(self) -> str:
        sides = " plus ".join(f"the {job} job's over {len(frame)} record(s)" for job, frame in self.frames)
        held = ", held in state at the switch" if self.named and not self.orphaned else ""
        orphaned = (
            ", its records before the switch in the old job's state under another key"
            if self.orphaned
            else ""
        )
        return f"window [{self.span.start}, {self.span.end}) {self.key}: {sides}{held}{orphaned}"


def expected_groups(
    plan: StatefulPlan, trial: Step, switch: int, mix: Mix, keys: Mapping[tuple, tuple[tuple, tuple]]
) -> list[Group]:
    """Every window group the result must hold after `trial`'s step (see the module docstring); `keys` holds
    each record's `(old, new)` key values (`state_keys_of`)."""
    assert plan.window is not None
    kept = aggregate(plan.window, trial.done, trial.marks).kept
    if plan.output_mode == OutputMode.APPEND:
        last = trial.last
        kept = {s: rs for s, rs in kept.items() if last is not None and trial.marks.complete(s.end, last)}
    old, new = (lambda r: keys[_row(r)][0]), (lambda r: keys[_row(r)][1])
    held = split(kept, trial.done, switch, old if mix is Mix.REKEYED else new, new)
    # the groups the new job would put the old job's records in
    filed = {(span, new(r)) for (span, _), (pre, _) in held.items() for r in pre}
    groups = []
    for (span, key), (pre, post) in sorted(held.items(), key=lambda item: (item[0][0], repr(item[0][1]))):
        if not post:
            groups.append(Group(span, key, ((OLD, _frame(pre)),)))
        elif not pre:
            split_off = (span, key) in filed
            groups.append(Group(span, key, ((NEW, _frame(post)),), named=split_off, orphaned=split_off))
        elif mix is Mix.ADDED:
            groups.append(Group(span, key, ((OLD, _frame(pre)), (NEW, _frame(post))), added=True, named=True))
        else:
            _continued(span, key, pre, new)
            groups.append(Group(span, key, ((NEW, _frame(pre + post)),), named=True))
    return groups


def _continued(span: Span, key: tuple, pre: Sequence[Record], new: Callable[[Record], tuple]) -> None:
    """A group the new job continues must hold old records its new key files under it too (else its state
    is a buffer no batch job over records makes: `CannotJudge`)."""
    elsewhere = sorted({new(r) for r in pre} - {key}, key=repr)
    if elsewhere:
        raise CannotJudge(
            f"window [{span.start}, {span.end}) {key} after the switch",
            f"its state holds records the old job keyed {key} and the new job keys {', '.join(map(repr, elsewhere))}: "
            "the rows continuing it are no batch job over records",
        )


def state_keys_of(history: History, obs: Observation) -> dict[tuple, tuple[tuple, tuple]]:
    """Each record as the source reads it -> the values the old job's and the new job's aggregation key it
    by, as observed at the history's final step (`StreamingLabel.STATE_KEYS`).

    >>> state_keys_of(History("events", ()), {(0, "state_keys"): frozenset({(("A", 1, "r0", 0, 0), ("A",), ("a",))})})
    {('A', 1, 'r0', 0, 0): (('A',), ('a',))}
    """
    found = at_final_step(
        history, obs, StreamingLabel.STATE_KEYS, "an upgrade", "the key each job files it under"
    )
    return {row: (old, new) for row, old, new in found}


def _row(record: Record) -> tuple:
    return (record.key, record.event_time, record.data, record.partition, record.offset)


def _frame(records: Sequence[Record]) -> Frame:
    return tuple(sorted(_row(r) for r in records))


def frames(groups: Sequence[Group], job: str) -> list[Frame]:
    """Every frame of `job` (`OLD` or `NEW`) the groups read, once."""
    return sorted({frame for g in groups for owner, frame in g.frames if owner == job})


def expected_rows(
    groups: Sequence[Group],
    outputs: Mapping[str, Mapping[Frame, Counter]],
    window_column: str | None,
    keys: Sequence[str],
) -> tuple[Counter, dict[tuple, Group]]:
    """The rows the groups make, as a multiset, and the group each row is of."""
    rows: Counter = Counter()
    of: dict[tuple, Group] = {}
    for group in groups:
        parts = [rows_of(Pick(frame, group.span), outputs[job], window_column) for job, frame in group.frames]
        made = _added(parts, window_column, keys) if group.added else sum(parts, Counter())
        rows += made
        of.update({row: group for row in made})
    return rows, of


def _added(parts: Sequence[Counter], window_column: str | None, keys: Sequence[str]) -> Counter:
    """The old job's row and the new job's of one group as one row: the group's columns, the others summed."""
    old, new = (next(iter(rows), None) for rows in parts)
    if old is None or new is None:
        return Counter([row for row in (old, new) if row is not None])
    group = {*keys, window_column}
    values: dict[str, Any] = dict(new)
    for column, value in dict(old).items():
        if column not in group and isinstance(value, int) and isinstance(values.get(column), int):
            values[column] = values[column] + value
    return Counter([tuple(sorted(values.items()))])
