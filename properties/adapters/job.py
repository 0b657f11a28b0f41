"""The Spark implementation with a user's streaming job in its trials (`--job`).

`load_job(spec)` checks the job before Spark starts (it imports, its factory builds an object with
`write` and `read`), then with Spark (`frontier_harness.spark_impl.streaming.job.validate`):
a job the trials cannot run is an `ImplementationError` (exit 2, one line). Its `observe_streaming`
runs the streaming suite's trials with the job; `job_outputs` is that oracle's batch job
(`frontier_harness.properties.checks.streaming.streaming_job`): the job's `transform` over each set of
records, many sets per Spark job.

`load_job(spec, stateful=True)` is the stateful suite's: the job's plan is read and refused or
described (`frontier_harness.spark_impl.event_time.stateful_plan`) as the model's
`StatefulPlan`, its `observe_stateful` runs the stateful trials, and `stateful_outputs` is that
oracle's batch job (`transform` over each frame of records, whole).

An implementation spec names a job as `job:MODULE:FACTORY` or `stateful-job:MODULE:FACTORY`
(`spec_of`), which is what reports and counterexample files call it, so `replay` loads it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.event_time.stateful import StatefulPlan, Window
from frontier_harness.model.time.domains import Domain
from frontier_harness.model.vocabulary.ingestion import PlanKey
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.engine.errors import ImplementationError
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Observation

STREAMING, STATEFUL = "job:", "stateful-job:"


class WrongKindOfJob(ImplementationError):
    """The job belongs to the other suite: a stateful transform under `streaming`, a row-wise one under
    `stateful` (exit 2 when that suite was asked for; otherwise it runs its default lane)."""


JOB_SUITES = {"streaming": STREAMING, "stateful": STATEFUL}


def spec_of(job: str, stateful: bool = False) -> str:
    """The implementation spec of a job, as reports name it and `load_implementation` reads it.

    >>> spec_of("my_jobs:counts", stateful=True)
    'stateful-job:my_jobs:counts'
    """
    return (STATEFUL if stateful else STREAMING) + job


class JobImplementation(SparkImplementation):
    """Spark, with the user's job `spec` (MODULE:FACTORY) in place of the trials' sink."""

    streaming_job: str

    def __init__(self, spec: str):
        from frontier_harness.spark_impl.streaming.job import JobContractError, WrongSuite, built

        self.streaming_job, self.name = spec, spec_of(spec)
        self._outputs: dict = {}  # record -> its rows under transform (deterministic: computed once)
        try:
            job = built(spec)  # before Spark starts: a job that cannot be imported or built is refused now
            self._before_spark(job)
            self.prepare()
            self._validate(job)
        except WrongSuite as exc:
            raise WrongKindOfJob(str(exc)) from exc
        except JobContractError as exc:
            raise ImplementationError(str(exc)) from exc

    def _before_spark(self, job: Any) -> None:
        """What can be refused before Spark starts, beyond `built`'s checks."""

    def _validate(self, job: Any) -> None:
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import validate

        self.columns = validate(self.streaming_job, spark(), job)

    def observe_streaming(self, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        from frontier_harness.spark_impl.streaming.trial import observe_streaming

        return observe_streaming(domain, histories, job=self.streaming_job)

    def job_outputs(self, record_sets: Sequence[Sequence[tuple]]) -> list[Any]:
        """`transform` as a batch job over each set of `(data, partition, offset)` records: rows -> count."""
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import batch_outputs

        return batch_outputs(self.streaming_job, spark(), record_sets, self._outputs)


class StatefulJobImplementation(JobImplementation):
    """Spark, with the user's stateful job in the stateful suite's trials; `plan` is its plan as the model
    reads it (`StatefulPlan`), `window_column` the output column holding its window."""

    plan: StatefulPlan
    window_column: str | None

    def __init__(self, spec: str):
        super().__init__(spec)
        self.name = spec_of(spec, stateful=True)

    def prepare(self) -> None:
        """Spark started, and the suite's histories scaled to this job's plan (`stateful.use_plan`)."""
        super().prepare()
        if hasattr(self, "plan"):
            from frontier_harness.properties.checks.event_time.stateful import use_plan

            use_plan(self.plan)

    def _before_spark(self, job: Any) -> None:
        from frontier_harness.spark_impl.event_time.stateful_plan import output_mode

        output_mode(self.streaming_job, job)

    def _validate(self, job: Any) -> None:
        from frontier_harness.spark_impl.event_time.stateful_plan import stateful_plan
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import check_read

        check_read(self.streaming_job, job.read, spark())
        described = stateful_plan(self.streaming_job, spark(), job)
        window = described[PlanKey.WINDOW]
        self.plan = StatefulPlan(
            described[PlanKey.OPERATOR],
            tuple(described[PlanKey.DELAYS]),
            Window(*window) if window else None,
            tuple(described.get(PlanKey.KEYS, ())),
            described[PlanKey.OUTPUT_MODE],
            described[PlanKey.LATENESS],
        )
        self.window_column = described[PlanKey.WINDOW_COLUMN]
        self.columns = described[PlanKey.COLUMNS]
        self.prepare()

    def observe_stateful(self, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        from frontier_harness.spark_impl.streaming.trial import observe_stateful

        return observe_stateful(domain, histories, job=self.streaming_job)

    def stateful_outputs(self, frames: Sequence[Sequence[tuple]]) -> list[Any]:
        """`transform` as a batch job over each frame of `(key, event_time, data, partition, offset)`
        records, whole: rows -> count, one Spark job for the frames not computed before."""
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import frame_outputs

        todo = sorted({tuple(sorted(frame)) for frame in frames} - set(self._outputs))
        if todo:
            self._outputs.update(zip(todo, frame_outputs(self.streaming_job, spark(), todo)))
        return [self._outputs[tuple(sorted(frame))] for frame in frames]


def load_job(spec: str, stateful: bool = False) -> JobImplementation:
    """The Spark implementation running `spec`'s job in the streaming (or, `stateful`, the stateful)
    suite's trials; refuses (one line, exit 2) a factory that cannot be imported, an object without
    `write` or `read` (before Spark starts), a `read` that returns neither a DataFrame nor None, or a
    `transform` the suite cannot run. Starts Spark."""
    return StatefulJobImplementation(spec) if stateful else JobImplementation(spec)


def load_job_spec(spec: str) -> JobImplementation | None:
    """The job an implementation spec names (`job:M:F`, `stateful-job:M:F`), or None for another spec."""
    for prefix in (STATEFUL, STREAMING):
        if spec.startswith(prefix):
            return load_job(spec.removeprefix(prefix), stateful=prefix == STATEFUL)
    return None
