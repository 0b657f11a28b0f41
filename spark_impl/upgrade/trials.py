"""The upgrade suite's trials: the stateful suite's, the old job's query switched to the new job at each
history's `restart {upgrade}` (`frontier_harness.spark_impl.streaming.trial.run_trials`' `upgrade_to`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.spark_impl.streaming.trial import run_trials


def observe_upgrade(domain: Any, histories: Sequence[HistoryLike], old: str, new: str) -> list[dict]:
    """One trial per history: the `old` job's stateful query, the `new` job from the upgrade restart on."""
    return run_trials(histories, job=old, stateful=True, upgrade_to=new)
