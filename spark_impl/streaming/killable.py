"""A trial step in a driver process of its own, with a JVM of its own, SIGKILLed at its crash point.

`launch` starts `python -m frontier_harness.spark_impl.streaming.killable SPEC`, marked killable, forked
from a warm process that imported PySpark, pandas and the trial's modules (`warm_runner.launcher(KILLABLE)`;
started cold where processes do not fork), in a session of its own: it leads its own process group. It forks
warm processes into that group for the Python its JVM starts (our source's runner, Spark's daemons:
`warm_runner.in_this_group`), then starts a Spark session, arms the step's crash point
with `kill`, runs the trial's query and processes what the log offers; at the point the source (in
Spark's Python process) or the sink (in the driver) writes a marker naming the point and SIGKILLs the
whole group: driver, JVM and Python workers die at once, as in a machine crash, leaving only what was
durable. The harness then restarts the query from the same checkpoint. Started cold, the driver and the
Python its JVM starts spent about a third of a kill's CPU importing (process accounting of one kill:
3.4 CPU seconds of Python against 7.3 of JVM).

`Launched.wait` counts the kill from what it sees, never from what was armed: the marker, and
the process dead of SIGKILL. A driver that exits without reaching its point is infrastructure
(`CrashPointNotReached`, exit 3), naming the point: the trial it was for did not happen.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl.driver_process import ROOT, die_with_harness, environment, killed, load
from frontier_harness.spark_impl.streaming import driver, faults, warm_runner
from frontier_harness.spark_impl.streaming.driver import query_spec, spec_json
from frontier_harness.spark_impl.streaming.job import make_job
from frontier_harness.spark_impl.streaming.query import QuerySpec, drain, start_query

KILLABLE = "frontier_harness.spark_impl.streaming.killable"  # what its launcher routes
GROUP_PYTHON = (warm_runner.RUNNER, warm_runner.DAEMON)  # what its JVM starts as Python, forked in its group


class Launched:
    """A running killable step, armed at `point` in `directory`; `python` holds its JVM's launcher of warm
    Python and the warm processes' sockets (None: its JVM starts Python cold)."""

    def __init__(
        self, process: subprocess.Popen, log: Path, directory: Path, point: str, python: Path | None
    ):
        self.process, self.log, self.directory, self.point = process, log, directory, point
        self.python = python

    def wait(self) -> str:
        """The point the process was killed at (`driver_process.killed`: its marker and its death by
        SIGKILL both seen); `CrashPointNotReached` if it exited without reaching it."""
        try:
            return killed(self.process, lambda: faults.killed_at(self.directory), self.point, self.log)
        finally:
            if self.python is not None:
                shutil.rmtree(self.python, ignore_errors=True)


def launch(spec: QuerySpec, source: type, writer: Any, fault: str) -> Launched:
    """Starts the step's driver process, armed to be killed at `fault`; `Launched.wait` tells what it saw."""
    spec_file = Path(tempfile.mkstemp(prefix="killable-", suffix=".json", dir=spec.root)[1])
    warm, python = warm_runner.leading_a_group(KILLABLE, *GROUP_PYTHON)
    found = spec_json(spec, source, writer, fault)
    spec_file.write_text(json.dumps({**found, "python": python and str(python)}))
    env = environment({faults.KILLABLE: "1"})
    log = spec_file.with_suffix(".log")
    with open(log, "w") as stderr:
        process = subprocess.Popen(
            [str(warm or sys.executable), "-m", KILLABLE, str(spec_file)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,  # held by the harness: its end is the harness's exit (`die_with_harness`)
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    return Launched(process, log, spec.log, fault, python)


def warm() -> None:
    """What a forked killable driver finds imported (`warm_runner.serve` calls it before it forks): a trial's
    driver's imports (`driver.warm`) and the session's."""
    driver.warm()
    import frontier_harness.spark_impl.session  # noqa: F401


def main(spec_file: str) -> None:
    from frontier_harness.spark_impl.session import configure, spark

    die_with_harness()
    found = json.loads(Path(spec_file).read_text())
    warm_runner.python_in_group(found["python"], *GROUP_PYTHON)
    configure(short_lived=True, temporary=Path(spec_file).with_suffix(".tmp"))  # runs one query, is killed
    spec = query_spec(found)
    source = load(found["source"])
    session = spark()
    session.dataSource.register(source)
    faults.arm(spec.log, found["fault"], kill=True)
    job = make_job(spec.job, spec.job_dir) if spec.job else None
    query = start_query(session, source.name(), spec, load(found["writer"]), job)
    drain(query, spec.trigger)
    query.stop()


if __name__ == "__main__":
    main(sys.argv[1])
