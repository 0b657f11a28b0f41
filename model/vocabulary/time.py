"""Words of the time capability's suites: update collections and the mutable antichain.

A *collections* history updates one collection (`data`, `time`, `diff`), reads its
contents at a `time`, and compacts it to a `since` frontier; it is observed at each
read (`(step, READ)`) and once at its end (`(len(actions), FINAL)`). A
*mutable_antichain* history is `update`s (`time`, `diff`) grouped into batches by
`apply`; each batch end is observed as the frontier's changes and the frontier.

>>> CollectionAction("compact") is CollectionAction.COMPACT
True
>>> sorted(CollectionAction)
['compact', 'read', 'update']
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import Word


class CollectionAction(Word):
    """A step of a collections history: `update(data, time, diff)`, `read(time)`, `compact(since)`."""

    UPDATE = "update"
    READ = "read"
    COMPACT = "compact"


class CollectionLabel(Word):
    """What a collections observation's `(step, label)` key holds: a read's contents or the final collection."""

    READ = "read"
    FINAL = "final"


class AntichainAction(Word):
    """A step of a mutable_antichain history: `update(time, diff)`, and `apply`, which ends a batch."""

    UPDATE = "update"
    APPLY = "apply"


class AntichainLabel(Word):
    """What a mutable_antichain observation's `(step, label)` key holds after a batch."""

    CHANGES = "changes"
    FRONTIER = "frontier"
