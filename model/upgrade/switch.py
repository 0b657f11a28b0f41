"""What a window aggregation's result holds after the new job took over at a switch batch: the rule the
dynamic half judges the trials by.

The records the model keeps for each window (`model.event_time.stateful.aggregate`, by the watermarks,
which an upgrade this model judges keeps) split at the switch: those of batches the old job committed,
and those of later batches (a batch the old job logged but did not commit is run by the new job). Spark
finds a group's state by its window and the value of its key (the grouping expressions besides the
window, in order): a record before the switch is in the old job's state under its old key's value, one
from the switch on is filed by the new job under its new key's value. A window group (a window and a
key's value) is then:

- held only before the switch: the old job's row over its records stays (nothing updates it);
- held only after: the new job's row over its records;
- held on both sides (in state at the switch, updated after), by the `Mix` the upgrade's differences make:
  `PLAIN` (a safe upgrade: every record's key is the same under both jobs): the new job's row over all its
  records; `REKEYED` (a key computed otherwise): the same, the old job's records being those its old key
  filed under the value the new key meets (the old groups no new value meets are orphaned: held only
  before); `ADDED` (an additive aggregate, `count` or `sum`, replaced by another over a buffer of the same
  type: the new function updates the old buffer): the old job's value over the records before the switch
  plus the new job's over those after.

A `REKEYED` group whose old records the new key would file elsewhere (a swap of `key` and `data` that
meets `(a, b)` after the switch with `(b, a)` before) continues a buffer no batch job over records makes:
`switch_rows` cannot judge it.

>>> from frontier_harness.model.upgrade.difference import Comparison, Difference
>>> d = Difference("aggregates", "count(1) -> sum(offset)", Verdict.RESULTS_CHANGE, "", "")
>>> mix_of(Comparison((d,), ()), ["count(1)"], ["sum(offset)"])
<Mix.ADDED: 'added'>
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.event_time.stateful import Batch, Record, Span
from frontier_harness.model.upgrade.difference import Comparison
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

ADDITIVE = re.compile(r"^(count|sum)\(.*\)$")


class Mix(enum.StrEnum):
    """How a group held on both sides of the switch mixes the two jobs (see the module docstring)."""

    PLAIN = "plain"
    REKEYED = "rekeyed"
    ADDED = "added"


def mix_of(comparison: Comparison, old_aggregates: Sequence[str], new_aggregates: Sequence[str]) -> Mix:
    """The mix of a restart that does not fail; `CannotJudge` for a change the dynamic half has no rule for."""
    changing = {d.area for d in comparison.differences if d.verdict is Verdict.RESULTS_CHANGE}
    if not changing:
        return Mix.PLAIN
    if changing == {Area.KEY}:
        return Mix.REKEYED
    additive = all(ADDITIVE.match(a) for a in [*old_aggregates, *new_aggregates])
    if changing == {Area.AGGREGATES} and additive and len(old_aggregates) == len(new_aggregates) == 1:
        return Mix.ADDED
    raise CannotJudge(
        f"the trials of a change to {', '.join(sorted(changing))}",
        "the dynamic half models a key computed otherwise and one additive aggregate (count, sum) replaced by "
        "another; `upgrade` judges this change statically",
    )


def split(
    kept: Mapping[Span, Sequence[Record]],
    batches: Sequence[Batch],
    switch: int,
    before: Callable[[Record], tuple],
    after: Callable[[Record], tuple],
) -> dict[tuple[Span, tuple], tuple[tuple[Record, ...], tuple[Record, ...]]]:
    """Each window group's kept records, those of batches before `switch` and those from it on; a group is a
    window and a key's value: `before(record)` for a record before the switch, `after(record)` from it on.

    >>> r = lambda key, t: Record(key, t, "d", 0, t)
    >>> batches = (Batch(0, (r("A", 1),)), Batch(1, (r("a", 2),)))
    >>> lower = lambda record: (record.key.lower(),)
    >>> found = split({Span(0, 10): [r("A", 1), r("a", 2)]}, batches, 1, lower, lower)
    >>> {value: ([r.key for r in pre], [r.key for r in post]) for (_, value), (pre, post) in found.items()}
    {('a',): (['A'], ['a'])}
    """
    batch_of = {record: batch.id for batch in batches for record in batch.records}
    groups: dict[tuple[Span, tuple], tuple[list[Record], list[Record]]] = {}
    for span, records in kept.items():
        for record in records:
            ahead = batch_of[record] < switch
            pre, post = groups.setdefault((span, (before if ahead else after)(record)), ([], []))
            (pre if ahead else post).append(record)
    return {group: (tuple(pre), tuple(post)) for group, (pre, post) in groups.items()}
