"""The executable Spark starts as a trial source's Python: Spark's source runner forked warm, anything else exec'd.

Run as `python -SE` (standard library only, no site: a few milliseconds). Spark starts
`EXEC -m pyspark.sql.streaming.python_streaming_source_runner` for every start of a streaming query
over a Python data source; this launcher asks the warm process
(`frontier_harness.spark_impl.streaming.warm_runner`) to fork that runner with this
process's environment, directory and standard streams, then stands in for it: SIGTERM (Spark stopping
its worker) is passed on, and the runner's exit code is this process's. Any other command, or no warm
process to ask, runs the real interpreter in place (`os.execv`), as if this launcher were not there.

`warm_runner.launcher` writes a copy of this file with `SOCKET`, `PYTHON` and `MODULE` filled in.
"""

import json
import os
import signal
import socket
import sys

SOCKET = ""  # the warm process's Unix socket
PYTHON = ""  # the real interpreter
MODULE = ""  # the module it runs warm: Spark's source runner


def _real() -> None:
    os.execv(PYTHON, [PYTHON, *sys.argv[1:]])


def _forked(conn: socket.socket) -> int:
    """Sends the request and the standard streams; returns the runner's exit code."""
    request = json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}).encode()
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
    if sys.argv[1:] != ["-m", MODULE] or not SOCKET:
        _real()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(SOCKET)
    except OSError:
        _real()
    sys.exit(_forked(conn))


if __name__ == "__main__":
    main()
