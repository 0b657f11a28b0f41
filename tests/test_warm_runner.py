"""Spark's source runner forked from a warm process (`spark_impl.streaming.warm_runner`): the
forked run is the one Spark would have started (environment, directory, streams, exit code), it dies with
its launcher, and anything else the launcher is asked to run is the real interpreter. The trials run
through it (every streaming and stateful suite test); `test_streaming_job` compares with a cold start."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frontier_harness.spark_impl.streaming import warm_runner

MODULE = "tests.warm_echo"


def _launcher() -> str:
    path = warm_runner.launcher(MODULE)
    assert path is not None, "the launcher cannot run here"
    return str(path)


def _launch(tmp_path, *args, **env):
    return subprocess.Popen(
        [_launcher(), "-m", MODULE, *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.getcwd(), **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("code", [3, 0])
def test_a_forked_run_has_the_launchers_environment_directory_streams_and_exit_code(code, tmp_path):
    launched = _launch(tmp_path, ECHO="from spark", CODE=str(code))
    out, _ = launched.communicate("a line on stdin\n", timeout=30)
    pid, cwd, echo, line, _, args = out.strip().split("|")
    assert int(pid) != launched.pid  # forked by the warm process, not started by the launcher
    assert (cwd, echo, line, args) == (str(tmp_path), "from spark", "a line on stdin", "")
    assert launched.returncode == code


def test_a_forked_run_has_the_arguments_after_the_module_and_is_found_through_its_launcher_while_it_runs(
    tmp_path,
):
    """As Spark starts its daemon with the worker's module after its own (`-m pyspark.daemon pyspark.worker`);
    the warm process's log names the launcher each run stands behind while the run lives (`python_workers`
    ends a start's daemon through it), and none once it exited: a pid the system gives again is not it."""
    launched = _launch(tmp_path, "pyspark.worker", "x", SLEEP="60")
    launched.stdin.write("\n")
    launched.stdin.flush()
    shown = launched.stdout.readline().strip().split("|")
    assert shown[5] == "pyspark.worker x"
    assert warm_runner.stood_in_for([launched.pid, 1]) == [int(shown[0])]
    launched.terminate()
    launched.wait(timeout=10)
    assert _gone(int(shown[0]))
    deadline = time.monotonic() + 5
    while warm_runner.stood_in_for([launched.pid]) and time.monotonic() < deadline:
        time.sleep(0.05)  # the warm process logs the exit when it reaps the run
    assert warm_runner.stood_in_for([launched.pid]) == []


def test_the_warm_daemon_runs_no_thread_but_its_own_as_sparks_daemon_requires_before_it_forks():
    """Spark's daemon forks its workers and imports the worker's module in each, so that no thread runs when it
    forks; the warm process it is forked from imports that module, and pandas and pyarrow, which the workers
    import next (`warm_runner.WARM_IMPORTS`), and runs one thread (`warm_runner.WARM_ENV`)."""
    assert warm_runner.launcher(warm_runner.DAEMON) is not None
    warm = warm_runner._warm[warm_runner.DAEMON][0].pid
    assert "libarrow" in Path(f"/proc/{warm}/maps").read_text()
    assert len(os.listdir(f"/proc/{warm}/task")) == 1


def test_a_forked_run_has_the_launchers_python_path_but_sparks_own_jars(tmp_path):
    """Spark puts the jar of its Python utilities on its runners' `PYTHONPATH`: it holds no Python, and the
    forked run leaves it off its path (`warm_runner.python_path`); every other entry is on it."""
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    jar, code = jars / "spark-core.jar", tmp_path / "code"
    code.mkdir()
    path = os.pathsep.join([str(jar), str(code), os.getcwd()])
    launched = _launch(tmp_path, PYTHONPATH=path, SPARK_HOME=str(tmp_path / "spark"))
    out, _ = launched.communicate("\n", timeout=30)
    seen = out.strip().split("|")[4].split(os.pathsep)
    assert str(code) in seen and str(jar) not in seen, seen


def test_a_forked_run_dies_with_its_launcher(tmp_path):
    launched = _launch(tmp_path, SLEEP="60")
    launched.stdin.write("\n")
    launched.stdin.flush()
    pid = int(launched.stdout.readline().split("|")[0])
    launched.send_signal(signal.SIGKILL)
    launched.wait(timeout=10)
    assert _gone(pid), "the forked run outlived its SIGKILLed launcher"


def test_a_run_leads_a_session_of_its_own_when_its_launcher_does_and_dies_as_it_died(tmp_path):
    """A killable driver is started in a session of its own, and its crash SIGKILLs that session's group: the
    run it is forked as leads one too, and the launcher dies of the signal that killed the run, as the driver
    it stands in for would (`driver_process.killed` sees the death by SIGKILL)."""
    plain = _launch(tmp_path, SLEEP="60")
    plain.stdin.write("\n")
    plain.stdin.flush()
    run = int(plain.stdout.readline().split("|")[0])
    assert os.getsid(run) != run
    plain.kill()
    leader = subprocess.Popen(
        [_launcher(), "-m", MODULE],
        env={**os.environ, "PYTHONPATH": os.getcwd(), "SLEEP": "60"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    leader.stdin.write("\n")
    leader.stdin.flush()
    run = int(leader.stdout.readline().split("|")[0])
    assert os.getsid(run) == run and os.getpgid(run) == run
    os.killpg(run, signal.SIGKILL)
    assert leader.wait(timeout=10) == -signal.SIGKILL


def test_a_sigkill_of_a_group_takes_the_warm_processes_forked_into_it_and_their_runs(tmp_path):
    """`in_this_group`: the warm process a killable driver forks for its JVM's Python, and the run it forks,
    are in the driver's process group, so the crash's SIGKILL of that group takes them at once, as it takes
    the Python Spark starts cold."""
    script = (
        "import os, subprocess, sys; from pathlib import Path; "
        "from frontier_harness.spark_impl.streaming import warm_runner as w; "
        f"python = w.in_this_group(Path(sys.argv[1]), {MODULE!r}); "
        f"run = subprocess.Popen([str(python), '-m', {MODULE!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE, "
        "text=True, env={**os.environ, 'SLEEP': '60'}); run.stdin.write('\\n'); run.stdin.flush(); "
        "print(run.stdout.readline().split('|')[0], flush=True); run.wait()"
    )
    driver = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    run = int(driver.stdout.readline())
    warm = int(Path(f"/proc/{run}/stat").read_text().rsplit(")", 1)[1].split()[1])  # the run's parent
    assert warm != driver.pid and os.getpgid(warm) == os.getpgid(run) == driver.pid
    os.killpg(driver.pid, signal.SIGKILL)
    assert driver.wait(timeout=10) == -signal.SIGKILL
    assert _gone(run) and _gone(warm), "a warm process or its run outlived the SIGKILL of its group"


def test_sigterm_to_the_launcher_reaches_the_forked_run(tmp_path):
    launched = _launch(tmp_path, SLEEP="60")
    launched.stdin.write("\n")
    launched.stdin.flush()
    pid = int(launched.stdout.readline().split("|")[0])
    launched.terminate()  # as Spark stops its worker
    assert launched.wait(timeout=10) == 128 + signal.SIGTERM
    assert _gone(pid)


def test_a_launcher_that_dies_before_it_asks_leaves_the_warm_process_serving(tmp_path):
    """A connection closed before its request (a launcher killed at once) forks nothing; the next run works."""
    import socket as sockets

    socket_path = re.search(r"^ROUTES: dict = \{'[^']*': '([^']*)'\}", _launcher_text(), re.M).group(1)
    for partial in (b"", (100).to_bytes(8, "big") + b"{"):
        conn = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
        conn.connect(socket_path)
        conn.sendall(partial)
        conn.close()
    launched = _launch(tmp_path, CODE="5")
    launched.communicate("\n", timeout=30)
    assert launched.returncode == 5


def _launcher_text() -> str:
    return open(_launcher()).read()


@pytest.mark.parametrize("argv", [["-c", "import sys; print(sys.executable); sys.exit(4)"]])
def test_any_other_command_is_the_real_interpreter(argv):
    done = subprocess.run(
        [str(warm_runner.launcher(MODULE)), *argv], capture_output=True, text=True, timeout=30
    )
    assert (done.stdout.strip(), done.returncode) == (sys.executable, 4)


def test_a_launcher_that_cannot_run_means_cold_runners(monkeypatch, tmp_path):
    """Where the temporary directory is mounted noexec, Spark starts its runners itself: slower, not broken."""
    monkeypatch.setattr(warm_runner.scratch, "directory", lambda prefix: tmp_path)
    monkeypatch.setattr(warm_runner, "_write_launcher", lambda path, routes: tmp_path / "not-executable")
    (tmp_path / "not-executable").write_text("")
    assert warm_runner.launcher("tests.never_started") is None


def test_a_harness_that_exits_stops_its_warm_process_and_waits_for_it(tmp_path):
    """At exit the harness stops the warm process and waits for it: it is reaped (no entry left in /proc,
    not even a zombie's), so its CPU is counted among the harness's children's (`check_ci_cpu_s.waited` in
    `bench --only check_ci`); a process killed and never waited for stays a zombie until its parent exits."""
    script = (
        "import atexit, os; from frontier_harness.spark_impl.streaming import warm_runner as w; "
        f"w.launcher({MODULE!r}); warm = w._warm[{MODULE!r}][0].pid; atexit._run_exitfuncs(); "
        "print(warm, os.path.exists(f'/proc/{warm}'), flush=True)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    warm, left = done.stdout.split()
    assert left == "False", f"the warm process {warm} was not waited for: it is still in /proc"


def test_the_warm_process_exits_with_its_parent(tmp_path):
    script = (
        "from frontier_harness.spark_impl.streaming import warm_runner as w; "
        f"w.launcher({MODULE!r}); print(w._warm[{MODULE!r}][0].pid, flush=True); import os; os._exit(0)"
    )
    parent = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert _gone(int(parent.stdout.split()[0])), "the warm process outlived the harness that started it"


@pytest.mark.spark
def test_a_trial_observes_the_same_with_warm_and_cold_runners(spark_session):
    """The queries Spark starts with forked runners read, crash and recover as with the runners it starts
    itself: the same offsets, commits, sink and crash (batch timestamps aside); the warm processes forked
    the runners and the trial's driver processes in one run, and nothing in the other."""
    from frontier_harness.spark_impl.streaming.trial import run_trials
    from tests.test_suite_streaming import RESTART, history, produce, trigger

    crashed = history(
        ("query", {"sink": "shard", "trigger": "processingTime"}),
        *(produce("r0"), produce("r1", 1), trigger()),
        *(produce("r2"), trigger("after_offsets"), RESTART),
    )
    from frontier_harness.spark_impl.streaming.driver import DRIVER

    before = {m: warm_runner.forks(m) for m in (warm_runner.RUNNER, DRIVER)}
    [warm] = run_trials([crashed])
    during = {m: warm_runner.forks(m) for m in (warm_runner.RUNNER, DRIVER)}
    assert all(during[m] > before[m] for m in during), (before, during)  # runners and drivers forked warm
    with warm_runner.cold():
        [cold] = run_trials([crashed])
    assert {m: warm_runner.forks(m) for m in during} == during  # nothing forked warm
    durable = ("offsets", "commits", "sink", "crash", "down", "error", "upstream")
    assert {k: v for k, v in warm.items() if k[1] in durable} == {
        k: v for k, v in cold.items() if k[1] in durable
    }
    assert any(label == "crash" for _, label in warm)
