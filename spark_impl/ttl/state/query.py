"""The TTL state query: requests in, answers out, over a `transformWithState` value state with a TTL.

`StateQuery(root, processor)` reads `root/in` (the requests, a JSON file a round, one file a batch: a file
source with `maxFilesPerTrigger` 1, no-data batches off), groups them by `(history_id, key)` into the
processor on its own session (`session.new_session()`, the RocksDB provider, which TTL state needs,
`timeMode="ProcessingTime"`), and writes each batch's answers, with `current_timestamp()` as the batch saw
it, through `foreachBatch` to Parquet, `root/answers/batch=N` (a re-run overwrites it). The sink fires the
`after_sink` crash point (`spark_impl.streaming.faults`) after it wrote. Any driver runs it: the harness's
session, or a driver process of its own (`driver`) started from the checkpoint at `root/checkpoint`.
Each batch's clock is its `batchTimestampMs` (`batch_timestamps`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl.session import new_session
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.ttl.state.processor import ANSWERS, REQUESTS

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
SETTINGS = {
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.noDataMicroBatches.enabled": "false",
}
RETRIES = 3  # a Python worker that did not connect back within Spark's 10 s (a loaded machine): start again
NO_CONNECT = "Python worker failed to connect back"


class StateQuery:
    """The query over `root/in` (requests, a JSON file a round), started and restarted from
    `root/checkpoint`, answering into `root/answers/batch=N`; a second `StateQuery` over the same root
    (another driver process, say) goes on from the checkpoint."""

    def __init__(self, root: Path, processor: Any):
        self.root, self.processor = root, processor
        self.session = new_session()
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

    def run(self, number: int, requests: list[dict]) -> None:
        """Round `number`'s batch, processed."""
        tmp = self.root / f".round-{number}.json"
        tmp.write_text("\n".join(json.dumps(r) for r in requests))
        os.replace(tmp, self.root / "in" / f"round-{number:05d}.json")
        self.drain()

    def drain(self) -> None:
        """Everything the source offers, processed; a Python worker that did not connect back in time (a
        loaded machine) fails the query, which is started again and re-runs the batch, up to `RETRIES` times."""
        for attempt in range(RETRIES + 1):
            try:
                self.running.processAllAvailable()
                return
            except StreamingQueryException as exc:
                if NO_CONNECT not in str(exc) or attempt == RETRIES:
                    raise
                self.running = None
                self.start()


def _sink(root: Path) -> Callable[[Any, int], None]:
    def write(batch: Any, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(str(root / "answers" / f"batch={batch_id}"))
        faults.fire(root, CrashPoint.AFTER_SINK)

    return write


def batch_timestamps(checkpoint: Path) -> dict[int, int]:
    """Each batch's `batchTimestampMs`, from the second line of `offsets/N`."""
    return {
        int(f.name): json.loads(f.read_text().splitlines()[1])["batchTimestampMs"]
        for f in (checkpoint / "offsets").iterdir()
        if f.name.isdigit()
    }


def run_rounds(query: StateQuery, rounds: Sequence[Sequence]) -> None:
    """Each `[number, wait_ms, rows]` as one batch of `query`, after waiting `wait_ms` of real time."""
    for number, wait_ms, rows in rounds:
        time.sleep(wait_ms / 1000)
        query.run(number, rows)
