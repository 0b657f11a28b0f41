"""ttl_spark_state histories run on one streaming query with a `transformWithState` TTL store.

A batch of histories shares one query, keyed by `(history_id, key)`: the histories run in
lockstep, the `n`-th trigger of every history in the query's `n`-th micro-batch (a round).
A round waits the longest `wait_ms` its histories ask for (real time: PySpark cannot set
Spark's clock), writes its requests as one JSON file into the query's source directory
(a file source reading one file a batch, no-data batches off, so round `n` is batch `n`),
and waits until the query has processed it. Every round also holds one probe request (a get
of no history's key), so every batch answers at least once: its `current_timestamp()` is
observed whether or not a history asked a get.

A restart is a restart of the driver: the rounds run in stretches (`stretches`), the first in the
harness's own session, each later one in a driver process of its own with a JVM of its own
(`frontier_harness.spark_impl.ttl.state.driver`), started from the checkpoint. A stretch begins at
a round where any history restarts. A round where any history crashes runs alone in a driver that
is SIGKILLed after its sink wrote the batch's answers, before Spark commits (a crash after the
sink); the next stretch's driver runs that batch again, with the offsets and the clock it
journaled. The kill counts only when it is seen (the marker, the death by SIGKILL); a driver that
exits without reaching it is infrastructure (exit 3).

The query is `query.StateQuery`; its answers are read back after the last round, each batch's
clock is its `batchTimestampMs`. Observations, per trigger step: `get` (`(index, key, value)`), `clock`, `now` (the batch's probe),
`run` (which start of the query planned the batch, reading its clock: 0 the harness's, then each
driver's; a batch run again after a crash keeps the clock it journaled), and `killed`
(`("after_sink",)` when a driver running the batch was seen killed there).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.model.vocabulary.ttl import StateAction, StateArg, StateLabel
from frontier_harness.spark_impl.session import spark
from frontier_harness.spark_impl.ttl.state.driver import DRIVER, Driver, launch
from frontier_harness.spark_impl.ttl.state.processor import TtlProcessor
from frontier_harness.spark_impl.ttl.state.query import StateQuery, batch_timestamps, run_rounds

NO_HISTORY = -1  # the probe: every round's batch answers a get of this history id (`_requests`)


@attrs.frozen
class Round:
    """One trigger of one history: its step, requests, wait, crash, and whether a restart comes first."""

    step: int
    requests: tuple[dict, ...]
    wait_ms: int
    crash: bool
    restart: bool


def rounds(history: HistoryLike) -> list[Round]:
    """The history's triggers, each with the requests since the one before."""
    found, pending, restart = [], [], False
    for step, action in enumerate(history.actions):
        args = action.args
        if action.name in (StateAction.PUT, StateAction.GET, StateAction.DELETE):
            pending.append(
                {"op": str(action.name), "key": args[StateArg.KEY], "value": args.get(StateArg.VALUE)}
            )
        elif action.name == StateAction.RESTART:
            restart = True
        elif action.name == StateAction.TRIGGER:
            crash = bool(args.get(StateArg.CRASH))
            found.append(Round(step, tuple(pending), args.get(StateArg.WAIT_MS, 0), crash, restart))
            pending, restart = [], False
    return found


def ttl_of(history: HistoryLike) -> int:
    """The TTL the history's `open` names."""
    return next(a.args[StateArg.TTL_MS] for a in history.actions if a.name == StateAction.OPEN)


def observe_ttl_spark_state(
    domain: object, histories: Sequence[HistoryLike], processor: type = TtlProcessor, driver: str = DRIVER
) -> list[dict]:
    """Every history's observations; one query per TTL among them (`processor` and the drivers' module
    `driver` are swapped by planted bugs)."""
    observed: list[dict] = [{} for _ in histories]
    by_ttl: dict[int, list[int]] = {}
    for i, history in enumerate(histories):
        by_ttl.setdefault(ttl_of(history), []).append(i)
    for ttl, indices in by_ttl.items():
        found = run_query([histories[i] for i in indices], processor, ttl, driver)
        for i, observation in zip(indices, found):
            observed[i] = observation
    return observed


@attrs.frozen
class Stretch:
    """Rounds `first` to `last` (exclusive) run by one start of the query: the harness's session (`run` 0)
    or a driver of its own; `killed` when it is one crash round, its driver SIGKILLed after the sink."""

    run: int
    first: int
    last: int
    killed: bool = False

    @property
    def range(self) -> range:
        return range(self.first, self.last)


def stretches(plans: Sequence[Sequence[Round]]) -> list[Stretch]:
    """The rounds cut where any history restarts or crashes (see the module).

    >>> r = lambda restart=False, crash=False: Round(0, (), 0, crash, restart)
    >>> stretches([[r(), r(restart=True), r(crash=True), r()]])
    [Stretch(run=0, first=0, last=1, killed=False), Stretch(run=1, first=1, last=2, killed=False), Stretch(run=2, first=2, last=3, killed=True), Stretch(run=3, first=3, last=4, killed=False)]
    """
    count = max((len(p) for p in plans), default=0)
    found: list[Stretch] = []
    first = 0
    for number in range(count):
        now = [p[number] for p in plans if number < len(p)]
        if any(r.restart for r in now) and number > first:
            found.append(Stretch(len(found), first, number))
            first = number
        if any(r.crash for r in now):
            if number > first:
                found.append(Stretch(len(found), first, number))
            found.append(Stretch(len(found), number, number + 1, killed=True))
            first = number + 1
    if first < count or not found:
        found.append(Stretch(len(found), first, count))
    return found


def run_query(
    histories: Sequence[HistoryLike],
    processor: type,
    ttl_ms: int,
    driver: str = DRIVER,
    keep: Path | None = None,
) -> list[dict]:
    """The histories in lockstep on one query, in stretches (see the module): their observations. With
    `keep`, the query's directory (`checkpoint/`, `in/`, `answers/`) is `keep` and is left there."""
    plans = [rounds(h) for h in histories]
    root = keep or Path(tempfile.mkdtemp(prefix="frontier-harness-ttl-state-"))
    root.mkdir(parents=True, exist_ok=True)
    planned: dict[int, int] = {}  # batch -> the start of the query that planned it (read its clock)
    killed: set[int] = set()  # batches whose driver was seen killed after their sink
    order = stretches(plans)
    drivers: dict[int, Driver] = {}  # launched a stretch ahead: its JVM starts while the one before runs

    def ahead(i: int) -> None:
        if i < len(order) and (order[i].run > 0 or order[i].killed):
            drivers[i] = launch(root, processor, ttl_ms, _batches(plans, order[i]), order[i].killed, driver)
        elif i == len(order) and order[-1].killed:  # the last round crashed: a driver runs it again
            drivers[i] = launch(root, processor, ttl_ms, [], module=driver)

    try:
        ahead(0)
        for i, stretch in enumerate([*order, Stretch(len(order), 0, 0)]):  # then a last crash's re-run
            ahead(i + 1)
            if i in drivers:
                drivers[i].go()
                drivers.pop(i).wait()
            elif i < len(order):
                _in_process(root, processor(ttl_ms), _batches(plans, stretch))
            planned |= dict.fromkeys(stretch.range, stretch.run)
            killed |= set(stretch.range) if stretch.killed else set()
        return _observations(root, plans, planned, killed)
    finally:
        for left in drivers.values():
            left.close()
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def _batches(plans: Sequence[Sequence[Round]], stretch: Stretch) -> list[list]:
    """The stretch's rounds as a driver runs them: `[number, wait_ms, rows]`, the longest wait asked."""
    return [[n, max(p[n].wait_ms for p in plans if n < len(p)), _requests(plans, n)] for n in stretch.range]


def _in_process(root: Path, processor: Any, batches: Sequence[Sequence]) -> None:
    query = StateQuery(root, processor)
    try:
        query.start()
        run_rounds(query, batches)
    finally:
        query.stop()


def _requests(plans: Sequence[Sequence[Round]], number: int) -> list[dict]:
    """Round `number`'s requests of every history, and the probe (a get of no history's key)."""
    rows = [
        {**request, "history_id": h, "seq": seq, "step": plan[number].step}
        for h, plan in enumerate(plans)
        if number < len(plan)
        for seq, request in enumerate(plan[number].requests)
    ]
    probe = {"history_id": NO_HISTORY, "key": "", "seq": 0, "op": StateAction.GET, "value": None}
    return [*rows, {**probe, "step": number}]


def _observations(
    root: Path, plans: list[list[Round]], planned: dict[int, int], killed: set[int]
) -> list[dict]:
    clocks = batch_timestamps(root / "checkpoint")
    answers = spark().read.parquet(str(root / "answers")).toArrow().to_pylist()
    observed: list[dict] = [{} for _ in plans]
    gets: dict[tuple[int, int], set] = {}
    nows: dict[int, set] = {}  # batch -> the probe's now
    for row in answers:
        if row["history_id"] == NO_HISTORY:
            nows.setdefault(row["step"], set()).add((row["now"],))
        else:
            gets.setdefault((row["history_id"], row["step"]), set()).add(
                (row["seq"], row["key"], row["value"])
            )
    for h, plan in enumerate(plans):
        for number, trigger in enumerate(plan):
            at = trigger.step
            observed[h][(at, StateLabel.CLOCK)] = frozenset({(clocks[number],)})
            observed[h][(at, StateLabel.GET)] = frozenset(gets.get((h, at), set()))
            observed[h][(at, StateLabel.NOW)] = frozenset(nows.get(number, set()))
            observed[h][(at, StateLabel.RUN)] = frozenset({(planned[number],)})
            if number in killed:
                observed[h][(at, StateLabel.KILLED)] = frozenset({(CrashPoint.AFTER_SINK,)})
    return observed
