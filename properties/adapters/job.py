"""The Spark implementation with a user's streaming job in its streaming trials (`--job`).

`JobImplementation(spec)` checks the job at once (`frontier_harness.spark_impl.ingestion.streaming.job.validate`,
starting Spark): a job the trials cannot run is an `ImplementationError` (exit 2, one
line). Its `observe_streaming` runs the trials with the job; `job_outputs` is the
oracle's batch job (`frontier_harness.properties.checks.ingestion.streaming_job`): the job's `transform` over
each set of records, many sets per Spark job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.time.domains import Domain
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.engine.errors import ImplementationError
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Observation


class JobImplementation(SparkImplementation):
    """Spark, with the user's job `spec` (MODULE:FACTORY) in place of the trials' sink."""

    streaming_job: str

    def __init__(self, spec: str):
        self.streaming_job = spec
        self._outputs: dict = {}  # record -> its rows under transform (deterministic: computed once)
        self.prepare()
        from frontier_harness.spark_impl.ingestion.streaming.job import JobContractError, validate
        from frontier_harness.spark_impl.session import spark

        try:
            self.columns = validate(spec, spark())
        except JobContractError as exc:
            raise ImplementationError(str(exc)) from exc

    def observe_streaming(self, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        from frontier_harness.spark_impl.ingestion.streaming.trial import observe_streaming

        return observe_streaming(domain, histories, job=self.streaming_job)

    def job_outputs(self, record_sets: Sequence[Sequence[tuple]]) -> list[Any]:
        """`transform` as a batch job over each set of `(data, partition, offset)` records: rows -> count."""
        from frontier_harness.spark_impl.ingestion.streaming.job import batch_outputs
        from frontier_harness.spark_impl.session import spark

        return batch_outputs(self.streaming_job, spark(), record_sets, self._outputs)


def load_job(spec: str) -> JobImplementation:
    """The Spark implementation running `spec`'s job in the streaming trials; refuses (one line, exit 2)
    a factory that cannot be imported, an object without `write` or `read`, a `read` that returns
    neither a DataFrame nor None, or a `transform` that is not row-wise. Starts Spark."""
    return JobImplementation(spec)
