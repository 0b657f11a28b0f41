"""The harness as installed: run from a virtualenv that is not on PATH, Spark's own log kept off the terminal.

One CLI run in a fresh process (its own JVM): a streaming trial (its source is a
Python data source, so Spark's Python workers run) replayed through a virtualenv's
interpreter, with a PATH whose first `python3` is not that interpreter (it fails if
run). Spark's workers must use the harness's interpreter; Spark's and the JVM's
lines go to `.frontier-harness/spark.log`, none to stderr.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.spark_impl import session

ROOT = Path(__file__).resolve().parents[1]
ONE_TRIAL = History(
    "partitioned",
    (Action("produce", {"partition": 0, "data": "r0"}), Action("trigger", {})),
)


def _venv(where: Path) -> Path:
    """A virtualenv over this environment's packages (the harness's dependencies); its python.

    Not `--system-site-packages`: run from inside a virtualenv, that exposes the *base* interpreter's
    packages, not this environment's (`No module named 'rich'` in a fresh venv). A `.pth` file adds this
    environment's site directories instead, their own `.pth` files included (`site.addsitedir`)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    lines = [f"import site; site.addsitedir({path!r})" for path in ours]
    (Path(purelib) / "frontier_harness_test_parent.pth").write_text("\n".join(lines) + "\n")
    return python


def test_the_virtualenv_a_test_builds_sees_this_environments_packages(tmp_path):
    """From inside a virtualenv too (the README's test command, run as most users run it)."""
    python = _venv(tmp_path / "venv")
    code = "import rich, pyspark, hypothesis, frontier_harness; print(frontier_harness.__file__)"
    ran = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().startswith(str(ROOT)), ran.stdout


def _wrong_python3(where: Path) -> Path:
    """A directory whose `python3` fails loudly, as one without pyarrow would in a Spark worker."""
    where.mkdir()
    shim = where / "python3"
    shim.write_text("#!/bin/sh\necho 'the wrong python3 ran' >&2\nexit 1\n")
    shim.chmod(0o755)
    return where


@pytest.fixture(scope="module")
def installed_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """`replay` of a one-trial streaming history through the venv's python, the venv's bin not on PATH."""
    tmp = tmp_path_factory.mktemp("installed")
    python = _venv(tmp / "venv")
    path = counterexample.write(
        Counterexample("streaming", "exactly_once", ONE_TRIAL, "spark", "planted for the install test"),
        tmp / "cx",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = os.pathsep.join([str(_wrong_python3(tmp / "bin")), env.get("PATH", "")])
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run(
        [str(python), "-m", "frontier_harness.properties.cli.main", "replay", str(path)],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return run, tmp


@pytest.mark.slow  # a fresh JVM and one streaming trial: 158 s for both tests on the loaded 2-core machine
@pytest.mark.spark
def test_spark_workers_use_the_harness_interpreter_not_the_first_python3_on_path(installed_run):
    run, _ = installed_run
    assert run.returncode == 0, run.stdout + run.stderr
    assert "holds now" in run.stdout


@pytest.mark.slow
@pytest.mark.spark
def test_spark_log_lines_go_to_the_log_file_not_stderr(installed_run):
    run, tmp = installed_run
    assert run.returncode == 0, run.stdout + run.stderr
    assert not [line for line in run.stderr.splitlines() if "WARN" in line], run.stderr
    log = tmp / ".frontier-harness" / "spark.log"
    assert log.exists()
    assert "WARN" in log.read_text()  # the JVM's start-up warnings are there, not lost


@pytest.mark.spark
def test_an_exception_pyspark_raises_is_logged_to_the_log_file_not_stderr(spark_session, capfd):
    """PySpark logs each exception it raises with a DataFrame's context as a JSON line of the Java stack: a
    user's `read` that raised in every trial printed hundreds of them among the harness's own report."""
    from pyspark.sql import functions as F

    if session._settings["verbose"] or session._settings["remote"] or os.environ.get("SPARK_REMOTE"):
        pytest.skip("a verbose or Connect session keeps PySpark's own logging")
    with pytest.raises(Exception, match="UNRESOLVED_COLUMN"):
        spark_session.range(1).select(F.col("no_such_column")).collect()
    err = capfd.readouterr().err
    assert "DataFrameQueryContextLogger" not in err, err[-2000:]
    handlers = logging.getLogger("DataFrameQueryContextLogger").handlers
    [log] = [h.baseFilename for h in handlers if isinstance(h, logging.FileHandler)]
    assert Path(log).name == session.LOG.name and "no_such_column" in Path(log).read_text()


def test_verbose_adds_the_console_appender(tmp_path, monkeypatch):
    """`--verbose` shows Spark's lines on stderr too; without it log4j writes to the file only."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(session._settings, "verbose", False)
    quiet = session._log4j_properties().read_text()
    monkeypatch.setitem(session._settings, "verbose", True)
    verbose = session._log4j_properties().read_text()
    ref = "rootLogger.appenderRef.console.ref = console"
    assert ref not in quiet and ref in verbose
    assert f"fileName = {tmp_path / '.frontier-harness' / 'spark.log'}" in quiet


def test_a_short_lived_jvm_compiles_with_c1_alone_and_the_harnesss_own_only_its_hottest_methods(
    tmp_path, monkeypatch
):
    """A killable trial driver's JVM runs one query and dies (`SHORT_LIVED_JVM`); the harness's runs for minutes
    (`LONG_LIVED_JVM`); both start processes with `vfork` (`EVERY_JVM`)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(session._settings, "short_lived", False)
    harness = session._java_options({}).split()
    monkeypatch.setitem(session._settings, "short_lived", True)
    killable = session._java_options({"spark.driver.extraJavaOptions": "-Xss4m"}).split()
    assert not set(session.SHORT_LIVED_JVM) & set(harness) and set(session.LONG_LIVED_JVM) <= set(harness)
    assert not set(session.LONG_LIVED_JVM) & set(killable)
    assert set(session.SHORT_LIVED_JVM) <= set(killable) and killable[-1] == "-Xss4m"  # the user's still last
    assert set(session.EVERY_JVM) <= set(harness) & set(killable)


def test_cli_verbose_flag_reaches_the_session(monkeypatch):
    from frontier_harness.properties.cli import main as cli

    seen = {}
    monkeypatch.setattr("frontier_harness.properties.adapters.spark.configure", lambda **kw: seen.update(kw))
    assert cli.main(["--verbose", "list"]) == 0
    assert seen["verbose"] is True
