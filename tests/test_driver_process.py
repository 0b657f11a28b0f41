"""A driver process the harness starts in a group of its own dies, with everything it started, when the harness
does (`spark_impl/driver_process.die_with_harness`), however the harness ended."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import alive, gone_within

# The guard as a driver process calls it, first thing (`killable.main`).
GUARDED = "from frontier_harness.spark_impl.driver_process import die_with_harness; die_with_harness()"

# A driver as `killable.launch` starts one (its own session, stdin a pipe the harness holds) that starts a child
# in its group, as a driver starts its JVM, then prints the child's pid and waits.
DRIVER = """
import subprocess, sys, time
from frontier_harness.spark_impl.driver_process import die_with_harness
die_with_harness()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdin=subprocess.DEVNULL)
print(child.pid, flush=True)
time.sleep(120)
"""


def test_a_driver_and_its_group_are_sigkilled_once_the_harness_pipe_ends():
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        child = int(driver.stdout.readline())
        time.sleep(0.5)
        assert driver.poll() is None and alive(child), "the driver died while the harness was there"
        driver.stdin.close()  # what the harness's exit does to the pipe, however it ends
        assert driver.wait(timeout=30) == -signal.SIGKILL
        assert gone_within(30, child), "the driver's child outlived it"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)


def test_a_process_that_does_not_lead_its_group_kills_nothing():
    """Its group is the process's that started it (here a stand-in for the harness, itself in a session of its
    own so that a wrong kill takes nothing else): not the driver's to kill, even once its stdin ends."""
    harness = (
        "import subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-c', {GUARDED + '; import time; time.sleep(1)'!r}], "
        "stdin=subprocess.DEVNULL, check=True)\n"
        "print('ok')\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", harness],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    assert ran.returncode == 0 and ran.stdout == "ok\n", ran


def test_a_driver_that_ends_on_its_own_exits_0_while_the_harness_still_holds_the_pipe():
    """The watch blocks in the pipe's read while the interpreter exits: it must not abort the exit (a driver
    that ran its batch without reaching its crash point exits 0, and the harness says so)."""
    driver = subprocess.Popen(
        [sys.executable, "-c", GUARDED], stdin=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        assert driver.wait(timeout=30) == 0, driver.stderr.read()
    finally:
        driver.stdin.close()


def test_a_driver_whose_stdin_is_no_pipe_is_not_GUARDED():
    """Run by hand (stdin /dev/null, at once at its end): the driver runs on, as it would without the guard."""
    ran = subprocess.run(
        [sys.executable, "-c", f"{GUARDED}; import time; time.sleep(1); print('ran')"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    assert ran.returncode == 0 and ran.stdout == "ran\n", ran


def test_a_killable_driver_is_launched_with_the_pipe_and_guards_itself_first(monkeypatch, tmp_path):
    """The wiring: `killable.launch` hands the driver (forked warm through its launcher) a pipe for stdin, in a
    session of its own, and its `main` arms the guard before anything else (before its JVM starts)."""
    from frontier_harness.spark_impl.streaming import killable

    started: dict = {}
    monkeypatch.setattr(killable.warm_runner, "launcher", lambda *modules: tmp_path / "launcher")
    monkeypatch.setattr(
        killable.subprocess, "Popen", lambda argv, **options: started.update(options, argv=argv)
    )
    monkeypatch.setattr(killable, "spec_json", lambda *args: {})
    killable.launch(SimpleNamespace(root=tmp_path, log=tmp_path), object, object, "before_offsets")
    assert started["stdin"] is subprocess.PIPE and started["start_new_session"] is True
    assert started["argv"][:3] == [str(tmp_path / "launcher"), "-m", killable.KILLABLE]

    class Guarded(Exception):
        pass

    def guard() -> None:
        raise Guarded

    monkeypatch.setattr(killable, "die_with_harness", guard)
    with pytest.raises(Guarded):
        killable.main(str(tmp_path / "never-read.json"))


@pytest.mark.parametrize("planted", [False, True])
def test_the_ttl_suites_driver_is_forked_warm_and_a_planted_one_starts_cold(planted, monkeypatch, tmp_path):
    """The wiring of `ttl.state.driver.launch`: the production driver goes through its warm launcher, in a
    session of its own, with a directory for the Python its JVM starts (`warm_runner.in_this_group`); another
    module (a planted driver, `tests.ttl_clock_behind` under libfaketime) is the real interpreter, cold."""
    import json

    from frontier_harness.spark_impl.ttl.state import driver

    started: dict = {}
    monkeypatch.setattr(driver.warm_runner, "launcher", lambda *modules: tmp_path / "launcher")
    monkeypatch.setattr(
        driver.subprocess, "Popen", lambda argv, **options: started.update(options, argv=argv)
    )
    module = "tests.ttl_clock_behind" if planted else driver.DRIVER
    launched = driver.launch(tmp_path, object, 1000, [], module=module)
    python = json.loads(Path(started["argv"][3]).read_text())["python"]
    assert started["start_new_session"] is True and started["argv"][1:3] == ["-m", module]
    if planted:
        assert started["argv"][0] == sys.executable and python is None and launched.python is None
    else:
        assert started["argv"][0] == str(tmp_path / "launcher") and python == str(launched.python)


def test_a_driver_that_outlives_the_wait_is_killed_with_its_group_and_is_infrastructure(
    monkeypatch, tmp_path
):
    """`driver_process.ended`, which every wait for a driver goes through: one that has not ended within
    `TIMEOUT_S` (a hang) is SIGKILLed with its group, its child too, reaped, and is infrastructure (exit 3)
    naming the driver; before, the wait's `TimeoutExpired` was judged as the job's failure, the driver left
    running."""
    from frontier_harness.spark_impl import driver_process
    from frontier_harness.spark_impl.errors import SparkInfrastructureError

    monkeypatch.setattr(driver_process, "TIMEOUT_S", 0.5)
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        child = int(driver.stdout.readline())
        with pytest.raises(
            SparkInfrastructureError, match=r"armed at after_sink had not ended after 0.5 s; killed"
        ):
            driver_process.killed(driver, lambda: None, "after_sink", tmp_path / "driver.log")
        assert driver.returncode == -signal.SIGKILL
        assert gone_within(30, child), "the hung driver's child outlived it"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
