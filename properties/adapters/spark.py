"""The Spark pipeline (`spark_impl`) as an implementation under test.

Each `observe_<capability>` method calls the spark_impl function that computes a
whole batch of histories in one Spark job. The function is looked up when it is
called, not when this module is imported, so a module reloaded in place (as
`frontier-harness mutate` does with each mutant) is the one that runs.

Spark's own failures become the harness's `InfrastructureError` here: Java
missing or the JVM gone (`frontier_harness.spark_impl.errors.SparkInfrastructureError`), a broken
Py4J gateway, a Spark Connect server that stopped answering. A malformed
`FRONTIER_HARNESS_SPARK_CONF` is bad input (`ConfigurationError`, exit 2).
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Sequence
from typing import Any

from frontier_harness.model.time.domains import Domain
from frontier_harness.properties.engine.errors import ConfigurationError
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Observation, Speed
from frontier_harness.properties.engine.infrastructure import InfrastructureError

# Texts of exceptions that mean Spark itself failed (as opposed to a wrong query or answer).
INFRASTRUCTURE_MARKERS = (
    "Py4JNetworkError",
    "Answer from Java side is empty",
    "Connection refused",
    "JAVA_GATEWAY_EXITED",
    "Java gateway process exited",
    "SparkContext was shut down",
    "Cannot call methods on a stopped SparkContext",
    "StatusCode.UNAVAILABLE",
    "java.lang.OutOfMemoryError",
    "Error while receiving",
    "Error while sending",
    "does not exist in the JVM",
)


def configure(
    master: str | None = None, remote: str | None = None, verbose: bool = False, gateway: dict | None = None
) -> None:
    """Where the session will run (`--master`, `--remote`, or the JVM another process shares: `gateway`,
    what `share_jvm` answered there), whether Spark's log shows (`--verbose`); only before it has started."""
    from frontier_harness.spark_impl import session

    session.configure(master=master, remote=remote, verbose=verbose or None, gateway=gateway)


def share_jvm() -> dict | None:
    """This process's JVM, started now if it was not, for a second process of the run to attach to
    (`configure(gateway=...)` there; `spark_impl.session.share`); None under Spark Connect. `unshare_jvm`
    once that process is done."""
    from frontier_harness.spark_impl import session

    _start_session()
    return session.share()


def unshare_jvm() -> None:
    from frontier_harness.spark_impl import session

    session.unshare()


def _start_session() -> None:
    """The session started; Spark's failures as the harness's: a bad setting (exit 2), no Spark (exit 3)."""
    from frontier_harness.spark_impl import session
    from frontier_harness.spark_impl.errors import SparkConfError, SparkInfrastructureError

    try:
        session.spark()
    except SparkConfError as exc:
        raise ConfigurationError(str(exc)) from exc
    except SparkInfrastructureError as exc:
        raise InfrastructureError(str(exc)) from exc


def sessions_started() -> int:
    """How many Spark sessions this process has started (`mutate` shows the JVM is started once)."""
    from frontier_harness.spark_impl import session

    return session.starts()


def cancel_jobs() -> None:
    """Cancels the Spark jobs running now (`mutate`, when a mutant's check runs out of time)."""
    from frontier_harness.spark_impl import session

    session.cancel_jobs()


def _delegate(module: str, function: str, sized: bool = True, scratch: bool = False) -> Any:
    """An observer computing in `module.function`; a `sized` one sets the session for the batch's size
    first (`frontier_harness.spark_impl.session.size_jobs_for`: small batches skip what only pays on large data);
    a `scratch` one passes the function a temporary directory, removed after the call."""

    def observe(self: Any, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        if sized:
            from frontier_harness.spark_impl import session

            session.size_jobs_for(len(histories))
        compute = getattr(importlib.import_module(module), function)
        if not scratch:
            return compute(domain, histories)
        with tempfile.TemporaryDirectory(prefix="frontier-harness-scratch-") as root:
            return compute(domain, histories, root)

    observe.__doc__ = f"`{module}.{function}`: the batch in one Spark job."
    observe.delegates_to = module  # type: ignore[attr-defined]  # where it computes (mutate follows it)
    return observe


class SparkImplementation(Implementation):
    """Every observation computed with Spark DataFrames."""

    name = "spark"
    speed = Speed.BATCHED

    def prepare(self) -> None:
        """Starts the session, so a missing Java is reported before any example runs."""
        _start_session()

    def recover(self) -> None:
        """A fresh session after an infrastructure failure (the runner retries once)."""
        from frontier_harness.spark_impl import session

        session.restart()

    def infrastructure_failure(self, exc: Exception) -> str | None:
        """Spark's failures: its own errors, a broken Py4J gateway, or a marker in the message."""
        from frontier_harness.spark_impl.errors import SparkInfrastructureError

        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, SparkInfrastructureError) or _is_gateway_error(exc):
            return text
        if any(marker in text for marker in INFRASTRUCTURE_MARKERS):
            return text
        return super().infrastructure_failure(exc)

    observe_collections = _delegate("frontier_harness.spark_impl.time.collection", "observe_collections")
    observe_mutable_antichain = _delegate(
        "frontier_harness.spark_impl.time.mutable_antichain", "observe_mutable_antichain"
    )
    observe_expiration = _delegate("frontier_harness.spark_impl.catalog.expiration", "observe_expiration")
    observe_prove = _delegate("frontier_harness.spark_impl.catalog.expiration", "observe_prove")
    observe_resumption = _delegate("frontier_harness.spark_impl.ingestion.ingestion", "observe_resumption")
    observe_durable_resumption = _delegate(
        "frontier_harness.spark_impl.ingestion.durable_ingestion", "observe_durable", scratch=True
    )
    observe_temporal = _delegate("frontier_harness.spark_impl.catalog.plan", "observe_temporal")
    observe_timelines = _delegate("frontier_harness.spark_impl.catalog.plan", "observe_timelines")
    observe_reclock = _delegate("frontier_harness.spark_impl.reclocking.reclock", "observe_reclock")
    observe_summary = _delegate("frontier_harness.spark_impl.reclocking.summary", "observe_summary")
    observe_streaming = _delegate(
        "frontier_harness.spark_impl.streaming.trial", "observe_streaming", sized=False
    )
    observe_cdc = _delegate("frontier_harness.spark_impl.cdc.trial", "observe_cdc", sized=False)
    observe_ttl = _delegate("frontier_harness.spark_impl.ttl.store_observer", "observe_ttl")
    observe_ttl_compaction = _delegate(
        "frontier_harness.spark_impl.ttl.compaction_observer", "observe_ttl_compaction"
    )
    observe_ttl_codec = _delegate("frontier_harness.spark_impl.ttl.codec", "observe_ttl_codec")
    observe_ttl_spark_state = _delegate(
        "frontier_harness.spark_impl.ttl.state.store", "observe_ttl_spark_state", sized=False
    )


def _is_gateway_error(exc: BaseException) -> bool:
    """A Py4J error that is not a Java exception: the Python-JVM gateway itself is broken."""
    try:
        from py4j.protocol import Py4JError, Py4JJavaError
    except ImportError:  # Spark Connect clients need no py4j
        return False
    return isinstance(exc, Py4JError) and not isinstance(exc, Py4JJavaError)
