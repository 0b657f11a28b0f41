"""Verdicts hold where users outgrow one machine: separate JVMs, not `local[2]`'s one.

A standalone cluster from PySpark's own `bin/spark-class` (a Master and two Workers, each its own JVM, on
127.0.0.1) runs one batched suite with a planted Spark bug and one streaming trial with `--master
spark://...`; a Spark Connect server from PySpark's `sbin/start-connect-server.sh` (over that cluster) runs
the suite again with `--remote sc://...`. Each gives local mode's exit code, and the batched suite writes
the same counterexample file byte for byte (`ci` shrinks by a count of calls). Every CLI run is a fresh
process, as a user's is. Minutes on a 2-core machine: `slow`. docs/cluster.md says how to reproduce it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import Action, History

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[1]
PLANTED = "tests.planted:spark_keeps_zero_diffs"
BATCHED = ["check", "--suite", "collections", "--domain", "total", "--impl", PLANTED, "--profile", "ci"]
ONE_TRIAL = History(
    "partitioned",
    (Action("produce", {"partition": 0, "data": "r0"}), Action("trigger", {"fault": "after_sink"})),
)


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _port() -> int:
    """A free port below the kernel's ephemeral range: a port the kernel handed out (`bind(0)`) could be
    handed out again, to another test's JVM, before the server bound it. That server then failed to start
    while the other JVM answered on its port, and the CLI run against it hung (a `.ci/run`'s 30 minutes)."""
    ephemeral = Path("/proc/sys/net/ipv4/ip_local_port_range")
    low = int(ephemeral.read_text().split()[0]) if ephemeral.exists() else 32768
    for port in random.SystemRandom().sample(range(min(20000, low // 2), low), 100):
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind(("127.0.0.1", port))
            return port
    raise AssertionError(f"no free port below {low}")


def _env(logs: Path) -> dict[str, str]:
    """What every process of the cluster and every CLI run shares: the harness's interpreter for Python
    workers, the repository on the path (the planted implementation), logs kept out of the venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "FRONTIER_HARNESS_MASTER")}
    return env | {
        "SPARK_HOME": str(_spark_home()),
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(logs),
        "SPARK_PID_DIR": str(logs),
    }


def _started(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _wait(ready, what: str, seconds: float = 300.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(2)
    raise AssertionError(f"{what} did not come up within {seconds:.0f} s")


def _alive_workers(webui: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as page:
            return sum(w["state"] == "ALIVE" for w in json.load(page)["workers"])
    except OSError:
        return 0


def _serving(server: subprocess.Popen, log: Path) -> bool:
    """Whether the Connect server says it started (a port that answers may be another process's); a server
    that exited fails at once, with its log."""
    if server.poll() is not None:
        raise AssertionError(
            f"the Spark Connect server exited ({server.returncode}): {log.read_text()[-3000:]}"
        )
    return "Spark Connect server started at: " in log.read_text()


def _stop(processes: list[subprocess.Popen]) -> None:
    """Each process's whole group: the Connect script's JVM is a grandchild that outlives its shell."""
    for process in reversed(processes):
        _signal_group(process, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # its own session (`_started`): the group's id is its pid
        os.killpg(process.pid, signum)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    """A Master and two Workers, one core each, every one its own JVM; yields the master URL and env."""
    logs = tmp_path_factory.mktemp("cluster")
    env = _env(logs)
    spark_class = str(_spark_home() / "bin" / "spark-class")
    port, webui = _port(), _port()
    master = f"spark://127.0.0.1:{port}"
    processes = [
        _started(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(webui)],
            env,
            logs / "master.log",
        )
    ]  # fmt: skip
    try:
        for i in range(2):
            command = [spark_class, "org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1"]
            command += ["--cores", "1", "--memory", "1g", "--webui-port", str(_port())]
            processes.append(
                _started(command, env | {"SPARK_WORKER_DIR": str(logs / f"w{i}")}, logs / f"w{i}.log")
            )
        _wait(lambda: _alive_workers(webui) == 2, "a standalone Master with two Workers")
        yield master, env
    finally:
        _stop(processes)


def _connect_server(master: str, port: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A Spark Connect server over `master` on `port` (PySpark's `sbin/start-connect-server.sh`), once it
    says it started."""
    command = ["bash", str(_spark_home() / "sbin" / "start-connect-server.sh"), "--wait", "--master", master]
    command += ["--conf", f"spark.connect.grpc.binding.port={port}", "--conf", "spark.driver.host=127.0.0.1"]
    server = _started(command, env, log)
    try:
        _wait(lambda: _serving(server, log), "a Spark Connect server")
    except BaseException:
        _stop([server])
        raise
    return server


def _cli(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in a fresh process (its own driver and session), as a user runs it."""
    command = [sys.executable, "-m", "frontier_harness.properties.cli.main", *argv]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.glob("*.itf.json")}


@pytest.fixture(scope="module")
def local_batched(standalone, tmp_path_factory) -> tuple[int, dict[str, bytes]]:
    """The batched suite in local mode: what the cluster and the Connect server must give again."""
    _, env = standalone
    where = tmp_path_factory.mktemp("local")
    ran = _cli([*BATCHED, "--out", str(where / "cx")], env, where)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    return ran.returncode, _files(where / "cx")


def test_a_batched_suite_on_a_standalone_cluster_gives_local_modes_verdict_and_file(
    standalone, local_batched, tmp_path
):
    master, env = standalone
    ran = _cli(["--master", master, *BATCHED, "--out", str(tmp_path / "cx")], env, tmp_path)
    code, files = local_batched
    assert ran.returncode == code, ran.stdout + ran.stderr
    assert files and _files(tmp_path / "cx") == files


def test_a_streaming_trial_on_a_standalone_cluster_gives_local_modes_verdict(standalone, tmp_path):
    """A real query (a Python data source: the Workers' Python workers run the harness's interpreter)."""
    master, env = standalone
    path = counterexample.write(
        Counterexample("streaming", "exactly_once", ONE_TRIAL, "spark", "one trial"), tmp_path / "cx"
    )
    here = _cli(["replay", str(path)], env, tmp_path)
    there = _cli(["--master", master, "replay", str(path)], env, tmp_path)
    assert here.returncode == there.returncode == 0, there.stdout + there.stderr
    assert "holds now" in there.stdout


def test_a_batched_suite_through_a_connect_server_gives_local_modes_verdict_and_file(
    standalone, local_batched, tmp_path
):
    master, env = standalone
    port = _port()
    server = _connect_server(master, port, env, tmp_path / "connect.log")
    try:
        ran = _cli(
            ["--remote", f"sc://127.0.0.1:{port}", *BATCHED, "--out", str(tmp_path / "cx")], env, tmp_path
        )
    finally:
        _stop([server])
    code, files = local_batched
    assert ran.returncode == code, ran.stdout + ran.stderr + (tmp_path / "connect.log").read_text()[-3000:]
    assert _files(tmp_path / "cx") == files


def test_a_connect_server_gone_in_the_middle_of_a_run_is_exit_3_in_seconds_naming_it(tmp_path):
    """The server killed once a first lane's verdict came back through it: the run ends in exit 3 naming
    the address, within the client's bounded retries (`spark_impl.connect_client`), not ten minutes."""
    env, port = _env(tmp_path), _port()
    server = _connect_server("local[1]", port, env, tmp_path / "connect.log")
    cli = [sys.executable, "-m", "frontier_harness.properties.cli.main", "--remote", f"sc://127.0.0.1:{port}"]
    cli += ["check", "--suite", "collections", "--profile", "ci", "--out", str(tmp_path / "cx")]
    try:
        with subprocess.Popen(
            cli, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as run:
            seen = list(_until(run.stdout, "histories in"))
            _signal_group(server, signal.SIGKILL)
            try:
                rest, _ = run.communicate(timeout=180)
            except subprocess.TimeoutExpired:
                run.kill()
                pytest.fail(
                    "check --remote still running 180 s after its server was killed: " + "".join(seen)
                )
    finally:
        _stop([server])
    output = "".join(seen) + rest
    assert "held" in seen[-1], output  # a lane ran through the server before it went
    assert run.returncode == 3, output
    assert f"could not reach a Spark Connect server at sc://127.0.0.1:{port}: " in output, output
    assert not _files(tmp_path / "cx")


def _until(lines, marker: str) -> Iterator[str]:
    """`lines` up to and including the first that holds `marker` (all of them if none does)."""
    for line in lines:
        yield line
        if marker in line:
            return
