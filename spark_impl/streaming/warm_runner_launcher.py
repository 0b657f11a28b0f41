"""The executable Spark starts as Python: the modules it routes forked warm, anything else exec'd.

Run as `python -SE` (standard library only, no site: a few milliseconds). Spark starts
`EXEC -m pyspark.sql.streaming.python_streaming_source_runner` for every start of a streaming query
over a Python data source, and `EXEC -m pyspark.daemon pyspark.worker` (or
`EXEC -m pyspark.sql.streaming.transform_with_state_driver_worker`) for a user's processor's start; for a
module in `ROUTES` this launcher asks that module's warm process
(`frontier_harness.spark_impl.streaming.warm_runner`) to fork it with this
process's environment, directory and standard streams (and in a session of its own if this process leads
one: a killable driver's, whose crash SIGKILLs its group), then stands in for it: SIGTERM (Spark stopping
its worker) is passed on, and the run's exit is this process's (its code, or the signal that killed it).
Arguments after the module's name reach the forked run's `sys.argv`. Any other command, or no warm
process to ask, runs the real interpreter in place (`os.execv`), as if this launcher were not there.

`warm_runner.launcher` writes a copy of this file with `ROUTES` and `PYTHON` filled in.
"""

import json
import os
import signal
import socket
import sys

ROUTES: dict = {}  # module it runs warm -> the Unix socket of the warm process that forks it
PYTHON = ""  # the real interpreter


def _real() -> None:
    os.execv(PYTHON, [PYTHON, *sys.argv[1:]])


def _forked(conn: socket.socket) -> int:
    """Sends the request and the standard streams; returns the runner's exit code."""
    leads = os.getsid(0) == os.getpid()  # started in a session of its own: so is the run
    asked = {"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "session": leads}
    request = json.dumps(asked).encode()
    socket.send_fds(conn, [len(request).to_bytes(8, "big") + request], [0, 1, 2])
    lines = conn.makefile("r")
    pid = int(lines.readline())

    def stop(signum: int, frame: object) -> None:
        os.kill(pid, signum)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    code = lines.readline()
    if not code:  # the warm process is gone: its runner must not outlive this process
        os.kill(pid, signal.SIGKILL)
        return 1
    return int(code)


def main() -> None:
    route = ROUTES.get(sys.argv[2]) if sys.argv[1:2] == ["-m"] and len(sys.argv) > 2 else None
    if route is None:
        _real()
        return
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(route)
    except OSError:
        _real()
    _exit_as(_forked(conn))


def _exit_as(code: int) -> None:
    """Exits as the run did: with its exit code, or killed by the signal that killed it (a negative code)."""
    if code < 0:
        if -code != signal.SIGKILL:  # which has no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
