"""The second process of a `check` attaches to the JVM the first shares (`spark_impl.session.share`): one JVM
computes for both, each process with a session of its own, and the second letting its session go leaves the
first's running."""

from __future__ import annotations

import multiprocessing

import pytest

from frontier_harness.spark_impl import session
from frontier_harness.spark_impl.streaming.trial import EXPECTED_FAILURE_LOGGERS, expected_failures_unlogged

SPAWN = multiprocessing.get_context("spawn")  # as `background` starts its child: no session inherited


def attach_and_report(gateway: dict, answers) -> None:
    """In the second process: attach, run a job, set a SQL setting of its own, let the session go."""
    import os

    session.configure(gateway=gateway)
    spark = session.spark()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    count = spark.range(10).count()
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    session.stop()
    answers.put((int(pid), count, "PYSPARK_GATEWAY_PORT" in os.environ))


def run_trials_while_told(gateway: dict, inside, leave, done) -> None:
    """In the second process: attach, hold the loggers of expected failures off until told to leave."""
    session.configure(gateway=gateway)
    with expected_failures_unlogged():
        inside.set()
        leave.wait(timeout=120)
    session.stop()
    done.set()


@pytest.mark.spark
def test_a_second_process_computes_in_the_jvm_the_first_shares_with_a_session_of_its_own(spark_session):
    """The second process's jobs run in this process's JVM (the pid it reads there is this JVM's); its SQL
    setting is its session's alone; once it lets its session go, this one still runs jobs; and the gateway
    is not left in its environment, where a killable driver it starts would attach instead of starting a
    JVM of its own."""
    here = spark_session.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    partitions = spark_session.conf.get("spark.sql.shuffle.partitions")
    answers = SPAWN.Queue()
    try:
        child = SPAWN.Process(target=attach_and_report, args=(session.share(), answers))
        child.start()
        pid, count, inherited = answers.get(timeout=120)
        child.join(timeout=60)
    finally:
        session.unshare()
    assert (pid, count, inherited) == (int(here), 10, False)
    assert child.exitcode == 0
    assert spark_session.conf.get("spark.sql.shuffle.partitions") == partitions
    assert spark_session.range(3).count() == 3  # the shared context still runs


@pytest.mark.spark
def test_the_loggers_of_expected_failures_stay_off_until_the_last_process_sharing_the_jvm_leaves(
    spark_session,
):
    """Trials in two processes over one JVM: this process's trials end while the other's run, and the loggers
    stay off; when the other's end, they are back at their levels from before either began (not off for
    good, as when each process kept the levels it found)."""
    log4j = spark_session.sparkContext._jvm.org.apache.logging.log4j
    logger = log4j.LogManager.getLogger(EXPECTED_FAILURE_LOGGERS[0])
    before = logger.getLevel().toString()
    assert before != "OFF"
    inside, leave, done = SPAWN.Event(), SPAWN.Event(), SPAWN.Event()
    try:
        with expected_failures_unlogged():
            child = SPAWN.Process(target=run_trials_while_told, args=(session.share(), inside, leave, done))
            child.start()
            assert inside.wait(timeout=120)
        while_the_other_runs = logger.getLevel().toString()
        leave.set()
        assert done.wait(timeout=120)
        child.join(timeout=60)
    finally:
        leave.set()
        session.unshare()
    assert (while_the_other_runs, logger.getLevel().toString()) == ("OFF", before)
    assert child.exitcode == 0
