"""Errors raised by spark_impl: infrastructure failures, kept apart from wrong answers.

An `InfrastructureError` (Java missing, the JVM died, the Connect server is
gone) is never a counterexample: the CLI reports it and exits 3.
"""

from __future__ import annotations


class InfrastructureError(RuntimeError):
    """Spark could not run: the harness reports this as infrastructure, never as a failure."""


class SparkConfError(ValueError):
    """A malformed `FRONTIER_HARNESS_SPARK_CONF` entry (bad input, not infrastructure)."""

    def __init__(self, entry: str):
        super().__init__(f"FRONTIER_HARNESS_SPARK_CONF: expected key=value, got {entry!r}")


class JavaMissing(InfrastructureError):
    """No `java` executable: Spark needs Java 17."""

    def __init__(self) -> None:
        super().__init__(
            "Java not found: Spark needs Java 17 "
            "(install it, e.g. `apt-get install openjdk-17-jre-headless`, or set JAVA_HOME)"
        )


class SparkUnavailable(InfrastructureError):
    """Spark started or was reached, then failed underneath us."""

    def __init__(self, cause: BaseException):
        self.cause = cause
        first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(f"Spark is unavailable ({type(cause).__name__}): {first_line[:300]}")


_INFRA_MARKERS = (
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


def _is_gateway_error(exc: BaseException) -> bool:
    """A Py4J error that is not a Java exception: the Python-JVM gateway itself is broken."""
    try:
        from py4j.protocol import Py4JError, Py4JJavaError
    except ImportError:  # Spark Connect clients need no py4j
        return False
    return isinstance(exc, Py4JError) and not isinstance(exc, Py4JJavaError)


def is_infrastructure_failure(exc: BaseException) -> bool:
    """Whether `exc` means Spark itself failed (as opposed to a wrong query or answer)."""
    if isinstance(exc, (InfrastructureError, ConnectionError, EOFError, MemoryError)):
        return True
    if _is_gateway_error(exc):
        return True
    text = f"{type(exc).__name__}: {exc}"
    return any(marker in text for marker in _INFRA_MARKERS)


class ShardError(ValueError):
    """A durable shard directory that cannot be used as asked; the message names the path. Nothing is overwritten."""

    def __init__(self, path: object, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"shard {self.path}: {reason}")


class ShardMissing(ShardError):
    """Opening a shard whose directory (or manifest) does not exist."""


class PartialShard(ShardError):
    """A directory with shard files but no readable manifest (a torn or foreign write): refused, untouched."""


class ShardFromAnotherSource(ShardError):
    """A shard directory written for another source or shard kind."""


class UpperMismatch(ShardError):
    """A compare-and-set append or compaction that lost: the shard's upper or version moved underneath it."""
