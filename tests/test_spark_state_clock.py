"""A clock set back: a stateful query's driver restarted on a wall clock an hour behind (Debian's faketime).

Pins what PySpark 4.3 does (docs/ttl.md): a new batch's `batchTimestampMs` is the trigger clock's
reading with no clamp against the previous batch's, so after the restart the batch timestamp goes
back, `validate-checkpoint` reports `timestamp monotone`, and TTL runs on the clock set back.
A first driver on the real clock puts a value with a 3 s TTL and reads it (batch 0), then, 6 s
later, reads it expired (batch 1); a second driver, its JVM under libfaketime an hour behind batch
1's clock, reads it again and puts and reads another (batch 2). `ci/install-test-packages.sh` installs faketime.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frontier_harness.properties.cli.main import main as cli
from tests.ttl_state_driver import LIBFAKETIME

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
]  # two driver processes; a JVM under libfaketime starts slowly
ROOT = Path(__file__).resolve().parents[1]
TTL_MS = 3000
SET_BACK_S = (
    3600  # the second driver's clock: an hour before batch 1's (a JVM under libfaketime starts slowly)
)


def _drive(root: Path, first: int, rounds: list, offset: str | None = None) -> dict:
    args = [
        sys.executable,
        "-m",
        "tests.ttl_state_driver",
        str(root),
        str(TTL_MS),
        str(first),
        json.dumps(rounds),
    ]
    done = subprocess.run(
        args + ([offset] if offset else []),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=2400,
    )
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and result, done.stderr[-3000:]
    return json.loads(result[-1].removeprefix("RESULT "))


def test_a_driver_restarted_on_a_clock_set_back_journals_a_batch_timestamp_that_goes_back(tmp_path, capsys):
    if not glob.glob(LIBFAKETIME):
        pytest.fail("Debian's faketime is missing: run ci/install-test-packages.sh")
    root = tmp_path / "query"
    first = _drive(
        root, 0, [[0, [["put", "a", "x"], ["get", "a", None]]], [2 * TTL_MS, [["get", "a", None]]]]
    )
    behind = time.time() - first["clocks"]["1"] / 1000 + SET_BACK_S
    rounds = [[0, [["get", "a", None], ["put", "c", "z"], ["get", "c", None]]]]
    found = _drive(root, 2, rounds, offset=f"-{behind:.0f}s")
    clocks = {int(b): ms for b, ms in found["clocks"].items()}
    answers = {(a["step"], a["key"]): a["value"] for a in found["answers"]}
    assert clocks[2] < clocks[1]  # no clamp: the new batch's timestamp is the clock set back
    assert {a["now"] for a in found["answers"] if a["step"] == 2} == {clocks[2]}  # and the batch runs on it
    assert answers[(0, "a")] == "x" and answers[(1, "a")] is None
    assert answers[(2, "a")] is None  # removed by the TTL cleanup of batch 1: it does not reappear
    assert answers[(2, "c")] == "z"
    code = cli(["validate-checkpoint", str(root / "checkpoint"), "--out", str(tmp_path / "cx")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1 and "timestamp monotone: the batch clock goes back: offsets/2" in out, out
