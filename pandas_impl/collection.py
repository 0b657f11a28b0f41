"""Update collections in pandas: a frame of updates, advanced by compactions, grouped for reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from frontier_harness import Arg, HistoryLike, Implementation, Observation, vocabulary

from .orders import Order, order

CollectionAction, CollectionLabel = vocabulary.time.CollectionAction, vocabulary.time.CollectionLabel


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
    for step, action in enumerate(history.actions):
        args = action.args
        if action.name == CollectionAction.UPDATE:
            frame.loc[len(frame)] = [args[Arg.DATA], args[Arg.TIME], args[Arg.DIFF]]
        elif action.name == CollectionAction.READ:
            mask = pd.Series(
                [ord_.le(t, args[Arg.TIME]) for t in frame["time"]], index=frame.index, dtype=bool
            )
            visible = frame[mask]
            sums = visible.groupby("data")["diff"].sum()
            observed[(step, CollectionLabel.READ)] = frozenset((d, int(n)) for d, n in sums.items() if n != 0)
        elif action.name == CollectionAction.COMPACT:
            frame["time"] = [_advance(ord_, t, args[Arg.SINCE]) for t in frame["time"]]
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
