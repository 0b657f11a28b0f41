"""One Spark session per process, started lazily.

`local[2]` by default with the UI off, few shuffle partitions, 4 MB memory pages and quiet logs;
`SPARK_REMOTE` (or `configure(remote=...)`) selects a Spark Connect server, and
`configure(master=...)` a cluster master. `SparkSession.builder.remote("local[2]")`
starts a local Connect server, which is how the Connect test mode runs.

Spark's Python workers run the driver's own interpreter (`sys.executable`) unless
`PYSPARK_PYTHON` says otherwise, so an install in a virtualenv that is not on
PATH still finds its packages. Spark's and the JVM's own lines (log4j, the JVM's
start-up warnings, a Python worker's traceback, and the JSON line PySpark logs for each exception
it raises with a DataFrame's or SQL's context) go to `.frontier-harness/spark.log`,
not to the terminal; `configure(verbose=True)` (the CLI's `--verbose`) shows them too.

A process may compute in another's JVM: `share()` there opens it, and `configure(gateway=...)` here
attaches a session of this process's own to its running context (`attached`): a `check`'s second
process does, and so does every trial's driver process.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from frontier_harness.spark_impl.errors import (
    ConnectUnreachable,
    JavaMissing,
    SparkConfError,
    SparkUnavailable,
)

_settings: dict = {
    "master": None,
    "remote": None,
    "shuffle_partitions": 1,
    "verbose": False,
    "short_lived": False,
    "temporary": None,  # the JVM's java.io.tmpdir (`configure`); None: the machine's
    "gateway": None,  # another process's JVM to attach to (`share`), as {"port": ..., "secret": ...}
}
# A JVM that runs one query and dies (a killable trial driver, `spark_impl.streaming.killable`)
# compiles with C1 alone: C2 spent a third of its CPU on code it never ran again. Measured on 2 cores, the
# stateful suite's three SIGKILL trials, run together: 146 -> 97 JVM CPU seconds, 68 -> 51 s. The harness's
# own JVM, which runs for minutes, gains nothing from it.
SHORT_LIVED_JVM = ("-XX:TieredStopAtLevel=1",)
# The harness's own JVM, which plans thousands of small queries through Spark's planner, compiles a method
# once it is four times as hot as the JVM's default asks: most of its CPU went to the JIT compiler (Java
# Flight Recorder), on methods a run calls a few hundred times. Three suites of `check --profile ci`, side
# by side on 2 cores: 188 -> 174 s of CPU, 96 -> 90 s; scaled by 2, 6, 10 and 25 measured and not kept.
LONG_LIVED_JVM = ("-XX:CompileThresholdScaling=4",)
# Every JVM starts a process for each file Hadoop writes to a local disk (`chmod`: Hadoop's native library, which
# would set the mode in-process, is not in Spark's jars), for each directory Spark deletes (`rm -rf`) and for each
# Python worker: part 2 of `.ci/run` started some 50,000 in 35 minutes (process accounting). Java 17 starts
# each through `jspawnhelper`, a second program executed before the one asked for; `vfork` executes that
# one directly, as Java did before 12. Measured here (2,000 starts of `chmod` from one JVM, twice each):
# 2.2-2.3 ms of CPU a start through `jspawnhelper`, 1.3-1.4 ms with `vfork`.
EVERY_JVM = ("-Djdk.lang.Process.launchMechanism=VFORK",)
# A killed JVM runs no exit hook, so what it put in the machine's temporary directory stays there: RocksDB's
# native library (14 MB a copy), lz4's and snappy's, Spark's own directories. Our trials' kills had left 406
# copies of RocksDB's, 5.9 GB, in /tmp in a day of runs. A killable driver's JVM puts them in its launch's
# directory (`configure(temporary=...)`), which the trial removes.
LOG = Path(".frontier-harness") / "spark.log"  # relative to the working directory, as counterexamples are
# PySpark 4 logs every exception it raises with a DataFrame's or SQL's context (`PySparkException._log_exception`),
# as a JSON line of the whole Java stack, to stderr: a user's job whose `read` raised in every trial printed
# 252 such lines, a few kilobytes each, around the harness's own report of it.
QUERY_CONTEXT_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")

# Measured on 2 cores (collections, 20-update histories): whole-stage codegen costs
# ~2-4 s of compilation per distinct plan and wins nothing at these sizes
# (10k histories/job: 1,018/s with codegen, 1,590/s interpreted; 4/job: 4.6 s vs 0.4 s).
INTERPRETED = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}
# PySpark 4 records each Column operation's Python call site in the JVM for error messages (the DataFrame
# query context): ~10 py4j round trips per operator, so an observer that builds its expressions made
# 10,000-20,000 round trips per job, most of a small job's fixed cost. Our plans are built by code, not
# typed by a user: their call sites tell nobody anything. Measured on 2 cores (`bench --only spark_overhead`).
NO_CALL_SITES = {"spark.python.sql.dataFrameDebugging.enabled": "false"}
# Spark sizes its memory pages from the heap and the cores: 64 MB here, allocated (and zeroed) whole by every
# aggregation or sort that holds a row, however few. Most of our tasks hold a few rows; with 4 MB pages,
# measured on 2 cores: `bench --only spark_overhead` 0.36 -> 0.33 s (collections 0.66 -> 0.52, summary
# 1.55 -> 1.13), and the build of reclocking's broadcast sides ~0.1 s shorter.
SMALL_PAGES = {"spark.buffer.pageSize": "4m"}
# A batch of at most SMALL_BATCH histories (the shrinking lane's examples, a replay) is a small job:
# its cost is fixed cost, not data. Measured on 2 loaded cores (`bench --only spark_overhead`, one
# history per call, median over 11 suites): broadcast joins cost a Spark job each and constraint
# inference a good share of the optimizer's time, so small jobs plan sort-merge joins over their
# few rows and skip optimizer rules that only pay on large data; larger batches keep Spark's defaults.
SMALL_BATCH = 64
SMALL_JOB = {
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.constraintPropagation.enabled": "false",
    "spark.sql.optimizer.excludedRules": ",".join(
        f"org.apache.spark.sql.catalyst.optimizer.{rule}"
        for rule in (
            "PruneFilters",
            "RemoveRedundantAliases",
            "FoldablePropagation",
            "InferFiltersFromGenerate",
            "SimplifyBinaryComparison",
            "UnwrapCastInBinaryComparison",
            "PushFoldableIntoBranches",
            "OptimizeWindowFunctions",
            "InjectRuntimeFilter",
        )
    ),
}
# A larger batch's inputs go to Spark as RDDs, not as rows held in the plan (a `LocalRelation`, which
# `createDataFrame` makes of up to 48 MB of Arrow): every analysis rule and check walks a plan's rows, and
# an observer's plan is analysed once per DataFrame operation that builds it. Measured on 2 cores (summary,
# 5,000 histories a call, warm, side by side): building its plan 3.1-3.4 s -> 1.0-1.3 s, running it
# 5.1-5.6 s -> 3.6-4.9 s. Small batches keep the `LocalRelation`: no job to read it.
LARGE_JOB = {"spark.sql.execution.arrow.localRelationThreshold": "0"}
_session = None
_small_jobs: bool | None = None  # whether the session's settings are SMALL_JOB's now (None: not set yet)
_starts = 0  # sessions this process started (`mutate` shows the JVM is started once per run)
_shares: list = []  # the Py4J servers this process's JVM opened for other processes (`share`)


def configure(
    master: str | None = None,
    remote: str | None = None,
    shuffle_partitions: int | None = None,
    verbose: bool | None = None,
    short_lived: bool | None = None,
    gateway: dict | None = None,
    temporary: Path | None = None,
) -> None:
    """Chooses where the session runs, whether Spark's own log lines reach stderr, whether its JVM is
    `short_lived` (`SHORT_LIVED_JVM`) or another process's (`gateway`: what `share` answered there), and
    the directory its JVM's temporary files go to (`temporary`, made here; one a killed JVM leaves behind
    is its launcher's to remove); only before it has started."""
    chosen = {
        "master": master,
        "remote": remote,
        "shuffle_partitions": shuffle_partitions,
        "verbose": verbose,
        "short_lived": short_lived,
        "gateway": gateway,
        "temporary": temporary,
    }
    if temporary is not None:
        temporary.mkdir(parents=True, exist_ok=True)
    _settings.update({key: value for key, value in chosen.items() if value is not None})


def user_conf() -> dict:
    """`FRONTIER_HARNESS_SPARK_CONF="k=v,k=v"`: Spark settings applied last (e.g. codegen back on for a cluster)."""
    pairs = [
        item.split("=", 1)
        for item in os.environ.get("FRONTIER_HARNESS_SPARK_CONF", "").split(",")
        if item.strip()
    ]
    if bad := [p[0] for p in pairs if len(p) != 2]:
        raise SparkConfError(f"expected key=value, got {bad[0]!r}")
    return {k.strip(): v.strip() for k, v in pairs}


def java_available() -> bool:
    """Whether a `java` executable is on PATH or under JAVA_HOME."""
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and os.access(os.path.join(home, "bin", "java"), os.X_OK)))


def spark():
    """The process's session, started on first use."""
    global _session, _starts
    if _session is None:
        _session = _start()
        _starts += 1
    return _session


def size_jobs_for(histories: int) -> None:
    """Sets the session for a batch of `histories`: `SMALL_JOB` settings up to `SMALL_BATCH` histories,
    `LARGE_JOB` settings above, Spark's defaults for the other's; the user's `FRONTIER_HARNESS_SPARK_CONF`
    wins over each. Nothing when already so set."""
    global _small_jobs
    small = histories <= SMALL_BATCH
    if _small_jobs == small:
        return
    conf, user = spark().conf, user_conf()
    ours, theirs = (SMALL_JOB, LARGE_JOB) if small else (LARGE_JOB, SMALL_JOB)
    for key, value in ours.items():
        conf.set(key, user.get(key, value))
    for key in theirs.keys() - ours.keys():
        if key in user:
            conf.set(key, user[key])
        else:
            conf.unset(key)
    _small_jobs = small


def starts() -> int:
    """How many sessions this process has started (a restart after a failure counts)."""
    return _starts


def cancel_jobs() -> None:
    """Cancels the session's running jobs (called from another thread while one waits on them)."""
    if _session is None:
        return
    if _remote() or _settings["gateway"]:  # the session's own jobs: the JVM may run another process's
        _session.interruptAll()
    else:
        _session.sparkContext.cancelAllJobs()


def started() -> bool:
    return _session is not None


def stop() -> None:
    """Stops the session (tests that kill the JVM start a fresh one afterwards); an attached one (`gateway`)
    is let go, its JVM and context left running for the process that shares them."""
    global _session, _small_jobs
    _small_jobs = None
    if _session is not None:
        try:
            if not _settings["gateway"]:
                _session.stop()
        finally:
            _session = None


def share() -> dict | None:
    """This process's JVM for another process to attach to (`configure(gateway=...)` there): a Py4J server
    of its own in the JVM (Spark's `Py4JServer`, as a trial's driver process gets), its port and secret;
    None under Spark Connect (no JVM here). The other process's session is a new session over this one's
    SparkContext (`attached`): its own SQL settings, views and registered sources; the JVM's compiled code,
    memory and Python workers shared. `unshare` closes the servers."""
    if _remote():
        return None
    context = spark().sparkContext
    server = context._jvm.org.apache.spark.api.python.Py4JServer(context._jsc.sc().conf())
    server.start()
    _shares.append(server)
    return {"port": int(server.getListeningPort()), "secret": str(server.secret())}


def unshare() -> None:
    """Shuts the servers `share` opened (the processes attached through them are done)."""
    while _shares:
        with contextlib.suppress(Exception):  # a JVM already gone took its servers with it
            _shares.pop().shutdown()


def attached(launcher: str | None = None) -> Any:
    """A new SparkSession over the SparkContext running in the JVM this process's gateway names
    (`PYSPARK_GATEWAY_PORT` and `PYSPARK_GATEWAY_SECRET`, set by the process that shares it).

    PySpark makes a `SparkContext` object over the running one (`jsc`: no second context is started)
    and a session over the JVM's default session's `newSession()`; the JVM's default session stays the
    sharing process's. `launcher`: the Python our sources' runners start with (forked warm)."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    gateway = launch_gateway()
    jvm = gateway.jvm
    running = jvm.org.apache.spark.SparkContext.getOrCreate()
    context = SparkContext(gateway=gateway, jsc=jvm.org.apache.spark.api.java.JavaSparkContext(running))
    if launcher:
        context.pythonExec = launcher
    default = jvm.org.apache.spark.sql.SparkSession.getDefaultSession().get()
    session = SparkSession(context, jsparkSession=default.newSession())
    jvm.org.apache.spark.sql.SparkSession.setDefaultSession(default)
    return session


def jvm_process():
    """The local session's JVM (the Py4J gateway's process): it exits at the end of its input."""
    from pyspark import SparkContext

    return SparkContext._gateway.proc


def restart():
    """Stops whatever is left of the session (the JVM may be gone) and starts a new one."""
    global _session, _small_jobs
    _small_jobs = None
    try:
        if _remote() and _session is not None:  # a server gone: no release retried against it
            _session.client.close()
        stop()
    except Exception:  # a dead JVM cannot be stopped cleanly; the new session replaces it
        _session = None
    if not _remote():
        _forget_dead_jvm()
    return spark()


def new_session() -> Any:
    """A session of its own SQL settings, views and registered functions over `spark()`'s; under Spark
    Connect a client of its own, its retries as bounded as the first's (`connect_client`)."""
    fresh = spark().newSession()
    if _remote():
        from frontier_harness.spark_impl import connect_client

        connect_client.retrying_briefly(fresh)
    return fresh


def _forget_dead_jvm() -> None:
    """PySpark caches the gateway, context and session in class attributes; a dead JVM's must go."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    SparkContext._gateway = SparkContext._jvm = SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = SparkSession._activeSession = None


def _remote() -> bool:
    return bool(_settings["remote"] or os.environ.get("SPARK_REMOTE"))


def _start():
    if _settings["gateway"]:
        return _attach(_settings["gateway"])
    remote = _settings["remote"] or os.environ.get("SPARK_REMOTE")
    if (not remote or remote.startswith("local")) and not java_available():
        raise JavaMissing()
    from pyspark.sql import SparkSession

    partitions = str(_settings["shuffle_partitions"])
    conf = {**INTERPRETED, **user_conf()}  # a malformed entry is bad input, raised before Spark starts
    _workers_use_this_interpreter()
    try:
        if remote:
            from frontier_harness.spark_impl import connect_client  # imports gRPC: only for a remote

            builder = SparkSession.builder.remote(remote)
            if remote.startswith("local"):  # the local server's log4j lines go to the log file too
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                builder = builder.config(  # the server starts with them, static settings included
                    map={
                        "spark.sql.shuffle.partitions": partitions,
                        "spark.ui.showConsoleProgress": "false",
                        **conf,
                        "spark.driver.extraJavaOptions": _java_options(conf),
                    }
                )
            session = connect_client.bounded(builder.getOrCreate(), remote)
            set_at_runtime(session.conf, conf)
        else:  # the JVM inherits the environment: set it before the launch
            _workers_import_this_code()
            _workers_import_compiled_pyspark()
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            _launch_jvm_logging_to_file(_jvm_launch_conf(partitions, conf))
            session = _local_builder(SparkSession.builder, partitions, conf).getOrCreate()
    except (SparkConfError, ConnectUnreachable):  # a bad setting, a server not there: each says which
        raise
    except Exception as exc:  # the JVM or the server did not come up
        error = SparkUnavailable(exc)
        if not remote and LOG.exists():  # the JVM's own account of it is in the log, not on the terminal
            error.args = (f"{error}; Spark's log: {LOG.absolute()}",)
        raise error from exc
    return session


def _attach(gateway: dict) -> Any:
    """The session `attached` to the JVM another process shares (`share`); the gateway's port and secret are
    in the environment only while PySpark connects, so no process this one starts inherits them (a
    killable driver launches a JVM of its own)."""
    _workers_use_this_interpreter()
    names = {"PYSPARK_GATEWAY_PORT": str(gateway["port"]), "PYSPARK_GATEWAY_SECRET": gateway["secret"]}
    os.environ.update(names)
    try:
        return attached()
    except Exception as exc:  # the sharing process's JVM is gone
        raise SparkUnavailable(exc) from exc
    finally:
        for name in names:
            os.environ.pop(name, None)


def set_at_runtime(runtime: Any, conf: dict) -> None:
    """`conf` set on a running session (`runtime`: its `conf`); a setting it cannot change (a static one,
    or one of Spark's core settings, read where the server starts) is bad input that names the setting,
    unless it already holds the value: the harness's own local server starts with every one of them."""
    for key, value in conf.items():
        if runtime.isModifiable(key):
            runtime.set(key, value)
        elif runtime.get(key, None) != value:
            raise SparkConfError(
                f"{key}={value}: a running Spark Connect server cannot change it (not a runtime SQL "
                "setting); set it where the server starts"
            )


def _workers_import_this_code() -> None:
    """Spark's Python workers (a Python streaming source runs there) import the code the driver runs:
    this checkout goes first on their `PYTHONPATH`, which they inherit through the JVM."""
    root = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    )  # holds frontier_harness/
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def _workers_import_compiled_pyspark() -> None:
    """Spark puts `$SPARK_HOME/python/lib/pyspark.zip` first on its Python workers' path, and a zip holds no
    compiled code: every worker process (a streaming source's runner, one a query start; a planner) compiled
    PySpark afresh, 0.94 s of CPU to import what a source runner imports against 0.37 s compiled (measured
    here). With pip's PySpark and no `SPARK_HOME` of the user's, the JVM gets a `SPARK_HOME` of links to
    PySpark's own directories, `python/` left out: the workers import the installed, compiled PySpark.
    OpenBLAS's threads, which spin in each worker that imports numpy, are one. The links live in a directory
    named for the PySpark they point to: a virtualenv made again (another path) gets its own, never the
    dangling links of the one deleted."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if os.environ.get("SPARK_HOME"):
        return
    from pyspark.find_spark_home import _find_spark_home

    real = Path(_find_spark_home()).resolve()
    home = (LOG.parent / "spark-home" / hashlib.sha256(str(real).encode()).hexdigest()[:12]).absolute()
    home.mkdir(parents=True, exist_ok=True)
    for entry in real.iterdir():
        link = home / entry.name
        if entry.is_dir() and entry.name != "python" and not link.is_symlink():  # bin, jars, conf, ...
            with contextlib.suppress(FileExistsError):  # another harness process made it meanwhile
                link.symlink_to(entry)
    os.environ["SPARK_HOME"] = str(home)


def _workers_use_this_interpreter() -> None:
    """Spark's Python workers run the interpreter running the harness (a venv's, if installed in one),
    not whichever `python3` PATH finds first, which may lack pyarrow; `PYSPARK_PYTHON` overrides it."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable or shutil.which("python3") or "python3")


def _local_builder(builder, partitions: str, conf: dict):
    master = _settings["master"] or os.environ.get("FRONTIER_HARNESS_MASTER", "local[2]")
    return builder.master(master).appName("frontier-harness").config(map=_jvm_launch_conf(partitions, conf))


def _jvm_launch_conf(partitions: str, conf: dict) -> dict:
    """The local session's settings, the JVM's launch options among them (its memory, where log4j writes)."""
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": partitions,
        "spark.default.parallelism": "2",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        **NO_CALL_SITES,  # a static setting, so only at launch; a Connect client captures call sites locally
        **SMALL_PAGES,
        **conf,
        "spark.driver.memory": os.environ.get("FRONTIER_HARNESS_DRIVER_MEMORY", "4g"),
        "spark.driver.extraJavaOptions": _java_options(conf),
    }


def _java_options(conf: dict) -> str:
    """log4j configured by `_log4j_properties`, the class archive (`class_archive`), how processes start
    (`EVERY_JVM`), the JIT's settings, the temporary directory (`configure`), then the user's own driver
    options, if any (the JVM takes the last of two settings of one option)."""
    from frontier_harness.spark_impl import class_archive

    ours = [
        f"-Dlog4j.configurationFile={_log4j_properties().as_uri()}",
        *class_archive.java_options(),
        *EVERY_JVM,
    ]
    ours += SHORT_LIVED_JVM if _settings["short_lived"] else LONG_LIVED_JVM
    if _settings["temporary"] is not None:
        ours.append(f"-Djava.io.tmpdir={_settings['temporary']}")
    return " ".join([*ours, conf.get("spark.driver.extraJavaOptions", "")]).strip()


def _log4j_properties() -> Path:
    """A log4j2 configuration: WARN and above to `LOG` (and to stderr when verbose); written next to it."""
    log = LOG.absolute()
    log.parent.mkdir(parents=True, exist_ok=True)
    console = ["rootLogger.appenderRef.console.ref = console"] if _settings["verbose"] else []
    lines = [
        "status = error",
        "rootLogger.level = warn",
        "rootLogger.appenderRef.file.ref = file",
        *console,
        "appender.file.type = File",
        "appender.file.name = file",
        f"appender.file.fileName = {log}",
        "appender.file.append = true",
        "appender.file.layout.type = PatternLayout",
        "appender.file.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex",
        # Spark's own defaults quiet these (log4j2-defaults.properties).
        "logger.jetty.name = org.sparkproject.jetty",
        "logger.jetty.level = warn",
        "logger.parquet.name = org.apache.parquet",
        "logger.parquet.level = error",
    ]
    path = log.with_name("log4j2.properties")
    path.write_text("\n".join(lines) + "\n")
    return path


def _launch_jvm_logging_to_file(conf: dict) -> None:
    """Starts the JVM (Py4J gateway) with its stderr appended to `LOG`: the JVM's start-up warnings and
    whatever its Python workers print land there, not on the terminal, unless verbose. py4j's Python
    logger writes there too. Does nothing when a gateway is already up (a session restarted in place)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or _settings["verbose"]:
        return
    log = LOG.absolute()
    _python_logger_to_file("py4j", log)
    _query_context_loggers_to_file(log)
    spark_conf = SparkConf(loadDefaults=False).setAll(list(conf.items()))
    with open(log, "ab") as stderr:
        SparkContext._ensure_initialized(gateway=launch_gateway(spark_conf, popen_kwargs={"stderr": stderr}))


def _query_context_loggers_to_file(log: Path) -> None:
    """PySpark's query-context loggers (`QUERY_CONTEXT_LOGGERS`) write to `log` instead of stderr."""
    from pyspark.logger import PySparkLogger

    for name in QUERY_CONTEXT_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in [h for h in logger.handlers if type(h) is logging.StreamHandler]:
            logger.removeHandler(handler)
        _python_logger_to_file(name, log)


def _python_logger_to_file(name: str, log: Path) -> None:
    logger = logging.getLogger(name)
    if not any(getattr(h, "baseFilename", None) == str(log) for h in logger.handlers):
        logger.addHandler(logging.FileHandler(log))
    logger.propagate = False
