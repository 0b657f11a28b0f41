"""A stretch of a TTL state query's rounds in a driver process of its own, with a JVM of its own.

A restart of the ttl_spark_state query is a restart of its driver: `launch` starts
`python -m frontier_harness.spark_impl.ttl.state.driver SPEC` (or the `module` a caller names, one whose
`__main__` ends in `main`), which starts its own Spark session and waits for `Driver.go` (so the
harness starts the next stretch's JVM while the one before runs), then starts the query at `root`
from its checkpoint (`query.StateQuery`), lets a batch a crash left logged and uncommitted run again first (on the
clock it journaled), then runs each round (`[number, wait_ms, rows]`) as one batch, and stops. Its clock is
its own JVM's: a driver whose clock is behind the last one's journals a batch timestamp that goes back,
which the suite's clock law can see.

Launched with `kill`, its one round's batch writes its answers, then the sink writes a marker and SIGKILLs
the driver's process group, before Spark commits (`spark_impl.streaming.faults`): a crash after the sink.
`Driver.wait` returns the point the driver was seen killed at (its marker and its death by SIGKILL), or
raises `CrashPointNotReached` (exit 3) when it exited without reaching it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.spark_impl.driver_process import (
    ROOT,
    TIMEOUT_S,
    ended,
    environment,
    killed,
    load,
    name_of,
)
from frontier_harness.spark_impl.errors import SparkInfrastructureError
from frontier_harness.spark_impl.streaming import faults, warm_runner

DRIVER = "frontier_harness.spark_impl.ttl.state.driver"
# what its JVM starts as Python: the processor's daemon and `init` worker
GROUP_PYTHON = warm_runner.USER_PYTHON


class Driver:
    """A running driver of a stretch of rounds; `python` holds its JVM's launcher of warm Python (None: cold)."""

    def __init__(self, process: subprocess.Popen, log: Path, root: Path, kill: bool, python: Path | None):
        self.process, self.log, self.root, self.kill, self.python = process, log, root, kill, python

    def go(self) -> None:
        """Lets the driver start the query (the stretch before it is over: its query stopped)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(b"go\n")
            self.process.stdin.close()
        except BrokenPipeError:
            pass  # it died starting: `wait` says how

    def close(self) -> None:
        """Ends a driver that will not run (the run ended before its turn)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=TIMEOUT_S)
        self._forget_python()

    def wait(self) -> str | None:
        """The crash point the driver was seen killed at (launched with `kill`), or None once it ran every
        round; `SparkInfrastructureError` when it failed."""
        try:
            return self._ended()
        finally:
            self._forget_python()

    def _forget_python(self) -> None:
        if self.python is not None:
            shutil.rmtree(self.python, ignore_errors=True)

    def _ended(self) -> str | None:
        if self.kill:
            return killed(self.process, lambda: faults.killed_at(self.root), CrashPoint.AFTER_SINK, self.log)
        code = ended(self.process, "the ttl state query's driver", self.log)
        if code != 0:
            tail = self.log.read_text()[-3000:] if self.log.exists() else ""
            raise SparkInfrastructureError(f"the ttl state query's driver exited with {code}: {tail}")
        return None


def launch(
    root: Path,
    processor: type,
    ttl_ms: int,
    rounds: Sequence[Sequence],
    kill: bool = False,
    module: str = DRIVER,
) -> Driver:
    """Starts a driver running `rounds` of the query at `root` with `processor(ttl_ms)` (see the module). The
    production driver is forked warm, and so is the Python its JVM starts, in its process group
    (`warm_runner.in_this_group`), as a killable streaming driver is (`streaming.killable`); another `module`
    (a planted driver) starts cold, as it asks."""
    warm, python = warm_runner.leading_a_group(DRIVER, *GROUP_PYTHON) if module == DRIVER else (None, None)
    spec = {"root": str(root), "processor": name_of(processor), "ttl_ms": ttl_ms, "rounds": list(rounds)}
    spec_file = Path(tempfile.mkstemp(prefix="driver-", suffix=".json", dir=root)[1])
    spec_file.write_text(json.dumps({**spec, "kill": kill, "python": python and str(python)}))
    env = environment({faults.KILLABLE: "1"} if kill else {})
    log = spec_file.with_suffix(".log")
    with open(log, "w") as stderr:
        process = subprocess.Popen(
            [str(warm or sys.executable), "-m", module, str(spec_file)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its own process group: a kill takes its JVM and workers, nothing else
        )
    return Driver(process, log, root, kill, python)


def warm() -> None:
    """What a forked driver finds imported (`warm_runner.serve` calls it before it forks): PySpark, pandas
    (which PySpark's `SparkContext` imports), the session's and the query's modules."""
    import pandas  # noqa: F401
    import pyspark.sql  # noqa: F401

    import frontier_harness.spark_impl.session  # noqa: F401
    import frontier_harness.spark_impl.ttl.state.query  # noqa: F401


def main(spec_file: str) -> None:
    from frontier_harness.spark_impl.session import configure, spark
    from frontier_harness.spark_impl.ttl.state.query import StateQuery, run_rounds

    spec = json.loads(Path(spec_file).read_text())
    warm_runner.python_in_group(spec["python"], *GROUP_PYTHON)
    configure(short_lived=True, temporary=Path(spec_file).with_suffix(".tmp"))  # a few batches, or killed
    spark()  # started while the stretch before runs
    if not sys.stdin.readline():  # the harness ended without this stretch's turn
        return
    root = Path(spec["root"])
    query = StateQuery(root, load(spec["processor"])(spec["ttl_ms"]))
    query.start()
    query.drain()  # a batch a crash left uncommitted runs again first, on the clock it journaled
    if spec["kill"]:  # armed after it: the kill is the round's own batch's
        faults.arm(root, CrashPoint.AFTER_SINK, kill=True)
    run_rounds(query, spec["rounds"])
    query.stop()


if __name__ == "__main__":
    main(sys.argv[1])
