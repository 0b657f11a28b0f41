"""What a window aggregation's result holds after the new job took over at a switch batch: the rule the
dynamic half judges the trials by.

The records the model keeps for each window (`model.event_time.stateful.aggregate`, by the watermarks,
which an upgrade this model judges keeps) split at the switch: those of batches the old job committed,
and those of later batches (a batch the old job logged but did not commit is run by the new job). A
window group (a window and the values of the new job's key columns) is then:

- held only before the switch: the old job's row over its records stays (nothing updates it);
- held only after: the new job's row over its records;
- held on both sides (in state at the switch, updated after), by the `Mix` the upgrade's differences make:
  `PLAIN` (a safe upgrade): the new job's row over all its records; `ORPHANED` (a key computed
  otherwise): the new job's row over the records after the switch; `ADDED` (an additive aggregate, `count`
  or `sum`, replaced by another over a buffer of the same type: the new function updates the old buffer):
  the old job's value over the records before the switch plus the new job's over those after.

`ORPHANED` assumes that no new group's value is an old group's. Spark finds state by the key's value, so a
new key that gives some records the old value (`lower(key)` over lower-case keys) continues those groups'
state, which this rule does not model. The trials' records make no such group (a swap of `key` and `data`,
whose values never meet).

>>> from frontier_harness.model.upgrade.difference import Comparison, Difference
>>> d = Difference("aggregates", "count(1) -> sum(offset)", Verdict.RESULTS_CHANGE, "", "")
>>> mix_of(Comparison((d,), ()), ["count(1)"], ["sum(offset)"])
<Mix.ADDED: 'added'>
>>> side("pre", "post"), side("pre", "pre")
('both', 'before')
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.event_time.stateful import Batch, Record, Span
from frontier_harness.model.upgrade.difference import Comparison
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

ADDITIVE = re.compile(r"^(count|sum)\(.*\)$")


class Mix(enum.StrEnum):
    """How a group held on both sides of the switch mixes the two jobs (see the module docstring)."""

    PLAIN = "plain"
    ORPHANED = "orphaned"
    ADDED = "added"


def mix_of(comparison: Comparison, old_aggregates: Sequence[str], new_aggregates: Sequence[str]) -> Mix:
    """The mix of a restart that does not fail; `CannotJudge` for a change the dynamic half has no rule for."""
    changing = {d.area for d in comparison.differences if d.verdict is Verdict.RESULTS_CHANGE}
    if not changing:
        return Mix.PLAIN
    if changing == {Area.KEY}:
        return Mix.ORPHANED
    additive = all(ADDITIVE.match(a) for a in [*old_aggregates, *new_aggregates])
    if changing == {Area.AGGREGATES} and additive and len(old_aggregates) == len(new_aggregates) == 1:
        return Mix.ADDED
    raise CannotJudge(
        f"the trials of a change to {', '.join(sorted(changing))}",
        "the dynamic half models a key computed otherwise and one additive aggregate (count, sum) replaced by "
        "another; `upgrade` judges this change statically",
    )


def side(*when: str) -> str:
    """Which side of the switch a group's records are on: `before`, `after` or `both`."""
    kinds = set(when)
    return "both" if kinds == {"pre", "post"} else "before" if kinds == {"pre"} else "after"


def split(
    kept: Mapping[Span, Sequence[Record]], batches: Sequence[Batch], switch: int, keys: Sequence[str]
) -> dict[tuple[Span, tuple], tuple[tuple[Record, ...], tuple[Record, ...]]]:
    """Each window group's kept records, those of batches before `switch` and those from it on; a group is a
    window and the values of `keys`."""
    batch_of = {record: batch.id for batch in batches for record in batch.records}
    groups: dict[tuple[Span, tuple], tuple[list[Record], list[Record]]] = {}
    for span, records in kept.items():
        for record in records:
            pre, post = groups.setdefault((span, tuple(record.field(k) for k in keys)), ([], []))
            (pre if batch_of[record] < switch else post).append(record)
    return {group: (tuple(pre), tuple(post)) for group, (pre, post) in groups.items()}
