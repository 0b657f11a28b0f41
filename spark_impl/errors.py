"""Errors raised by spark_impl: Spark that cannot run, bad configuration, unusable shard directories.

A `SparkInfrastructureError` (Java missing, the JVM died, the Connect server is
gone) is not a wrong answer: the harness's Spark adapter reports it as
infrastructure (`frontier_harness.properties.adapters.spark`), never as a counterexample.
"""

from __future__ import annotations


class SparkInfrastructureError(RuntimeError):
    """Spark could not run: not an answer, whatever the query was."""


class SparkConfError(ValueError):
    """A `FRONTIER_HARNESS_SPARK_CONF` entry Spark cannot take (bad input, not infrastructure): malformed,
    or a setting a running Spark Connect server cannot change."""

    def __init__(self, problem: str):
        super().__init__(f"FRONTIER_HARNESS_SPARK_CONF: {problem}")


class JavaMissing(SparkInfrastructureError):
    """No `java` executable: Spark needs Java 17."""

    def __init__(self) -> None:
        super().__init__(
            "Java not found: Spark needs Java 17 "
            "(install it, e.g. `apt-get install openjdk-17-jre-headless`, or set JAVA_HOME)"
        )


class SparkUnavailable(SparkInfrastructureError):
    """Spark started or was reached, then failed underneath us."""

    def __init__(self, cause: BaseException):
        self.cause = cause
        first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(f"Spark is unavailable ({type(cause).__name__}): {first_line[:300]}")


class ConnectUnreachable(SparkInfrastructureError):
    """The Spark Connect server at the address asked for did not answer a first call
    (`spark_impl.connect_client`): refused, not gRPC, silent, or failing it.

    >>> str(ConnectUnreachable("sc://h:1", "Connection refused"))
    'could not reach a Spark Connect server at sc://h:1: Connection refused'
    """

    def __init__(self, address: str, reason: str):
        self.address = address
        super().__init__(f"could not reach a Spark Connect server at {address}: {reason[:300]}")


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


class InjectedCrash(RuntimeError):
    """A crash the streaming trials inject at a named point (never infrastructure, never a wrong answer)."""

    MARKER = "frontier-harness injected crash"

    def __init__(self, point: str):
        self.point = point
        super().__init__(f"{self.MARKER} at {point}")


class QueryStartFailed(RuntimeError):
    """A start of a trial's query that raised in its driver process (the job's factory or transform, say):
    the message is that process's traceback."""


class CrashPointNotReached(SparkInfrastructureError):
    """A killable driver that exited without reaching the crash point it was armed with: the trial meant to
    crash there and did not, so nothing it would show was seen (infrastructure, exit 3)."""

    def __init__(self, point: str, how: str):
        self.point = point
        super().__init__(f"the killable driver armed at {point} {how} without reaching it")


class StateUnreadable(ValueError):
    """A stateful query's state store that Spark cannot load (bad input: a file of the checkpoint is
    missing or truncated); names the checkpoint, the file when Spark names it, and Spark's reason."""

    def __init__(self, checkpoint: object, file: str | None, reason: str):
        self.checkpoint, self.file, self.reason = str(checkpoint), file, reason
        where = f"{file}" if file else f"the state of {self.checkpoint}"
        super().__init__(f"{where}: Spark cannot load the state store: {reason}")


class PostgresUnavailable(SparkInfrastructureError):
    """The PostgreSQL server a CDC trial needs could not be started, reached or restarted: infrastructure,
    never an answer (`frontier_harness.spark_impl.cdc.postgres`)."""


class PostgresMissing(PostgresUnavailable):
    """No PostgreSQL server binaries (`initdb`, `pg_ctl`) where `pg_config --bindir` or Debian's layout puts
    them; the message names the fix."""

    def __init__(self, searched: object):
        super().__init__(
            f"PostgreSQL not found (no initdb and pg_ctl in {searched}): run ci/install-postgres.sh "
            "(as root: apt-get install -y postgresql), or set FRONTIER_HARNESS_POSTGRES to a server of yours"
        )


class CdcSourceError(RuntimeError):
    """The CDC source cannot go on without losing or inventing changes (a slot missing, a slot ahead of
    where the stream resumes, a slot whose WAL was released); the message names the slot and the LSNs."""

    MARKER = "frontier-harness cdc source"

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"{self.MARKER}: {problem}")


class PlanNotReadable(ValueError):
    """A plan whose objects this session cannot give (a Spark Connect client holds none): bad input, named
    in one line with what would give them."""


class NotACheckpoint(ValueError):
    """A directory that is not a Structured Streaming checkpoint (no `metadata` file): bad input."""

    def __init__(self, directory: object):
        self.directory = str(directory)
        super().__init__(f"{self.directory}: not a Structured Streaming checkpoint (no metadata file)")


class CheckpointUnreadable(ValueError):
    """A checkpoint file that cannot be parsed: bad input, naming the file and why."""

    def __init__(self, path: object, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{self.path}: {reason}")
