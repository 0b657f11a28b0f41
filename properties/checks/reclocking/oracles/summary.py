"""The unordered transactional summary restated as a fold of its input (never `frontier_harness.model.reclocking.summary` or `frontier_harness.model.reclocking.remap`).

`reclocking.md`, practical addendum, the first (unordered) pair of collections: at each
IntoTime `t` the records *covered* are those up through the remap's FromTime at `t`;
the output holds the data of every transaction complete on covered records (its
metadata record and all `size` data records covered), published at the first IntoTime
it was; TEMP holds every other covered record. A restart from `R(it)` and the summary
at `it` must give the same summaries after `it`.

Written for the restart histories' vocabulary (`frontier_harness.properties.checks.reclocking.strategies.reclocking`):
`mint {upper, tick}` sets the FromTime at `tick` when `tick` is past the last one taken
(the first taken tick is at least 1; the FromTime at 0 is the minimum; once a closed
`()` upper is taken, nothing more is), and the summaries are observed at 0 and at
every tick where that FromTime changed. A data record lives in the first coordinate
of FromTime `product(D, total)`, a metadata record in the second: a record at `x` is
covered by a frontier when no element's coordinate on its side is `<= x`.

>>> from frontier_harness.properties.engine.history import Action, History
>>> h = History("product(total,total)", (
...     Action("txn", {"txn": "t0", "size": 1, "time": (0, 0)}),
...     Action("data", {"txn": "t0", "payload": "t0:0", "time": (2, 0)}),
...     Action("mint", {"upper": ((1, 1),), "tick": 1}), Action("mint", {"upper": ((3, 1),), "tick": 2}),
...     Action("crash", {"tick": 1})))
>>> sorted(observe(h)[(5, "unordered output")])
[(2, 't0:0', 2, 1)]
>>> sorted(observe(h)[(5, "unordered temp")])
[(1, 'txn', 't0', None, 1, 0, 1)]
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.reclocking import (
    ReclockArg,
    RestartAction,
    Summarizer,
    SummaryLabel,
    SummaryPart,
    SummaryRun,
    summary_label,
)
from frontier_harness.properties.engine.history import History

Record = tuple[str, str, Any, Any, Any]  # (kind, txn, payload, size, time): the observations' temp row


def records(history: History) -> list[Record]:
    """The history's data and metadata records, each at its own coordinate of FromTime."""
    out: list[Record] = []
    for a in history.actions:
        args = a.args
        if a.name == RestartAction.DATA:
            out.append(
                (RestartAction.DATA, args[ReclockArg.TXN], args[ReclockArg.PAYLOAD], None, args[Arg.TIME][0])
            )
        elif a.name == RestartAction.TXN:
            out.append(
                (RestartAction.TXN, args[ReclockArg.TXN], None, args[ReclockArg.SIZE], args[Arg.TIME][1])
            )
    return out


def frontiers(history: History) -> list[tuple[int, frozenset]]:
    """`(t, FromTime at t)` at 0 and at every taken tick that changed it, in order."""
    domain = history.time_domain
    steps, last, closed = [(0, frozenset({domain.minimum}))], 0, False
    for a in history.actions:
        if a.name != RestartAction.MINT or closed or a.args[ReclockArg.TICK] <= last:
            continue
        tick: int = a.args[ReclockArg.TICK]
        upper, last, closed = frozenset(a.args[Arg.UPPER]), tick, not a.args[Arg.UPPER]
        if upper != steps[-1][1]:
            steps.append((tick, upper))
    return steps


def covered(domain: Any, frontier: frozenset, record: Record) -> bool:
    """A record at `x` is up through `frontier` when no element's coordinate on its side is `<= x`."""
    side = 0 if record[0] == RestartAction.DATA else 1
    coordinate = (domain.a, domain.b)[side]
    return not any(coordinate.le(f[side], record[4]) for f in frontier)


def complete(pool: list[Record]) -> set[str]:
    """Transactions whose metadata record and all `size` of their data records are in `pool`."""
    data = Counter(r[1] for r in pool if r[0] == RestartAction.DATA)
    return {r[1] for r in pool if r[0] == RestartAction.TXN and data[r[1]] == r[3]}


def fold(history: History) -> list[tuple[int, frozenset, frozenset]]:
    """`(t, output, temp)` at every step: output `(payload, published at, count)`, temp `(*record, count)`."""
    domain, inputs, published = history.time_domain, records(history), dict[str, int]()
    out = []
    for t, frontier in frontiers(history):
        pool = [r for r in inputs if covered(domain, frontier, r)]
        done = complete(pool)
        for txn in done:
            published.setdefault(txn, t)
        output = Counter((r[2], published[r[1]]) for r in pool if r[0] == RestartAction.DATA and r[1] in done)
        temp = Counter(r for r in pool if r[1] not in done)
        out.append(
            (t, frozenset((*k, n) for k, n in output.items()), frozenset((*r, n) for r, n in temp.items()))
        )
    return out


def crash(history: History) -> int | None:
    """The history's crash tick (None: a reduced history without one)."""
    return next((a.args[ReclockArg.TICK] for a in history.actions if a.name == RestartAction.CRASH), None)


def observe(history: History) -> dict[tuple[int, str], frozenset]:
    """The steps, and the unordered summaries at every step, of the run and (after `it`) of the restart;
    a label with nothing in it is left out (as the model leaves it out)."""
    end, it = len(history.actions), crash(history)
    summaries = fold(history)
    observed = {(end, SummaryLabel.STEPS): frozenset((t,) for t, _, _ in summaries)}
    runs = [(SummaryRun.RUN, summaries)]
    if it is not None:
        runs.append((SummaryRun.RESTARTED, [s for s in summaries if s[0] > it]))
    for run, steps in runs:
        output, temp = (summary_label(run, Summarizer.UNORDERED, part) for part in SummaryPart)
        observed[(end, output)] = frozenset((t, *u) for t, rows, _ in steps for u in rows)
        observed[(end, temp)] = frozenset((t, *r) for t, _, rows in steps for r in rows)
    return {key: rows for key, rows in observed.items() if rows}


LABELS = (
    SummaryLabel.STEPS,
    SummaryLabel.UNORDERED_OUTPUT,
    SummaryLabel.UNORDERED_TEMP,
    SummaryLabel.RESTARTED_UNORDERED_OUTPUT,
    SummaryLabel.RESTARTED_UNORDERED_TEMP,
)
