"""One start of a trial's query, in a Python process of its own attached to the harness's JVM.

A restart is a restart: every start of a trial's query (the first, each restart, each run of an
`availableNow` query) runs in a Python process that never ran the job before, so nothing the job's
Python held (its module globals, what it imported lazily inside `write`, a helper's cache) survives
into the next start. The JVM is the harness's: `start` opens a Py4J server of its own in it
(Spark's `Py4JServer`, so the process's `foreachBatch` callbacks reach that process alone) and starts
`python -m frontier_harness.spark_impl.streaming.driver` (forked from a warm process that imported
PySpark and pandas but never a job: `warm_runner.launcher(DRIVER)`), which attaches through PySpark's
`PYSPARK_GATEWAY_PORT` and `PYSPARK_GATEWAY_SECRET`, makes a new `SparkSession` of the harness's
(its own SQL settings, temporary views and registered sources), registers the trial's source,
builds the job (`FACTORY(directory)`) and starts the query (`query.start_query`). The harness then
asks it, a line at a time on its standard input (it answers on its standard output; what the job
prints goes to the log beside it), to `drain` the query (its failure's
text is the answer, as Spark's `StreamingQueryException` said it) and to `stop` it; the process exits
after `stop`, and its Py4J server is shut down.

What is kept across a restart, and what is not, is stated once in docs/streaming.md ("What a
restart keeps").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import traceback
import uuid
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl.driver_process import TIMEOUT_S, ended, environment, load, name_of
from frontier_harness.spark_impl.errors import QueryStartFailed, SparkInfrastructureError
from frontier_harness.spark_impl.streaming import python_workers
from frontier_harness.spark_impl.streaming.query import QuerySpec

DRIVER = __name__ if __name__ != "__main__" else "frontier_harness.spark_impl.streaming.driver"
LAUNCHER = "FRONTIER_HARNESS_DRIVER_RUNNERS"  # the warm runners' launcher, for the sources it registers
# the launcher of a user's job's Python (`warm_runner.USER_PYTHON`)
USER_PYTHON = "FRONTIER_HARNESS_DRIVER_USER_PYTHON"


def spec_json(spec: QuerySpec, source: type, writer: Any, fault: str | None = None) -> dict:
    """A query start as a driver process reads it: where, how, which source, writer and job."""
    return {
        "root": str(spec.root),
        "trigger": spec.trigger,
        "sink": spec.sink,
        "job": spec.job,
        "source": name_of(source),
        "writer": name_of(writer),
        "fault": fault,
    }


def query_spec(found: dict) -> QuerySpec:
    return QuerySpec(Path(found["root"]), found["trigger"], found["sink"], found.get("job"))


class Attached:
    """A running driver process attached to the harness's JVM, and its Py4J server there."""

    def __init__(self, process: subprocess.Popen, server: Any, log: Path, start: str = ""):
        self.process, self.server, self.log, self.start = process, server, log, start

    def _ask(self, command: str) -> dict:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # it died: its answer is missing, said below
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = ended(self.process, "the trial's driver process", self.log)
            raise SparkInfrastructureError(
                f"the trial's driver process exited ({code}) before it answered {command!r}: {self.tail()}"
            )
        return json.loads(line)

    def tail(self) -> str:
        return self.log.read_text()[-2000:] if self.log.exists() else ""

    def drain(self) -> str | None:
        """Processes everything the source offers (`query.drain`); the query's failure as Spark said it,
        or None."""
        return self._ask("drain").get("failed")

    def stop(self) -> None:
        """Stops the query, then the process, and shuts its Py4J server down."""
        try:
            if self.process.poll() is None:
                self._ask("stop")
                ended(self.process, "the trial's driver process, asked to stop,", self.log)
        finally:
            self.close()

    def close(self) -> None:
        """Ends the process (killed if it still runs), its Py4J server and its start's Python workers
        (`python_workers.end`); nothing of it is left."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=TIMEOUT_S)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        if self.server is not None:
            server, self.server = self.server, None
            server.shutdown()
        if self.start:
            python_workers.end(self.start)


def start(session: Any, spec: QuerySpec, source: type, writer: Any) -> Attached:
    """Starts one start of the trial's query in a new driver process attached to `session`'s JVM, and waits
    until its source is initialized; `QueryStartFailed` (with the process's traceback) if it could not
    start, `SparkInfrastructureError` if the process died."""
    from frontier_harness.spark_impl.streaming import warm_runner

    jvm = session.sparkContext._jvm
    server = jvm.org.apache.spark.api.python.Py4JServer(session.sparkContext._jsc.sc().conf())
    server.start()
    log = Path(tempfile.mkstemp(prefix="driver-", suffix=".log", dir=spec.root)[1])
    start_id = (spec.workers if spec.continuous else uuid.uuid4().hex) if spec.job else ""
    runners = warm_runner.launcher() if warm_runner.available() else None
    user_python = (
        warm_runner.launcher(*warm_runner.USER_PYTHON)
        if start_id and warm_runner.available(*warm_runner.USER_PYTHON)
        else None
    )
    env = environment(
        {
            "PYSPARK_GATEWAY_PORT": str(server.getListeningPort()),
            "PYSPARK_GATEWAY_SECRET": server.secret(),
            **({python_workers.START: start_id} if start_id else {}),
            **({LAUNCHER: str(runners)} if runners is not None else {}),
            **({USER_PYTHON: str(user_python)} if user_python is not None else {}),
        }
    )
    warm = warm_runner.launcher(DRIVER) if warm_runner.available() else None
    try:
        with open(log, "w") as stderr:
            process = subprocess.Popen(
                [str(warm or sys.executable), "-m", DRIVER],
                cwd=os.getcwd(),
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
    except BaseException:
        server.shutdown()
        raise
    attached = Attached(process, server, log, "" if spec.continuous else start_id)  # see `QuerySpec`
    started = attached._ask(json.dumps(spec_json(spec, source, writer)))
    if "refused" in started:
        attached.close()
        raise QueryStartFailed(started["refused"])
    return attached


# ---- the driver process ----


def _mark_workers(context: Any) -> None:
    """A user's job's Python functions, made from here on, run in workers of this start's own
    (`python_workers`): `MARK` joins the environment PySpark sends with each function, and their Python is
    the launcher of `warm_runner.USER_PYTHON` where the harness gave one. A source registered
    before keeps the JVM's shared workers: the harness's code, which holds nothing across a start."""
    if os.environ.get(python_workers.START):
        context.environment[python_workers.MARK] = os.environ[python_workers.START]
        if os.environ.get(USER_PYTHON):
            context.pythonExec = os.environ[USER_PYTHON]


def warm() -> None:
    """What a forked driver process finds imported (`warm_runner.serve` calls it before it forks): PySpark,
    pandas (which PySpark's `SparkContext` imports), and the trial's own modules; never a job."""
    import pyspark.sql  # noqa: F401
    import pyspark.testing  # noqa: F401

    import frontier_harness.spark_impl.streaming.job  # noqa: F401
    import frontier_harness.spark_impl.streaming.query  # noqa: F401
    import frontier_harness.spark_impl.streaming.sinks  # noqa: F401
    import frontier_harness.spark_impl.streaming.source  # noqa: F401


def main() -> None:
    answers = os.fdopen(os.dup(1), "w")  # the harness reads the answers; anything printed goes to the log
    os.dup2(2, 1)

    def answer(found: dict) -> None:
        answers.write(json.dumps(found) + "\n")
        answers.flush()

    try:
        query, trigger = _started(json.loads(sys.stdin.readline()))
    except Exception:
        answer({"refused": traceback.format_exc()})
        return
    answer({"started": True})
    _serve(query, trigger, answer)


def _started(found: dict) -> tuple[Any, str]:
    from frontier_harness.spark_impl.session import attached
    from frontier_harness.spark_impl.streaming.job import make_job
    from frontier_harness.spark_impl.streaming.query import start_query

    session = attached(os.environ.get(LAUNCHER))  # the harness's JVM, our sources' runners forked warm
    spec = query_spec(found)
    source = load(found["source"])
    session.dataSource.register(source)  # before the mark: the harness's source keeps the shared workers
    _mark_workers(session.sparkContext)
    job = make_job(spec.job, spec.job_dir) if spec.job else None
    return start_query(session, source.name(), spec, load(found["writer"]), job), spec.trigger


def _serve(query: Any, trigger: str, answer: Any) -> None:
    from pyspark.errors import StreamingQueryException

    from frontier_harness.spark_impl.streaming.query import drain

    for line in sys.stdin:
        command = line.strip()
        if command == "drain":
            try:
                drain(query, trigger)
                answer({})
            except StreamingQueryException as exc:
                answer({"failed": str(exc)})
        elif command == "stop":
            try:
                query.stop()
            finally:
                answer({})
            return


if __name__ == "__main__":
    main()
