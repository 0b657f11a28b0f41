"""`--remote` at an address where no Spark Connect server answers is exit 3 within seconds (a hung one's
first call within `PROBE_S`), naming the address and gRPC's reason, with no counterexample written:
PySpark's client alone retried such a server for ten minutes without a line (`spark_impl.connect_client`).
No JVM starts."""

from __future__ import annotations

import concurrent.futures
import http.server
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from frontier_harness.spark_impl.connect_client import PROBE_S

# Seconds a run may take to give up: the slowest case's deadline (`PROBE_S`) and a loaded machine's start-up;
# PySpark's own retries took ten minutes.
WITHIN_S = PROBE_S + 60


def _refusing() -> Iterator[int]:
    """A port bound but not listening: the kernel refuses every connection."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def _not_grpc() -> Iterator[int]:
    """An HTTP/1 server: it answers gRPC's HTTP/2 preface with an error page."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _hung() -> Iterator[int]:
    """A gRPC server that takes every call and never answers it (a hung Connect server)."""
    import grpc

    release = threading.Event()

    class Hang(grpc.GenericRpcHandler):
        def service(self, handler_call_details):
            return grpc.unary_unary_rpc_method_handler(lambda request, context: release.wait() and b"")

    server = grpc.server(concurrent.futures.ThreadPoolExecutor(4), handlers=[Hang()])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        release.set()
        server.stop(0)


def _silent() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never says a word."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield s.getsockname()[1]


@pytest.mark.parametrize(
    "server",
    [
        _refusing,
        _not_grpc,
        pytest.param(_silent, marks=pytest.mark.slow),  # gRPC's own connection deadline is 20 s
        pytest.param(_hung, marks=pytest.mark.slow),  # the first call's deadline (`PROBE_S`)
    ],
)
def test_a_remote_no_connect_server_answers_at_is_exit_3_in_seconds_naming_it(server, tmp_path):
    for port in server():
        address = f"sc://127.0.0.1:{port}"
        command = [sys.executable, "-m", "frontier_harness.properties.cli.main", "--remote", address]
        command += ["check", "--suite", "collections", "--profile", "ci", "--out", str(tmp_path / "out")]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"check --remote {address} still running after {WITHIN_S} s: PySpark's own retries")
        output = done.stdout + done.stderr
        assert done.returncode == 3, output
        assert f"could not reach a Spark Connect server at {address}: " in output, output
        assert "RETRIES_EXCEEDED" not in output, output
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
