"""A Spark Connect session whose calls give up in seconds: the server asked once before anything runs,
every call's retries bounded.

PySpark's Connect client retries a server it cannot reach for ten minutes and more (`DefaultPolicy`: 15
retries, backing off to 60 s), and its exit hook does it again: `--remote` at a port nothing listened on ran
without a line until killed. Here a server that does not answer is `ConnectUnreachable` (exit 3) naming the
address and gRPC's reason, and the client is closed so that nothing retries at exit.

>>> waits(REACH) < 2 < waits(RUN) < 20 < PROBE_S < waits(DefaultPolicy())
True
"""

from __future__ import annotations

import concurrent.futures
import re
import warnings
from typing import Any

from pyspark.sql.connect.client.retries import DefaultPolicy, RetryPolicy

from frontier_harness.spark_impl.errors import ConnectUnreachable

# Asking a server that does not answer: refused, or not speaking gRPC, is exit 3 in about a second; one that
# accepts and never completes the connection, after gRPC's own 20 s connection deadline.
REACH = DefaultPolicy(max_retries=3, max_backoff=2_000, recognize_server_retry_delay=False)
# Every later call (a server gone in the middle of a run): about ten seconds of waits, the exit hook's as
# well. A server's own retry delay is not honoured (PySpark's default honours one of ten minutes).
RUN = DefaultPolicy(max_retries=5, max_backoff=5_000, recognize_server_retry_delay=False)
# A server that completed the connection and never answers the first call (a hung server) is let go after
# this many seconds: the call itself has no deadline (an hour's, or none before PySpark 4.3).
PROBE_S = 60


def bounded(session: Any, address: str) -> Any:
    """`session` (a Connect session at `address`) once its server answered a first call within `PROBE_S`,
    each call's retries bounded (`RUN`); else `ConnectUnreachable`, the client closed.

    >>> class Down:
    ...     class client:
    ...         set_retry_policies = close = staticmethod(lambda *policies: None)
    ...     version = property(lambda self: 1 / 0)
    ...     stop = lambda self: None
    >>> bounded(Down(), "sc://h:1")
    Traceback (most recent call last):
    ...
    frontier_harness.spark_impl.errors.ConnectUnreachable: could not reach a Spark Connect server at sc://h:1: division by zero
    """
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]", category=UserWarning)  # errors say it
    session.client.set_retry_policies([REACH])
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        first_call = pool.submit(lambda: session.version)  # one cheap call: `AnalyzePlan`
        try:
            first_call.result(timeout=PROBE_S)
        except Exception as exc:
            # ends a call still waiting; at exit PySpark skips a closed client (4.1: its call fails at once)
            session.client.close()
            session.stop()
            raise ConnectUnreachable(address, reason(exc, PROBE_S)) from exc
    return retrying_briefly(session)


def retrying_briefly(session: Any) -> Any:
    """`session` with its client's retries bounded (`RUN`): every Connect session the harness makes."""
    session.client.set_retry_policies([RUN])
    return session


def reason(exc: BaseException, seconds: float) -> str:
    """gRPC's `details` of a failed call, else the error's first line; a call that did not end in `seconds`
    says so.

    >>> reason(RuntimeError('<_InactiveRpcError>\\n  details = "failed to connect: Connection refused"\\n'), 60)
    'failed to connect: Connection refused'
    >>> reason(concurrent.futures.TimeoutError(), 60)
    'it accepted the connection and did not answer a first call within 60 s'
    """
    if isinstance(exc, concurrent.futures.TimeoutError):
        return f"it accepted the connection and did not answer a first call within {seconds} s"
    found = re.search(r'details = "([^"]*)"', str(exc))
    return found.group(1) if found else (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def waits(policy: RetryPolicy) -> float:
    """The most seconds `policy` waits between attempts, in all: each backoff `backoff_multiplier` times the
    last, up to `max_backoff`, with at most `jitter` ms added once it reaches `min_jitter_threshold`.

    >>> round(waits(DefaultPolicy()))  # PySpark's default: ten minutes and more
    614
    >>> waits(DefaultPolicy(max_retries=1, initial_backoff=2_000))  # jittered from the threshold on
    2.5
    """
    wait, total = float(policy.initial_backoff), 0.0
    for _ in range(policy.max_retries or 0):
        total += wait + (policy.jitter if wait >= policy.min_jitter_threshold else 0)
        wait = min(wait * policy.backoff_multiplier, policy.max_backoff or float("inf"))
    return total / 1000
