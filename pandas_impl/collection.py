"""Update collections in pandas: a frame of updates, advanced by compactions, grouped for reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from frontier_harness import HistoryLike, Implementation, Observation, vocabulary

from .orders import Order, order

# The one reading of a collections history that every observer shares, and its steps.
steps_of, CollectionLabel = vocabulary.time.collection_steps, vocabulary.time.CollectionLabel
Update, Read, Compact = (
    vocabulary.time.CollectionUpdate,
    vocabulary.time.CollectionRead,
    vocabulary.time.CollectionCompact,
)


class PandasCollections(Implementation):
    """Implements `observe_collections` for every time domain."""

    name = "pandas"

    def observe_collections(self, domain: Any, histories: Sequence[HistoryLike]) -> list[dict]:
        ord_ = order(domain)
        return [_observe(ord_, history) for history in histories]


def _observe(ord_: Order, history: HistoryLike) -> Observation:
    frame = pd.DataFrame(
        {"data": pd.Series(dtype=object), "time": pd.Series(dtype=object), "diff": pd.Series(dtype="int64")}
    )
    observed: Observation = {}
    for step in steps_of(history):
        match step:
            case Update(data=data, time=time, diff=diff):
                frame.loc[len(frame)] = [data, time, diff]
            case Read(step=at, time=time):
                mask = pd.Series([ord_.le(t, time) for t in frame["time"]], index=frame.index, dtype=bool)
                sums = frame[mask].groupby("data")["diff"].sum()
                observed[(at, CollectionLabel.READ)] = frozenset(
                    (d, int(n)) for d, n in sums.items() if n != 0
                )
            case Compact(since=since):
                frame["time"] = [_advance(ord_, t, since) for t in frame["time"]]
    totals = dict(frame.groupby(["data", "time"], sort=False)["diff"].sum()) if len(frame) else {}
    observed[(len(history.actions), CollectionLabel.FINAL)] = frozenset(
        (d, t, int(n)) for (d, t), n in totals.items() if n != 0
    )
    return observed


def _advance(ord_: Order, time: Any, since: Sequence[Any]) -> Any:
    joins = [j for f in since if (j := ord_.join(time, f)) is not None]
    result = joins[0] if joins else time
    for j in joins[1:]:
        result = ord_.meet(result, j)
    return result
