"""A trial step in a driver process of its own, SIGKILLed at its crash point.

`launch` starts `python -m frontier_harness.spark_impl.streaming.killable SPEC` in a new session (its
own process group), marked killable. That process starts a Spark session, arms the
step's crash point with `kill`, runs the trial's query and processes what the log
offers; at the point the source (in Spark's Python process) or the sink (in the
driver) SIGKILLs the whole group: driver, JVM and Python workers die at once, as in a
machine crash, leaving only what was durable. The harness then restarts the query in
its own session from the same checkpoint.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl.errors import SparkInfrastructureError
from frontier_harness.spark_impl.streaming import faults
from frontier_harness.spark_impl.streaming.job import make_job
from frontier_harness.spark_impl.streaming.query import QuerySpec, drain, start_query

TIMEOUT_S = 600
ROOT = Path(__file__).resolve().parent.parent.parent


def _name(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


def _load(name: str) -> Any:
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


class Launched:
    """A running killable step."""

    def __init__(self, process: subprocess.Popen, log: Path):
        self.process, self.log = process, log

    def wait(self) -> bool:
        """True if the process was SIGKILLed at its point; False if it finished (never reached the point)."""
        code = self.process.wait(timeout=TIMEOUT_S)
        if code not in (0, -signal.SIGKILL):
            tail = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise SparkInfrastructureError(f"killable streaming driver exited with {code}: {tail}")
        return code == -signal.SIGKILL


def launch(spec: QuerySpec, source: type, writer: Any, fault: str | None) -> Launched:
    """Starts the step's driver process; `Launched.wait` tells whether it was killed."""
    spec_file = Path(tempfile.mkstemp(prefix="killable-", suffix=".json", dir=spec.root)[1])
    spec_file.write_text(
        json.dumps(
            {
                "root": str(spec.root),
                "trigger": spec.trigger,
                "sink": spec.sink,
                "job": spec.job,
                "source": _name(source),
                "writer": _name(writer),
                "fault": fault,
            }
        )
    )
    env = {**os.environ, faults.KILLABLE: "1"}
    paths = (str(ROOT), os.getcwd(), env.get("PYTHONPATH", ""))  # a user's job imports from where it runs
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    log = spec_file.with_suffix(".log")
    with open(log, "w") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "frontier_harness.spark_impl.streaming.killable",
                str(spec_file),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    return Launched(process, log)


def main(spec_file: str) -> None:
    from frontier_harness.spark_impl.session import configure, spark

    configure(short_lived=True)  # this JVM runs one query and is killed
    spec = json.loads(Path(spec_file).read_text())
    query_spec = QuerySpec(Path(spec["root"]), spec["trigger"], spec["sink"], spec.get("job"))
    source = _load(spec["source"])
    session = spark()
    session.dataSource.register(source)
    if spec["fault"]:
        faults.arm(query_spec.log, spec["fault"], kill=True)
    job = make_job(query_spec.job, query_spec.job_dir) if query_spec.job else None
    query = start_query(session, source.name(), query_spec, _load(spec["writer"]), job)
    drain(query, query_spec.trigger)
    query.stop()


if __name__ == "__main__":
    main(sys.argv[1])
