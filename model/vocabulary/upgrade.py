"""Words of the upgrade capability: a change to a running stateful job, judged before it ships.

`frontier_harness.model.upgrade` compares what Spark keys a checkpoint on (the `Recorded` dicts of
`model.vocabulary.event_time`) for the old job and the new one and gives each `Difference` a `Verdict`, in
an `Area` of the query. The dynamic half marks the restart at which the new job takes over with
`UpgradeArg.UPGRADE`.

>>> Verdict.RESULTS_CHANGE.value
'restarts, results change'
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import Word


class Verdict(Word):
    """What a difference between the old job and the new one does on the restart."""

    RESTART_FAILS = "restart fails"
    RESULTS_CHANGE = "restarts, results change"
    SAFE = "safe"


class Area(Word):
    """Where in the query a difference is."""

    SOURCES = "sources"
    SOURCE = "source"
    OPERATORS = "stateful operators"
    KEY = "state key"
    VALUE = "state value"
    STATE = "operator state"
    WINDOW = "window"
    AGGREGATES = "aggregates"
    INPUT = "operator input"
    WATERMARK = "watermark"
    SETTING = "setting"
    OUTPUT = "output"
    OUTPUT_MODE = "output mode"


class UpgradeArg(Word):
    """A `restart` action's argument: the query restarts with the new job (the upgrade's switch)."""

    UPGRADE = "upgrade"
