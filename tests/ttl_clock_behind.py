"""A ttl_spark_state driver whose JVM runs an hour behind the real clock when it restarts the query: the
production driver (`frontier_harness.spark_impl.ttl.state.driver`) with its JVM under Debian's libfaketime
(`FAKETIME_DONT_FAKE_MONOTONIC=1`, `FAKETIME_FORCE_MONOTONIC_FIX=0`). The planted restart of
`tests.planted_ttl_state:restarts_an_hour_behind`: every restart of the query runs on a machine whose clock is
behind the first start's, so the batch timestamp goes back. The query's first start (the round its first batch
is, in the harness's session or in a driver that is killed) stays on the real clock: when every driver was
behind, a run whose first round crashed started in one, every clock it read was an hour behind, and nothing
went back (the suite's search held on it). This Python process is not faked (libfaketime breaks Python's
`time.sleep`), nor are the Python workers the JVM starts.

`python -m tests.ttl_clock_behind SPEC`, as the production driver is run.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path

LIBFAKETIME = "/usr/lib/*/faketime/libfaketime.so.1"
# libfaketime 0.9.10's "forced monotonic fix" (on by default on this glibc) makes every timed wait of the JVM
# (Object.wait, LockSupport.parkNanos) return at once and Thread.sleep(1) take ~26 ms: the JVM spins, and a
# driver's round took 405 s instead of 15. Off, waits and sleeps keep their length and the wall clock is
# still an hour behind (measured with a 10-line Java program: java under both settings).
FAKED_JVM = {"FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_FORCE_MONOTONIC_FIX": "0"}
BEHIND = "-3600s"


def fake_the_jvm_clock(offset: str, root: Path) -> None:
    """The JVM started after this call (and only it) reads a wall clock `offset` away: the Python workers it
    starts, on the driver (transformWithState's) and the executors, run through a script in `root` that
    drops libfaketime first (under it, Python's `time.sleep` fails with EINVAL)."""
    [library] = glob.glob(LIBFAKETIME)
    python = root / "python-on-the-real-clock"
    python.write_text(
        f'#!/bin/sh\nunset LD_PRELOAD FAKETIME {" ".join(FAKED_JVM)}\nexec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    os.environ.update(LD_PRELOAD=library, FAKETIME=offset, PYSPARK_PYTHON=str(python), **FAKED_JVM)


def restarts(spec_file: Path) -> bool:
    """Whether the driver of `spec_file` restarts the query: its first round is not the query's first (one that
    only runs a crashed round again has none).

    >>> import tempfile; spec = Path(tempfile.mkdtemp()) / "driver.json"
    >>> _ = spec.write_text('{"rounds": [[0, 0, []]]}'); restarts(spec)
    False
    >>> _ = spec.write_text('{"rounds": []}'); restarts(spec)
    True
    """
    rounds = json.loads(spec_file.read_text())["rounds"]
    return not rounds or rounds[0][0] > 0


if __name__ == "__main__":
    if restarts(Path(sys.argv[1])):
        fake_the_jvm_clock(BEHIND, Path(sys.argv[1]).parent)
    from frontier_harness.spark_impl.ttl.state.driver import main

    main(sys.argv[1])
