"""One Spark session per process, started lazily.

`local[2]` by default with the UI off, few shuffle partitions and quiet logs;
`SPARK_REMOTE` (or `configure(remote=...)`) selects a Spark Connect server, and
`configure(master=...)` a cluster master. `SparkSession.builder.remote("local[2]")`
starts a local Connect server, which is how the Connect test mode runs.
"""

from __future__ import annotations

import os
import shutil

from frontier_harness.spark_impl.errors import JavaMissing, SparkUnavailable

_settings: dict = {"master": None, "remote": None, "shuffle_partitions": 1}

# Measured on 2 cores (collections, 20-update histories): whole-stage codegen costs
# ~2-4 s of compilation per distinct plan and wins nothing at these sizes
# (10k histories/job: 1,018/s with codegen, 1,590/s interpreted; 4/job: 4.6 s vs 0.4 s).
INTERPRETED = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}
_session = None
_starts = 0  # sessions this process started (`mutate` shows the JVM is started once per run)


def configure(
    master: str | None = None, remote: str | None = None, shuffle_partitions: int | None = None
) -> None:
    """Chooses where the session runs; only before it has started."""
    chosen = {"master": master, "remote": remote, "shuffle_partitions": shuffle_partitions}
    _settings.update({key: value for key, value in chosen.items() if value is not None})


def user_conf() -> dict:
    """`FRONTIER_HARNESS_SPARK_CONF="k=v,k=v"`: Spark settings applied last (e.g. codegen back on for a cluster)."""
    pairs = [
        item.split("=", 1)
        for item in os.environ.get("FRONTIER_HARNESS_SPARK_CONF", "").split(",")
        if item.strip()
    ]
    if bad := [p[0] for p in pairs if len(p) != 2]:
        from frontier_harness.spark_impl.errors import SparkConfError

        raise SparkConfError(bad[0])
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


def starts() -> int:
    """How many sessions this process has started (a restart after a failure counts)."""
    return _starts


def cancel_jobs() -> None:
    """Cancels the session's running jobs (called from another thread while one waits on them)."""
    if _session is None:
        return
    if _settings["remote"] or os.environ.get("SPARK_REMOTE"):
        _session.interruptAll()
    else:
        _session.sparkContext.cancelAllJobs()


def started() -> bool:
    return _session is not None


def stop() -> None:
    """Stops the session (tests that kill the JVM start a fresh one afterwards)."""
    global _session
    if _session is not None:
        try:
            _session.stop()
        finally:
            _session = None


def restart():
    """Stops whatever is left of the session (the JVM may be gone) and starts a new one."""
    global _session
    try:
        stop()
    except Exception:  # a dead JVM cannot be stopped cleanly; the new session replaces it
        _session = None
    if not _settings["remote"] and not os.environ.get("SPARK_REMOTE"):
        _forget_dead_jvm()
    return spark()


def _forget_dead_jvm() -> None:
    """PySpark caches the gateway, context and session in class attributes; a dead JVM's must go."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    SparkContext._gateway = SparkContext._jvm = SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = SparkSession._activeSession = None


def _start():
    remote = _settings["remote"] or os.environ.get("SPARK_REMOTE")
    if (not remote or remote.startswith("local")) and not java_available():
        raise JavaMissing()
    from pyspark.sql import SparkSession

    partitions = str(_settings["shuffle_partitions"])
    conf = {**INTERPRETED, **user_conf()}  # a malformed entry is bad input, raised before Spark starts
    try:
        if remote:
            builder = SparkSession.builder.remote(remote)
            if remote.startswith("local"):
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                builder = builder.config("spark.sql.shuffle.partitions", partitions).config(
                    "spark.ui.showConsoleProgress", "false"
                )
            session = builder.getOrCreate()
            for key, value in conf.items():
                session.conf.set(key, value)
        else:
            session = _local_builder(SparkSession.builder, partitions, conf).getOrCreate()
            session.sparkContext.setLogLevel("ERROR")
    except Exception as exc:  # the JVM or the server did not come up
        raise SparkUnavailable(exc) from exc
    return session


def _workers_import_this_code() -> None:
    """Spark's Python workers (a Python streaming source runs there) import the code the driver runs:
    this checkout goes first on their `PYTHONPATH`, which they inherit through the JVM."""
    root = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    )  # holds frontier_harness/
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def _local_builder(builder, partitions: str, conf: dict):
    master = _settings["master"] or os.environ.get("FRONTIER_HARNESS_MASTER", "local[2]")
    _workers_import_this_code()
    os.environ.setdefault("PYSPARK_PYTHON", shutil.which("python3") or "python3")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (
        builder.master(master)
        .appName("frontier-harness")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", partitions)
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config(map=conf)
        .config("spark.driver.memory", os.environ.get("FRONTIER_HARNESS_DRIVER_MEMORY", "4g"))
        .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=ERROR")
    )
