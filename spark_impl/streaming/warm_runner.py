"""Spark's Python streaming source runners, forked from a warm process instead of started cold.

Every start of a streaming query over a Python data source makes Spark start a Python process of its
own, `python -m pyspark.sql.streaming.python_streaming_source_runner`, which imports PySpark, numpy
and pyarrow, most of a CPU second, before it answers one call; a trial starts its query at the first
trigger and again at every restart, so the trial suites spent a good share of the machine's CPU on
these imports (`frontier-harness bench --only stateful`: `stateful_trials_per_minute` against
`stateful_trials_per_minute.cold_runners`). `launcher()` starts, once
per harness process, a warm process that has imported them, and returns the path of an executable
(`warm_runner_launcher`) that a trial's driver process registers our sources with (`driver`): Spark
starts it where it would start Python, and it has the warm process fork the runner, with Spark's
environment, directory and pipes. The runner runs as Spark started it; only its imports were done
before, and Spark's own jars, which hold no Python, are left off its path (`python_path`).
`launcher(driver.DRIVER)` is the same for the trial's driver processes themselves: each is forked from a
warm process that imported PySpark and pandas (`driver.warm`), never a job.

Invariants: a forked runner never outlives its launcher (the warm process kills it when the
launcher's connection closes) nor the warm process its harness (it exits when its parent does);
without the warm process the launcher runs the real interpreter. A killable driver
(`frontier_harness.spark_impl.streaming.killable`) registers its source plainly, so a
SIGKILL of its process group takes its runners with it.

>>> directory = scratch.directory("warm-")
>>> _write_launcher(directory / "python", directory / "socket", RUNNER).read_text().splitlines()[0] == f"#!{sys.executable} -SE"
True
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl import scratch
from frontier_harness.spark_impl.errors import SparkInfrastructureError

RUNNER = "pyspark.sql.streaming.python_streaming_source_runner"
LAUNCHER = Path(__file__).with_name("warm_runner_launcher.py")
READY = b"ready\n"
FORKED = "forked"  # beside the socket: a line per run forked, its pid
_warm: dict[str, tuple[subprocess.Popen, Path]] = {}  # module -> its warm process and launcher
_cold = False  # `cold()`: runners started as Spark starts them (the bench's other side)
COLD = "FRONTIER_HARNESS_COLD_RUNNERS"  # set to 1: Spark starts every runner itself


def available() -> bool:
    """Runners are forked warm where processes fork and pass descriptors (not on Windows), unless `cold()`
    or `FRONTIER_HARNESS_COLD_RUNNERS=1`."""
    return not _cold and os.environ.get(COLD) != "1" and hasattr(os, "fork") and hasattr(socket, "send_fds")


@contextlib.contextmanager
def cold() -> Iterator[None]:
    """Within it, sources registered start their runners as Spark does (`bench` measures both sides)."""
    global _cold
    before, _cold = _cold, True
    try:
        yield
    finally:
        _cold = before


def launcher(module: str = RUNNER) -> Path | None:
    """The executable to give Spark as our sources' Python, its warm process started on first use; None
    where the launcher cannot run (a temporary directory mounted `noexec`): runners then start cold."""
    if module not in _warm:
        directory = scratch.directory("warm-")
        socket_path = directory / "socket"
        path = _write_launcher(directory / "python", socket_path, module)
        try:
            subprocess.run([str(path), "-c", ""], check=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        process = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import serve; serve({str(socket_path)!r}, {module!r})"],
            stdout=subprocess.PIPE,
        )
        assert process.stdout is not None
        if process.stdout.readline() != READY:
            raise SparkInfrastructureError(
                f"the warm process for {module} did not start (exit {process.poll()})"
            )
        atexit.register(_stop, process)
        _warm[module] = process, path
    return _warm[module][1]


def forks(module: str = RUNNER) -> int:
    """How many runs of `module` its warm process has forked so far (0 before it started): what a test
    reads to see that Spark's runners, or the trials' drivers, came from it."""
    if module not in _warm:
        return 0
    log = _warm[module][1].with_name(FORKED)
    return len(log.read_text().splitlines()) if log.exists() else 0


def _stop(process: subprocess.Popen) -> None:
    """Stops a warm process and waits for it, so its runners' CPU is counted as this process's children's."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _write_launcher(path: Path, socket_path: Path, module: str) -> Path:
    code = LAUNCHER.read_text()
    for name, value in (("SOCKET", str(socket_path)), ("PYTHON", sys.executable), ("MODULE", module)):
        code = code.replace(f'{name} = ""', f"{name} = {value!r}", 1)
    path.write_text(f"#!{sys.executable} -SE\n{code}")
    path.chmod(0o755)
    return path


@contextlib.contextmanager
def registered(session: Any) -> Iterator[None]:
    """Within it, a data source registered on a classic `session` has its runners started by `launcher()`
    (when `available()`); a Spark Connect server starts its own. The cdc trials register their source
    with it; a streaming or stateful trial's driver process sets its own session's runners (`driver`)."""
    classic = getattr(session, "_jvm", None) is not None
    warm = launcher() if classic and available() else None
    if warm is None:
        yield
        return
    context = session.sparkContext
    plain, context.pythonExec = context.pythonExec, str(warm)
    try:
        yield
    finally:
        context.pythonExec = plain


def serve(socket_path: str, module: str) -> None:
    """The warm process: imports `module` (and our sources), then forks one run of it per launcher that
    connects, until its parent exits."""
    import frontier_harness.spark_impl.streaming.event_source  # noqa: F401  # our sources, warm too

    __import__(module)
    prepare = getattr(sys.modules[module], "warm", None)  # a module's own warm imports (a trial's driver)
    if callable(prepare):
        prepare()
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    children: dict[int, socket.socket] = {}  # runner pid -> its launcher's connection
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    stopping: list[int] = []  # SIGTERM: the harness is exiting (`_stop`)
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    while os.getppid() == parent and not stopping:
        for key, _ in selector.select(timeout=0.05):
            if key.fileobj is listener:
                _accept(listener, selector, children, module, Path(socket_path).with_name(FORKED))
            else:
                _launcher_gone(key.fileobj, selector, children)  # type: ignore[arg-type]
        _reap(selector, children)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _accept(
    listener: socket.socket, selector: selectors.BaseSelector, children: dict, module: str, forked: Path
) -> None:
    conn, _ = listener.accept()
    request, fds = _request(conn)
    if request is None:  # a launcher that died before it asked: nothing to fork
        for fd in fds:
            os.close(fd)
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        selector.close()
        _run(module, request, fds, [listener, conn, *children.values()])
    for fd in fds:
        os.close(fd)
    with forked.open("a") as log:
        log.write(f"{pid}\n")
    with contextlib.suppress(OSError):  # a launcher gone meanwhile: its closed connection kills the runner
        conn.sendall(f"{pid}\n".encode())
    children[pid] = conn
    selector.register(conn, selectors.EVENT_READ)


def _request(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """A launcher's request (environment, directory) and its standard streams; None if it closed first."""
    try:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    except OSError:
        return None, []
    size = int.from_bytes(data[:8], "big")
    while data and len(data) - 8 < size:
        more = conn.recv(1 << 16)
        if not more:
            return None, fds
        data += more
    return (json.loads(data[8:]) if data and len(fds) == 3 else None), fds


def _run(module: str, request: dict, fds: list[int], close: list[socket.socket]) -> None:
    """In the forked child: become the runner Spark started (its environment, directory, streams)."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the runner dies of SIGTERM, as Spark started it
        for sock in close:  # the warm process's, not the runner's
            sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.path[:0] = [p for p in python_path(request["env"]) if p not in sys.path]
        sys.argv = [module]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except BaseException:  # the runner never started: say why on the stream Spark reads
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def python_path(env: dict[str, str]) -> list[str]:
    """The entries of `env`'s `PYTHONPATH` a forked runner puts on its path: all but Spark's own jars
    (`$SPARK_HOME/jars/*.jar`). Spark adds the jar of its Python utilities, which holds no Python; Python
    reads the directory of its thousands of entries at the runner's first import and again at its first task
    (`importlib.invalidate_caches`): 45 ms of CPU a runner, against 3 ms without it (measured here).

    >>> env = {"PYTHONPATH": "/home/spark/jars/spark-core.jar::/code:/lib/yours.jar", "SPARK_HOME": "/home/spark"}
    >>> python_path(env)
    ['/code', '/lib/yours.jar']
    """
    jars = Path(env.get("SPARK_HOME") or os.devnull, "jars").resolve()
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [p for p in entries if not (p.endswith(".jar") and Path(p).resolve().parent == jars)]


def _launcher_gone(conn: socket.socket, selector: selectors.BaseSelector, children: dict) -> None:
    """A launcher's connection closed (it was killed): its runner goes too."""
    with contextlib.suppress(OSError):
        if conn.recv(1):
            return
    selector.unregister(conn)
    for pid, child in list(children.items()):
        if child is conn:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _reap(selector: selectors.BaseSelector, children: dict) -> None:
    """Each runner that exited: its code to its launcher."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        with contextlib.suppress(OSError):
            conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(conn)
        conn.close()
