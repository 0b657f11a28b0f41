"""ttl_spark_state histories run on one streaming query with a `transformWithState` TTL store.

A batch of histories shares one query, keyed by `(history_id, key)`: the histories run in
lockstep, the `n`-th trigger of every history in the query's `n`-th micro-batch (a round).
A round waits the longest `wait_ms` its histories ask for (real time: PySpark cannot set
Spark's clock), writes its requests as one JSON file into the query's source directory
(a file source reading one file a batch, no-data batches off, so round `n` is batch `n`),
and waits until the query has processed it. A round whose history asks for a `crash` arms
the sink to fail after writing the batch's answers, before Spark commits it: the query
stops, is started again from its checkpoint and re-runs the batch with the offsets and
the clock it journaled. A `restart` stops and starts the query before its round.

The query is its own session (`spark.newSession()`) with the RocksDB provider, which TTL
state needs; `timeMode="ProcessingTime"`; answers, with `current_timestamp()` as the batch
saw it, go through `foreachBatch` to Parquet, a directory per batch (a re-run overwrites it),
and are read back after the last round; each batch's clock is its `batchTimestampMs`.
Observations, per trigger step: `get` (`(index, key, value)`), `clock`, `now`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.ingestion import CrashPoint
from frontier_harness.model.vocabulary.ttl import StateAction, StateArg, StateLabel
from frontier_harness.spark_impl.session import spark
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.ttl.state.processor import ANSWERS, REQUESTS, TtlProcessor

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
SETTINGS = {
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.noDataMicroBatches.enabled": "false",
}
NO_HISTORY = -1  # a round no history sends a request in still runs a batch: one row of this history id
RETRIES = 3  # a Python worker that did not connect back within Spark's 10 s (a loaded machine): start again
NO_CONNECT = "Python worker failed to connect back"
Processor = Callable[[int], Any]


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
    domain: object, histories: Sequence[HistoryLike], processor: Processor = TtlProcessor
) -> list[dict]:
    """Every history's observations; one query per TTL among them (`processor` is swapped by planted bugs)."""
    observed: list[dict] = [{} for _ in histories]
    by_ttl: dict[int, list[int]] = {}
    for i, history in enumerate(histories):
        by_ttl.setdefault(ttl_of(history), []).append(i)
    for ttl, indices in by_ttl.items():
        found = run_query([histories[i] for i in indices], processor(ttl))
        for i, observation in zip(indices, found):
            observed[i] = observation
    return observed


class StateQuery:
    """The query over `root/in` (requests, a JSON file a round), started and restarted from
    `root/checkpoint`, answering into `root/answers/batch=N`; a second `StateQuery` over the same root
    (another driver process, say) goes on from the checkpoint."""

    def __init__(self, root: Path, processor: Any):
        self.root, self.processor = root, processor
        self.session = spark().newSession()
        for key, value in SETTINGS.items():
            self.session.conf.set(key, value)
        (root / "in").mkdir(parents=True, exist_ok=True)
        self.running: Any = None

    def start(self) -> None:
        stream = (
            self.session.readStream.schema(REQUESTS)
            .option("maxFilesPerTrigger", 1)
            .json(str(self.root / "in"))
        )
        answered = (
            stream.groupBy("history_id", "key")
            .transformWithState(self.processor, ANSWERS, "Append", "ProcessingTime")
            .withColumn("now", F.unix_millis(F.current_timestamp()))
        )
        self.running = (
            answered.writeStream.foreachBatch(_sink(self.root))
            .option("checkpointLocation", str(self.root / "checkpoint"))
            .trigger(processingTime="50 milliseconds")
            .start()
        )

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None

    def run(self, number: int, requests: list[dict], crash: bool) -> None:
        """Round `number`'s batch, processed; a crash fails it once, then the query restarts and re-runs it (as
        it does, up to `RETRIES` times, when a Python worker did not connect back in time)."""
        tmp = self.root / f".round-{number}.json"
        tmp.write_text("\n".join(json.dumps(r) for r in requests))
        if crash:
            faults.arm(self.root, CrashPoint.AFTER_SINK)
        os.replace(tmp, self.root / "in" / f"round-{number:05d}.json")
        for attempt in range(RETRIES + 1):
            try:
                self.running.processAllAvailable()
                break
            except (
                StreamingQueryException
            ) as exc:  # the query stopped: it re-runs the batch from its checkpoint
                if not (crash or NO_CONNECT in str(exc)) or attempt == RETRIES:
                    raise
                crash = False
                self.running = None
                self.start()
        faults.disarm(self.root)


def _sink(root: Path) -> Callable[[Any, int], None]:
    def write(batch: Any, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(str(root / "answers" / f"batch={batch_id}"))
        faults.fire(root, CrashPoint.AFTER_SINK)

    return write


def run_query(histories: Sequence[HistoryLike], processor: Any) -> list[dict]:
    """The histories in lockstep on one query: their observations."""
    plans = [rounds(h) for h in histories]
    root = Path(tempfile.mkdtemp(prefix="frontier-harness-ttl-state-"))
    query = StateQuery(root, processor)
    try:
        query.start()
        for number in range(max((len(p) for p in plans), default=0)):
            now = [p[number] for p in plans if number < len(p)]
            if any(r.restart for r in now):
                query.stop()
                query.start()
            time.sleep(max(r.wait_ms for r in now) / 1000)
            query.run(number, _requests(plans, number), any(r.crash for r in now))
        query.stop()
        return _observations(query, plans)
    finally:
        query.stop()
        shutil.rmtree(root, ignore_errors=True)


def _requests(plans: list[list[Round]], number: int) -> list[dict]:
    rows = [
        {**request, "history_id": h, "seq": seq, "step": plan[number].step}
        for h, plan in enumerate(plans)
        if number < len(plan)
        for seq, request in enumerate(plan[number].requests)
    ]
    return rows or [
        {"history_id": NO_HISTORY, "key": "", "seq": 0, "op": StateAction.PUT, "value": "", "step": 0}
    ]


def batch_timestamps(checkpoint: Path) -> dict[int, int]:
    """Each batch's `batchTimestampMs`, from the second line of `offsets/N`."""
    return {
        int(f.name): json.loads(f.read_text().splitlines()[1])["batchTimestampMs"]
        for f in (checkpoint / "offsets").iterdir()
        if f.name.isdigit()
    }


def _observations(query: StateQuery, plans: list[list[Round]]) -> list[dict]:
    clocks = batch_timestamps(query.root / "checkpoint")
    answers = query.session.read.parquet(str(query.root / "answers")).where(F.col("history_id") != NO_HISTORY)
    observed: list[dict] = [{} for _ in plans]
    gets: dict[tuple[int, int], set] = {}
    nows: dict[tuple[int, int], set] = {}
    for row in answers.toArrow().to_pylist():
        at = (row["history_id"], row["step"])
        gets.setdefault(at, set()).add((row["seq"], row["key"], row["value"]))
        nows.setdefault(at, set()).add((row["now"],))
    for h, plan in enumerate(plans):
        for number, trigger in enumerate(plan):
            at = (h, trigger.step)
            observed[h][(trigger.step, StateLabel.CLOCK)] = frozenset({(clocks[number],)})
            observed[h][(trigger.step, StateLabel.GET)] = frozenset(gets.get(at, set()))
            if at in nows:
                observed[h][(trigger.step, StateLabel.NOW)] = frozenset(nows[at])
    return observed
