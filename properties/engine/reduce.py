"""Delta-debugging reduction of a failing history, with the implementation in the loop.

Each round checks all its candidates in ONE batched call (one Spark job), so
reducing a screening-lane failure costs a few jobs, not hundreds.

>>> from frontier_harness.properties.engine.history import Action, History
>>> h = History("total", tuple(Action("update", {"n": i}) for i in range(10)))
>>> fails = lambda hs: [any(a.args["n"] == 7 for a in x.actions) for x in hs]
>>> [a.args["n"] for a in reduce_history(h, fails).actions]
[7]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from frontier_harness.properties.engine.history import History

StillFails = Callable[[Sequence[History]], list[bool]]


def reduce_history(
    history: History,
    still_fails: StillFails,
    deadline: float = float("inf"),
    improved: Callable[[History], None] | None = None,
) -> History:
    """A 1-minimal sub-history (removing any one action makes it pass) that still fails.

    At `deadline` (a `time.monotonic()` reading) it stops with the smallest failing one so far;
    `improved` is told each smaller failing one as it is found.
    """
    chunks = 2
    while len(history.actions) > 1 and time.monotonic() < deadline:
        n = len(history.actions)
        size = max(1, n // chunks)
        spans = [range(i, min(n, i + size)) for i in range(0, n, size)]
        candidates = [history.without(span) for span in spans]
        verdicts = still_fails(candidates)
        smaller = next((c for c, bad in zip(candidates, verdicts) if bad), None)
        if smaller is not None:
            history, chunks = smaller, max(2, chunks - 1)
            if improved is not None:
                improved(history)
        elif size == 1:
            break
        else:
            chunks = min(n, chunks * 2)
    return history
