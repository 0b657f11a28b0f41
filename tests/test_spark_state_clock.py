"""A clock set back: a stateful query restarted in a driver whose JVM runs an hour behind (Debian's faketime).

Pins what PySpark 4.3 does (docs/ttl.md), and shows the ttl_spark_state suite's clock law fail on it: a
new batch's `batchTimestampMs` is the trigger clock's reading with no clamp against the previous
batch's, so after the restart the batch timestamp goes back, `validate-checkpoint` reports `timestamp
monotone`, and TTL runs on the clock set back. One history through the suite's own store
(`spark_impl/ttl/state/store.py`): batch 0, in the harness's session on the real clock, puts a value
with a 3 s TTL and reads it; batch 1, 6 s later, reads it expired; then the query restarts in a driver of
its own (`tests.ttl_clock_behind`, the planted `tests.planted_ttl_state:restarts_an_hour_behind`), which
reads it again and puts and reads another (batch 2). `ci/install-test-packages.sh` installs faketime.
Under libfaketime's default "forced monotonic fix" the JVM's timed waits returned at once and it ran ~27x
slower (one round in a driver of its own: 405 s instead of 15); with the fix off (`tests/ttl_clock_behind.py`)
this test ran 41 s (calibration: python-loop 0.668 s, jvm-start 0.229 s, load 10.85 on 2 cores). The
suite's own search catches the same planted restart too
(`tests/test_suite_ttl_spark_state.py::test_a_restart_on_a_clock_set_back_is_caught_small_through_the_suites_search`).
"""

from __future__ import annotations

import glob

import pytest

from frontier_harness.model.vocabulary.ttl import StateLabel
from frontier_harness.properties.checks.ttl import spark_state
from frontier_harness.properties.cli.main import main as cli
from frontier_harness.properties.engine.history import Action, History
from tests.ttl_clock_behind import LIBFAKETIME

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # a driver under libfaketime starts slowly
TTL_MS = 3000
RESTARTED = History(
    "total",
    (
        Action("open", {"ttl_ms": TTL_MS}),
        *(
            Action("put", {"key": "a", "value": "x"}),
            Action("get", {"key": "a"}),
            Action("trigger", {"wait_ms": 0}),
        ),
        *(Action("get", {"key": "a"}), Action("trigger", {"wait_ms": 2 * TTL_MS})),
        Action("restart", {}),
        *(
            Action("get", {"key": "a"}),
            Action("put", {"key": "c", "value": "z"}),
            Action("get", {"key": "c"}),
        ),
        Action("trigger", {"wait_ms": 0}),
    ),
)


def test_a_driver_restarted_on_a_clock_set_back_journals_a_batch_timestamp_that_goes_back(
    spark_session, tmp_path, capsys
):
    from frontier_harness.spark_impl.ttl.state.processor import TtlProcessor
    from frontier_harness.spark_impl.ttl.state.store import run_query

    if not glob.glob(LIBFAKETIME):
        pytest.fail("Debian's faketime is missing: run ci/install-test-packages.sh")
    root = tmp_path / "query"
    [obs] = run_query([RESTARTED], TtlProcessor, TTL_MS, driver="tests.ttl_clock_behind", keep=root)
    clocks = spark_state.clocks_of(obs)
    assert clocks[10] < clocks[5]  # no clamp: the new batch's timestamp is the clock set back
    assert obs[(10, StateLabel.NOW)] == {(clocks[10],)}  # and the batch runs on it
    assert obs[(10, StateLabel.RUN)] != obs[(5, StateLabel.RUN)]  # a driver of its own
    answers = {
        (step, key): value
        for (step, label), rows in obs.items()
        if label == StateLabel.GET
        for _, key, value in rows
    }
    assert answers[(3, "a")] == "x" and answers[(5, "a")] is None
    assert answers[(10, "a")] is None  # removed by the TTL cleanup of batch 1: it does not reappear
    assert answers[(10, "c")] == "z"
    outcome = spark_state.judge(RESTARTED, obs)  # the suite's clock law, which an in-JVM restart never fails
    assert not outcome.ok and outcome.message.startswith("the batch clock went back"), outcome.message
    assert outcome.step == 10
    code = cli(["validate-checkpoint", str(root / "checkpoint"), "--out", str(tmp_path / "cx")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1 and "timestamp monotone: the batch clock goes back: offsets/2" in out, out
