"""A driver process of the TTL state query: `python -m tests.ttl_state_driver ROOT TTL_MS FIRST ROUNDS [FAKETIME]`.

Runs `ROUNDS` (JSON: `[[wait_ms, [[op, key, value], ...]], ...]`, numbered from `FIRST`) on the
`transformWithState` TTL query at `ROOT` (a new query, or the one its checkpoint holds), then
prints `RESULT` and JSON: each batch's `batchTimestampMs` and every answer so far. With
`FAKETIME` (libfaketime's offset, e.g. `-600s`) the JVM this process starts runs on a wall clock
set back by that much (Debian's libfaketime, `FAKETIME_DONT_FAKE_MONOTONIC=1`); this Python
process does not (libfaketime breaks Python's `time.sleep`), nor do the Python workers the JVM starts.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time
from pathlib import Path

LIBFAKETIME = "/usr/lib/*/faketime/libfaketime.so.1"  # not libfaketimeMT: a JVM on it ran ~25x slower here


def fake_the_jvm_clock(offset: str, root: Path) -> None:
    """The JVM started after this call (and only it) reads a wall clock `offset` away: the Python workers it
    starts, on the driver (transformWithState's) and the executors, run through a script in `root` that
    drops libfaketime first (under it, Python's `time.sleep` fails with EINVAL)."""
    [library] = glob.glob(LIBFAKETIME)
    python = root / "python-on-the-real-clock"
    python.write_text(
        f'#!/bin/sh\nunset LD_PRELOAD FAKETIME FAKETIME_DONT_FAKE_MONOTONIC\nexec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    os.environ.update(
        LD_PRELOAD=library, FAKETIME=offset, FAKETIME_DONT_FAKE_MONOTONIC="1", PYSPARK_PYTHON=str(python)
    )


def main(root: Path, ttl_ms: int, first: int, rounds: list, offset: str | None) -> None:
    if offset:
        fake_the_jvm_clock(offset, root)
    from frontier_harness.spark_impl.ttl.state.processor import TtlProcessor
    from frontier_harness.spark_impl.ttl.state.store import StateQuery, batch_timestamps

    query = StateQuery(root, TtlProcessor(ttl_ms))
    query.start()
    for number, (wait_ms, requests) in enumerate(rounds, start=first):
        time.sleep(wait_ms / 1000)
        rows = [
            {"history_id": 0, "key": key, "seq": seq, "op": op, "value": value, "step": number}
            for seq, (op, key, value) in enumerate(requests)
        ]
        query.run(number, rows, crash=False)
    query.stop()
    answers = query.session.read.parquet(str(root / "answers")).orderBy("step", "seq").toArrow().to_pylist()
    print(
        "RESULT",
        json.dumps({"clocks": batch_timestamps(root / "checkpoint"), "answers": answers}),
        flush=True,
    )


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        int(sys.argv[2]),
        int(sys.argv[3]),
        json.loads(sys.argv[4]),
        (sys.argv[5:] or [None])[0],
    )
