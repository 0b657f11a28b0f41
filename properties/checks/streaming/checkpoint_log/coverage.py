"""What each law of a checkpoint history rests on: the count of entries it looked at, by law.

`validate-checkpoint` shows a law "held" only over a count that is not zero; a law with
nothing to look at in this checkpoint (no file sink, no watermark, a stateless query) is
"not applicable", named, and neither fails nor counts as held.

>>> from frontier_harness.properties.engine.history import Action, History
>>> log = History("total", [Action("offsets", {"batch": 0, "source": "0", "domain": "total", "offsets": [1],
...     "watermark_ms": 0}), Action("commit", {"batch": 0})])
>>> rests_on(log)["watermark monotone"], rests_on(log)["sink once"]
((1, 'batch watermarks'), (0, 'sink entries'))
"""

from __future__ import annotations

from collections.abc import Callable

from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.batch_metadata import (
    PINNED_SETTING,
    TIMESTAMP_MONOTONE,
    WATERMARK_AS_COMMITTED,
    WATERMARK_MONOTONE,
)
from frontier_harness.properties.checks.streaming.checkpoint_log.state_laws import (
    STATE_EVICTED,
    STATE_PARTITIONS,
    STATE_REBUILDABLE,
    STATE_VERSION_MADE,
)
from frontier_harness.properties.engine.history import Action, History

Count = Callable[[list[Action]], int]


def _named(name: str, key: str | None = None) -> Count:
    return lambda actions: sum(a.name == name and (key is None or key in a.args) for a in actions)


def _streams(actions: list[Action]) -> int:
    return sum(a.name == LogAction.OFFSETS and LogArg.DOMAIN in a.args for a in actions)


def _batches(actions: list[Action]) -> int:
    return len({a.args[LogArg.BATCH] for a in actions if a.name == LogAction.OFFSETS})


def _listed_files(actions: list[Action]) -> int:
    """The distinct data files the sink's log lists."""
    return len(
        {
            path
            for a in actions
            if a.name == LogAction.SINK and isinstance(a.args.get(LogArg.FILES), list)
            for path in a.args[LogArg.FILES]
        }
    )


def _handed_on(actions: list[Action]) -> int:
    """Batches with a watermark whose batch before is committed with a next watermark."""
    handed = {
        a.args[LogArg.BATCH]
        for a in actions
        if a.name == LogAction.COMMIT and LogArg.NEXT_WATERMARK_MS in a.args
    }
    return sum(
        a.name == LogAction.OFFSETS and LogArg.WATERMARK_MS in a.args and a.args[LogArg.BATCH] - 1 in handed
        for a in actions
    )


def _checked_operators(actions: list[Action]) -> int:
    return sum(a.name == LogAction.STATE_OPERATOR and LogArg.UNCHECKED not in a.args for a in actions)


# law -> (what it rests on, how many of them a history holds)
LAWS: dict[str, tuple[str, Count]] = {
    "antichain": ("stream offsets", _streams),
    "monotone": ("stream offsets", _streams),
    "offsets no gap": ("offsets entries", _batches),
    "offsets purge": ("offsets entries", _batches),
    "commit after offsets": ("commits", _named(LogAction.COMMIT)),
    "one uncommitted batch": ("offsets entries", _batches),
    WATERMARK_MONOTONE: ("batch watermarks", _named(LogAction.OFFSETS, LogArg.WATERMARK_MS)),
    WATERMARK_AS_COMMITTED: ("watermarks handed on by a commit", _handed_on),
    TIMESTAMP_MONOTONE: ("batch timestamps", _named(LogAction.OFFSETS, LogArg.TIMESTAMP_MS)),
    PINNED_SETTING: ("batches with settings", _named(LogAction.OFFSETS, LogArg.CONF)),
    "sink once": ("sink entries", _named(LogAction.SINK)),
    "sink no gap": ("sink entries", _named(LogAction.SINK)),
    "sink purge": ("sink entries", _named(LogAction.SINK)),
    "sink after offsets": ("sink entries", _named(LogAction.SINK)),
    "sink before commit": ("sink entries", _named(LogAction.SINK)),
    "file once": ("data files listed", _listed_files),
    "compaction complete": ("data files listed", _listed_files),
    STATE_VERSION_MADE: ("state partitions", _named(LogAction.STATE)),
    STATE_REBUILDABLE: ("state partitions", _named(LogAction.STATE)),
    STATE_PARTITIONS: ("state operators", _checked_operators),
    STATE_EVICTED: (
        "stores' rows after a batch with a window or an expiry",
        _named(LogAction.STATE_ROWS, LogArg.OLDEST_BOUND_MS),
    ),
}


def rests_on(history: History) -> dict[str, tuple[int, str]]:
    """Every law, in order, with the count of entries it looked at in `history` and what they are."""
    actions = list(history.actions)
    return {law: (count(actions), unit) for law, (unit, count) in LAWS.items()}
