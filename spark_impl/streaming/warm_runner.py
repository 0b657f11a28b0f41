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
warm process that imported PySpark and pandas (`driver.warm`), never a job. `launcher(*USER_PYTHON)` is the same
for the Python a user's job's functions run in, new for each start of its query (`python_workers`): the
daemon that forks its workers, whose warm process imports what a daemon and its workers import
(`pyspark.daemon`, `pyspark.worker`, pandas, pyarrow) and runs no thread but its own (`WARM_ENV`), as Spark's
daemon requires before it forks; and
the worker that runs a `transformWithStateInPandas` processor's `init` on the driver at each start, whose
warm process imports pandas and pyarrow too. Started cold at every start, both spent most of their CPU
importing (`frontier-harness bench --only processor`: `processor_trials_per_minute.cold_python`).
The warm process's log of what it forked names each run's launcher too (`stood_in_for`): a forked run's
environment in `/proc` is the warm process's, so its launcher's is what names the start it belongs to.

Invariants: a forked runner never outlives its launcher (the warm process kills it when the
launcher's connection closes) nor the warm process its harness (it exits when its parent does);
without the warm process the launcher runs the real interpreter. A killable driver
(`frontier_harness.spark_impl.streaming.killable`) has its JVM's Python forked by warm processes it forks
into its own process group (`in_this_group`), so a SIGKILL of that group takes its runners with it.

>>> directory = scratch.directory("warm-")
>>> _write_launcher(directory / "python", {RUNNER: str(directory / "socket")}).read_text().splitlines()[0] == f"#!{sys.executable} -SE"
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
import struct
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl import scratch
from frontier_harness.spark_impl.errors import SparkInfrastructureError

RUNNER = "pyspark.sql.streaming.python_streaming_source_runner"
DAEMON = "pyspark.daemon"  # Spark's daemon of Python workers
# the worker that runs a processor's `init` on the driver, at each start of its query
PROCESSOR_INIT = "pyspark.sql.streaming.transform_with_state_driver_worker"
USER_PYTHON = (DAEMON, PROCESSOR_INIT)  # what the JVM starts for a user's job's Python functions
# what each run imports first (otherwise our sources); a daemon's, what its workers import
WARM_IMPORTS = {
    DAEMON: ("pyspark.worker", "pandas", "pyarrow", "pyspark.sql.pandas.serializers"),
    PROCESSOR_INIT: ("pandas", "pyarrow"),
}
# Spark's daemon forks its workers, so it must run no thread but its own (`pyspark.daemon`); pandas and
# pyarrow start two at import unless told not to: OpenBLAS's and pyarrow's jemalloc's background thread
WARM_ENV = {DAEMON: {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}}
LAUNCHER = Path(__file__).with_name("warm_runner_launcher.py")
READY = b"ready\n"
FORKED = "forked"  # beside the socket: a line per run forked (its pid, its launcher's), `-pid` when it exited
_warm: dict[str, tuple[subprocess.Popen, Path]] = {}  # module -> its warm process and socket
_launchers: dict[tuple[str, ...], Path] = {}  # modules -> the launcher that routes them
# `cold()`: the modules started as Spark starts them (None: every one), the bench's other side
_cold: set[str | None] = set()
COLD = "FRONTIER_HARNESS_COLD_RUNNERS"  # set to 1: Spark starts every runner itself
EVENT_SOURCE = "frontier_harness.spark_impl.streaming.event_source"  # our sources, warm too


def available(*modules: str) -> bool:
    """`modules` (by default every one) are forked warm where processes fork and pass descriptors (not on
    Windows), unless `cold()` or `FRONTIER_HARNESS_COLD_RUNNERS=1`.

    >>> with cold(DAEMON):
    ...     available(), available(DAEMON)
    (True, False)
    """
    chilled = None in _cold or bool(_cold.intersection(modules))
    return not chilled and os.environ.get(COLD) != "1" and hasattr(os, "fork") and hasattr(socket, "send_fds")


@contextlib.contextmanager
def cold(*modules: str) -> Iterator[None]:
    """Within it, `modules` (by default every one: our sources' runners, the trials' drivers) start as
    Spark starts them, not forked warm (`bench` measures both sides)."""
    added = {*modules} if modules else {None}
    added -= _cold
    _cold.update(added)
    try:
        yield
    finally:
        _cold.difference_update(added)


def launcher(*modules: str) -> Path | None:
    """The executable to give Spark as the Python that runs `modules` (by default our sources' runner),
    each forked from a warm process of its own started on first use; None where the launcher cannot run
    (a temporary directory mounted `noexec`): they then start cold.

    >>> launcher(RUNNER) == launcher()
    True
    """
    modules = modules or (RUNNER,)
    if modules not in _launchers:
        directory = scratch.directory("warm-")
        routes = {
            m: str(directory / f"{i}.socket") if m not in _warm else str(_warm[m][1])
            for i, m in enumerate(modules)
        }
        path = _write_launcher(directory / "python", routes)
        try:
            subprocess.run([str(path), "-c", ""], check=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        for module in modules:
            _serve(module, Path(routes[module]))
        _launchers[modules] = path
    return _launchers[modules]


def _serve(module: str, socket_path: Path) -> None:
    """Starts `module`'s warm process at `socket_path`, unless it runs."""
    if module in _warm:
        return
    process = subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import serve; serve({str(socket_path)!r}, {module!r})"],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    if process.stdout.readline() != READY:
        raise SparkInfrastructureError(f"the warm process for {module} did not start (exit {process.poll()})")
    atexit.register(_stop, process)
    _warm[module] = process, socket_path


def forks(module: str = RUNNER) -> int:
    """How many runs of `module` its warm process has forked so far (0 before it started): what a test
    reads to see that Spark's runners, or the trials' drivers, came from it."""
    return sum(not line.startswith("-") for line in _log(module))


def running(module: str) -> dict[int, int]:
    """Each launcher whose run of `module` has not exited, and that run's pid (launcher 0: not known).
    The log is read in order, so a pid the system gives again (it wraps at `pid_max`, 32768 here) names
    the run it was given to last, and a run that exited names none.

    >>> running("tests.never_started")
    {}
    """
    by_launcher: dict[int, int] = {}
    for line in _log(module):
        if line.startswith("-"):
            exited = int(line[1:])
            by_launcher = {launcher: run for launcher, run in by_launcher.items() if run != exited}
        else:
            run, _, launcher = line.partition(" ")
            by_launcher[int(launcher or 0)] = int(run)
    return by_launcher


def _log(module: str) -> list[str]:
    log = _forked_log(_warm[module][1]) if module in _warm else None
    return log.read_text().splitlines() if log is not None and log.exists() else []


def _forked_log(socket_path: Path) -> Path:
    """The log of what the warm process at `socket_path` forked, beside its socket."""
    return socket_path.with_suffix(f".{FORKED}")


def _stop(process: subprocess.Popen) -> None:
    """Stops a warm process and waits for it, so its runners' CPU is counted as this process's children's."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _write_launcher(path: Path, routes: dict[str, str]) -> Path:
    """The launcher at `path`: it has the warm process at `routes[module]` fork `-m module`."""
    code = LAUNCHER.read_text()
    code = code.replace("ROUTES: dict = {}", f"ROUTES: dict = {routes!r}", 1)
    code = code.replace('PYTHON = ""', f"PYTHON = {sys.executable!r}", 1)
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
    os.environ.update(WARM_ENV.get(module, {}))  # before the imports read it; a run gets its launcher's
    _import_for(module)
    prepare = getattr(sys.modules[module], "warm", None)  # a module's own warm imports (a trial's driver)
    if callable(prepare):
        prepare()
    _serve_forks(socket_path, module, sys.stdout.fileno())


def in_this_group(directory: Path, *modules: str) -> Path:
    """The executable to give Spark as the Python that runs `modules` (`launcher`), each forked from a warm
    process this process forks now, in its process group: a SIGKILL of the group (a killable driver's crash)
    takes the warm processes and the runs they forked that stay in it, as it takes the Python Spark starts
    cold (a daemon leads a group of its own either way, and ends when its JVM does). A forked process keeps
    only the thread that forked it, so each warm process runs one thread, whatever this process runs; each
    imports what `serve` imports for its module, on top of this process's own imports.

    >>> with cold():
    ...     in_this_group(scratch.directory("group-"), RUNNER).name
    'python'
    """
    routes = {m: str(directory / f"{i}.socket") for i, m in enumerate(modules)}
    path = _write_launcher(directory / "python", routes)
    if not available(*modules):  # the launcher runs the real interpreter: no socket answers
        return path
    for module in modules:
        read, write = os.pipe()
        if os.fork() == 0:
            os.close(read)
            try:
                _import_for(module)
                _serve_forks(routes[module], module, write)
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as ready:
            if ready.readline() != READY:
                raise SparkInfrastructureError(f"the warm process for {module} in this group did not start")
    return path


def _import_for(module: str) -> None:
    """Imports `module` and what its runs import first (`WARM_IMPORTS`; otherwise our sources)."""
    for name in (module, *WARM_IMPORTS.get(module, (EVENT_SOURCE,))):
        __import__(name)


def leading_a_group(module: str, *group: str) -> tuple[Path | None, Path | None]:
    """For a driver that leads a process group of its own (a killable one): the launcher that forks `module`
    warm, and the directory for the warm processes it forks into its group for `group` (`python_in_group`);
    both None where they cannot run, and the driver then starts cold. The directory is under this process's
    scratch root, short enough for a socket's path (107 bytes at most).

    >>> with cold(RUNNER):
    ...     leading_a_group("tests.never_started", RUNNER)
    (None, None)
    """
    warm = launcher(module) if available(module, *group) else None
    return warm, (scratch.directory("group-") if warm is not None else None)


def python_in_group(directory: str | None, *modules: str) -> None:
    """In such a driver, before its JVM starts: the Python the JVM starts for `modules` is forked in the
    driver's group (`in_this_group`, at `directory`), from the JVM's first lookup of sources on; nothing
    without a directory (`leading_a_group` gave none)."""
    if directory:
        os.environ["PYSPARK_PYTHON"] = str(in_this_group(Path(directory), *modules))


def _serve_forks(socket_path: str, module: str, ready: int) -> None:
    """Listens at `socket_path`, says `READY` on `ready`, then forks one run of `module` per launcher that
    connects, until its parent exits or it is sent SIGTERM."""
    parent, forked = os.getppid(), _forked_log(Path(socket_path))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    os.write(ready, READY)
    children: dict[int, socket.socket] = {}  # runner pid -> its launcher's connection
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    stopping: list[int] = []  # SIGTERM: the harness is exiting (`_stop`)
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    while os.getppid() == parent and not stopping:
        for key, _ in selector.select(timeout=0.05):
            if key.fileobj is listener:
                _accept(listener, selector, children, module, forked)
            else:
                _launcher_gone(key.fileobj, selector, children)  # type: ignore[arg-type]
        _reap(selector, children, forked)
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
        log.write(f"{pid} {_peer(conn)}\n")
    with contextlib.suppress(OSError):  # a launcher gone meanwhile: its closed connection kills the runner
        conn.sendall(f"{pid}\n".encode())
    children[pid] = conn
    selector.register(conn, selectors.EVENT_READ)


def _peer(conn: socket.socket) -> int:
    """The pid of the launcher at the other end of `conn` (0 where the system does not say)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return 0
    return struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))[0]


def stood_in_for(launchers: list[int]) -> list[int]:
    """The runs, not yet exited, that this process's warm processes forked for the launchers `launchers`,
    in the order of `launchers` (`running`).

    >>> stood_in_for([])
    []
    """
    run_of = {launcher: run for module in _warm for launcher, run in running(module).items()}
    return [run_of[pid] for pid in launchers if pid in run_of]


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
        if request.get("session"):  # its launcher leads a session of its own: it does too
            os.setsid()
        for sock in close:  # the warm process's, not the runner's
            sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.path[:0] = [p for p in python_path(request["env"]) if p not in sys.path]
        sys.argv = [module, *request["argv"][2:]]
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
            kill_with_group(pid)


def kill_with_group(pid: int) -> None:
    """SIGKILLs `pid`, and the process group it leads if it leads one (a daemon's: its workers)."""
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _reap(selector: selectors.BaseSelector, children: dict, forked: Path) -> None:
    """Each runner that exited: its code to its launcher, its exit to the log (`running`)."""
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
        with forked.open("a") as log:
            log.write(f"-{pid}\n")
        with contextlib.suppress(OSError):
            conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(conn)
        conn.close()
