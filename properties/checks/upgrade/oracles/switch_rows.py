"""What an upgraded window aggregation's result must hold after the switch, by the model's rule
(`frontier_harness.model.upgrade.switch`), never by Spark's streaming engine.

At a step after the switch the trial is read as the stateful suite reads it (`stateful_rows.read_step`:
the committed batches, their records, the model's watermarks), and the records the model keeps for each
window are split at the switch batch (the first batch after the newest one committed before the upgrade
restart). Each window group's row is a transform run as a batch job over a frame of its records: the old
job's over those before the switch, the new job's over those after (or over all, or the two summed, by the
upgrade's `Mix`). In append mode only the windows complete by the last committed batch are in the result.

A group held on both sides of the switch is one the static verdict named ("the groups in state at the
switch"): `Expected.named` says which rows are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from frontier_harness.model.event_time.stateful import Record, Span, StatefulPlan, aggregate
from frontier_harness.model.upgrade.switch import Mix, side, split
from frontier_harness.model.vocabulary.event_time import OutputMode
from frontier_harness.model.vocabulary.streaming import StreamingLabel
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import Frame, Pick, Step, rows_of
from frontier_harness.properties.checks.streaming.committed import observed_steps
from frontier_harness.properties.engine.suite import Observation

OLD, NEW = "old", "new"


def switch_batch(obs: Observation, switch: int) -> int:
    """The first batch the new job runs: the one after the newest committed before the switch step."""
    before = [s for s in observed_steps(obs) if s < switch]
    return max(obs[(before[-1], StreamingLabel.COMMITS)], default=-1) + 1 if before else 0


@attrs.frozen
class Group:
    """One window group's row: the frames (old job's, new job's) it is read from, whether its value is
    their sum (`added`), and whether it was held on both sides of the switch (`named`)."""

    span: Span
    key: tuple
    frames: tuple[tuple[str, Frame], ...]
    added: bool = False
    named: bool = False

    def what(self) -> str:
        sides = " plus ".join(f"the {job} job's over {len(frame)} record(s)" for job, frame in self.frames)
        held = ", held in state at the switch" if self.named else ""
        return f"window [{self.span.start}, {self.span.end}) {self.key}: {sides}{held}"


def expected_groups(plan: StatefulPlan, trial: Step, switch: int, mix: Mix) -> list[Group]:
    """Every window group the result must hold after `trial`'s step (see the module docstring)."""
    assert plan.window is not None
    kept = aggregate(plan.window, trial.done, trial.marks).kept
    if plan.output_mode == OutputMode.APPEND:
        last = trial.last
        kept = {s: rs for s, rs in kept.items() if last is not None and trial.marks.complete(s.end, last)}
    groups = []
    for (span, key), (pre, post) in sorted(split(kept, trial.done, switch, plan.keys).items()):
        where = side(*(["pre"] if pre else []), *(["post"] if post else []))
        if where == "before":
            groups.append(Group(span, key, ((OLD, _frame(pre)),)))
        elif where == "after":
            groups.append(Group(span, key, ((NEW, _frame(post)),)))
        elif mix is Mix.ADDED:
            groups.append(Group(span, key, ((OLD, _frame(pre)), (NEW, _frame(post))), added=True, named=True))
        else:
            records = post if mix is Mix.ORPHANED else pre + post
            groups.append(Group(span, key, ((NEW, _frame(records)),), named=True))
    return groups


def _frame(records: Sequence[Record]) -> Frame:
    return tuple(sorted((r.key, r.event_time, r.data, r.partition, r.offset) for r in records))


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
