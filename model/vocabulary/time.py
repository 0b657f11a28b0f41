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

from collections.abc import Mapping
from typing import Any

import attrs

from frontier_harness.model.vocabulary import Arg, Decoder, HistoryLike, Word, decoded


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


@attrs.frozen
class CollectionUpdate:
    """`update(data, time, diff)`: `diff` copies of `data` at `time`."""

    step: int
    data: Any
    time: Any
    diff: int

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> CollectionUpdate:
        return cls(step, args[Arg.DATA], args[Arg.TIME], args[Arg.DIFF])


@attrs.frozen
class CollectionRead:
    """`read(time)`: the collection's contents at `time`."""

    step: int
    time: Any

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> CollectionRead:
        return cls(step, args[Arg.TIME])


@attrs.frozen
class CollectionCompact:
    """`compact(since)`: every time advanced by the frontier `since` (a sequence of times)."""

    step: int
    since: tuple

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> CollectionCompact:
        return cls(step, tuple(args[Arg.SINCE]))


CollectionStep = CollectionUpdate | CollectionRead | CollectionCompact
COLLECTION_DECODERS: dict[str, Decoder[CollectionStep]] = {
    CollectionAction.UPDATE: CollectionUpdate.of,
    CollectionAction.READ: CollectionRead.of,
    CollectionAction.COMPACT: CollectionCompact.of,
}


def collection_steps(history: HistoryLike) -> tuple[CollectionStep, ...]:
    """A collections history's actions, decoded (`MalformedHistory` for one it does not name).

    >>> from types import SimpleNamespace as A
    >>> collection_steps(A(domain="total", actions=[A(name="update", args={"data": "a", "time": 0, "diff": 1}),
    ...                                             A(name="read", args={"time": 2})]))
    (CollectionUpdate(step=0, data='a', time=0, diff=1), CollectionRead(step=1, time=2))
    """
    return decoded("collections", history, COLLECTION_DECODERS)


@attrs.frozen
class AntichainBatch:
    """The updates `(time, diff)` of a mutable_antichain history applied together: those before an `apply`,
    or before the history's end; `step` is where the batch is applied (and observed)."""

    step: int
    updates: tuple[tuple[Any, int], ...]


def antichain_batches(history: HistoryLike) -> tuple[AntichainBatch, ...]:
    """A mutable_antichain history as its batches: one per `apply`, and one at the end (`MalformedHistory`
    for an action it does not name).

    >>> from types import SimpleNamespace as A
    >>> antichain_batches(A(domain="total", actions=[A(name="update", args={"time": 3, "diff": 1}),
    ...                                              A(name="apply", args={})]))
    (AntichainBatch(step=1, updates=((3, 1),)), AntichainBatch(step=2, updates=()))
    """
    steps = decoded("mutable antichain", history, ANTICHAIN_DECODERS)
    batches, pending = [], list[tuple[Any, int]]()
    for step, update in enumerate(steps):
        if update is None:
            batches.append(AntichainBatch(step, tuple(pending)))
            pending = []
        else:
            pending.append(update)
    return (*batches, AntichainBatch(len(steps), tuple(pending)))


ANTICHAIN_DECODERS: dict[str, Decoder[tuple[Any, int] | None]] = {
    AntichainAction.UPDATE: lambda step, args: (args[Arg.TIME], args[Arg.DIFF]),
    AntichainAction.APPLY: lambda step, args: None,
}
