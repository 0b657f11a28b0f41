"""The Spark implementation with a user's streaming job in its trials (`--job`).

`load_job(spec)` checks the job before Spark starts (it imports, its factory builds an object with
`write` and `read`), then with Spark (`frontier_harness.spark_impl.streaming.job.validate`):
a job the trials cannot run is an `ImplementationError` (exit 2, one line). Its `observe_streaming`
runs the streaming suite's trials with the job; `job_outputs` is that oracle's batch job
(`frontier_harness.properties.checks.streaming.streaming_job`): the job's `transform` over each set of
records, many sets per Spark job.

`load_job(spec, stateful=True)` is the stateful suite's: the job's plan is read and refused or
described (`frontier_harness.spark_impl.event_time.stateful_plan`) as the model's
`StatefulPlan` (a stream-stream join job's, `join_plan`, as a `JoinPlan`), its `observe_stateful` runs the stateful trials, and `stateful_outputs` is that
oracle's batch job (`transform` over each frame of records, whole).

`load_suite_job("cdc", spec)` is the cdc suite's: its `observe_cdc` runs the CDC trials with the job's
`transform` and `write` over the replication slot's change rows, its `read` the table it materialized.

An implementation spec names a job as `job:MODULE:FACTORY`, `stateful-job:MODULE:FACTORY` or
`cdc-job:MODULE:FACTORY` (`spec_of`, `JOB_SUITES`), which is what reports and counterexample files call it, so `replay` loads it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.event_time.join import (
    CountedWindows,
    JoinPlan,
    JoinType,
    Side,
    StreamJoin,
    TimeRange,
)
from frontier_harness.model.event_time.stateful import Deduplication, StatefulPlan, Window
from frontier_harness.model.time.domains import Domain
from frontier_harness.model.vocabulary.event_time import OperatorKey, PlanKey
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.engine.errors import ImplementationError
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Observation

STREAMING, STATEFUL, CDC = "job:", "stateful-job:", "cdc-job:"


class WrongKindOfJob(ImplementationError):
    """The job belongs to the other suite: a stateful transform under `streaming`, a row-wise one under
    `stateful` (exit 2 when that suite was asked for; otherwise it runs its default lane)."""


JOB_SUITES = {"streaming": STREAMING, "stateful": STATEFUL, "cdc": CDC}


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
        self._references: dict = {}  # history -> the observation of its run (a stateful job's reference runs)
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
        from frontier_harness.spark_impl.spans import ORACLE, span
        from frontier_harness.spark_impl.streaming.job import batch_outputs

        with span(ORACLE):
            return batch_outputs(self.streaming_job, spark(), record_sets, self._outputs)


class StatefulJobImplementation(JobImplementation):
    """Spark, with the user's stateful job in the stateful suite's trials; `plan` is its plan as the model
    reads it (`StatefulPlan`), `window_column` the output column holding its window."""

    plan: StatefulPlan | JoinPlan
    window_column: str | None

    def __init__(self, spec: str):
        super().__init__(spec)
        self.name = spec_of(spec, stateful=True)

    def _before_spark(self, job: Any) -> None:
        from frontier_harness.spark_impl.event_time.stateful_plan import output_mode

        output_mode(self.streaming_job, job)

    def _validate(self, job: Any) -> None:
        from frontier_harness.spark_impl.event_time.stateful_plan import stateful_plan
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import check_read, is_join

        check_read(self.streaming_job, job.read, spark())
        if is_join(job):
            self._join(job)
            return
        described = stateful_plan(self.streaming_job, spark(), job)
        window, first = described[PlanKey.WINDOW], described[PlanKey.DEDUPLICATION]
        prefix = described.get(PlanKey.PREFIX)
        self.plan = StatefulPlan(
            described[PlanKey.OPERATOR],
            tuple(described[PlanKey.DELAYS]),
            Window(*window) if window else None,
            tuple(described.get(PlanKey.KEYS, ())),
            described[PlanKey.OUTPUT_MODE],
            described[PlanKey.LATENESS],
            Deduplication(first[OperatorKey.NAME], tuple(first[PlanKey.KEYS])) if first else None,
            described[PlanKey.GAP],
            described.get(PlanKey.TIME_MODE),
            prefix,
            self._kept_keys(job, prefix) if prefix is not None else (),
            Window(*described[PlanKey.INNER_WINDOW]) if described.get(PlanKey.INNER_WINDOW) else None,
            tuple(described.get(PlanKey.DERIVED, ())),
            self._merged_keys(job, described.get(PlanKey.DERIVED, ())),
        )
        self.window_column = described[PlanKey.WINDOW_COLUMN]
        self.columns = described[PlanKey.COLUMNS]

    def _kept_keys(self, job: Any, prefix: str) -> tuple[str, ...]:
        """The keys the strategies draw from whose records the job's filters pass to its operator, probed
        with a record of each at event time 0 (`KEYS`: the strategies' hint; what passed in a trial is
        observed, `_observe_prefix`)."""
        from frontier_harness.properties.checks.event_time.strategies.stateful import KEYS
        from frontier_harness.spark_impl.event_time.prefix import reaching
        from frontier_harness.spark_impl.session import spark

        probes = [(key, 0, f"probe-{key}", 0, 0) for key in KEYS]
        [reached] = reaching(spark(), job, [probes], prefix)
        return tuple(key for key, (_, kept) in zip(KEYS, reached) if kept)

    def _merged_keys(self, job: Any, columns: Sequence[str]) -> tuple[tuple[str, ...], ...]:
        """The keys the strategies draw from (`KEYS`) whose records the job's derived deduplication keys
        (`columns`) put in one group, probed with one record of each, of the same data, at event time 0 (the
        strategies' hint: which records were one group's in a trial is observed, `_observe_derived`)."""
        from frontier_harness.properties.checks.event_time.strategies.stateful import KEYS
        from frontier_harness.spark_impl.event_time.prefix import derived
        from frontier_harness.spark_impl.session import spark

        if not columns:
            return ()
        probes = [[(key, 0, "probe", 0, 0)] for key in KEYS]
        groups: dict[tuple, list[str]] = {}
        for key, found in zip(KEYS, derived(spark(), job, probes, columns)):
            if "probe" in found:
                groups.setdefault(found["probe"], []).append(key)
        return tuple(tuple(keys) for keys in groups.values() if len(keys) > 1)

    def _observe_derived(self, histories: Sequence[History], observed: list[Observation]) -> None:
        """At each history's final step, the deduplication keys the job derives from each record it produced
        that reaches the deduplication (`StreamingLabel.DERIVED`: `(record, ((name, value), ...))`), as the
        job's stateless prefix computes them: one Spark job for the wave."""
        from frontier_harness.model.vocabulary.streaming import StreamingLabel
        from frontier_harness.properties.checks.streaming.committed import produced
        from frontier_harness.spark_impl.event_time.prefix import derived, job_for
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.spans import ORACLE, span

        assert isinstance(self.plan, StatefulPlan)
        columns = self.plan.derived
        records = [[u.data for u in produced(h, len(h.actions), whole=True)] for h in histories]
        with span(ORACLE):
            values = derived(spark(), job_for(self.streaming_job), records, columns)
        for history, obs, rs, found in zip(histories, observed, records, values):
            pairs = frozenset((r, tuple(zip(columns, found[r[2]]))) for r in rs if r[2] in found)
            obs[(len(history.actions), StreamingLabel.DERIVED)] = pairs  # type: ignore[index]

    def _join(self, job: Any) -> None:
        """A stream-stream join job: its plan as the model's `JoinPlan`."""
        from frontier_harness.spark_impl.event_time.join_plan import join_plan
        from frontier_harness.spark_impl.session import spark

        found = join_plan(self.streaming_job, spark(), job)
        left, right = found["delays"]
        spec = StreamJoin(
            JoinType(found["how"]),
            TimeRange(found["lower"], found["upper"]),
            tuple(found["keys"]),
            left is not None,
            right is not None,
        )
        counted = found["counted"]
        counts = None
        if counted is not None:
            window = Window(*counted["window"])
            counts = CountedWindows(window, Side(counted["side"]), counted["key"], tuple(counted["columns"]))
        self.plan = JoinPlan(spec, (left, right), found["output_mode"], tuple(found["data_columns"]), counts)
        self.window_column = None
        self.columns = found["columns"]

    def observe_stateful(self, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        from frontier_harness.spark_impl.streaming.trial import observe_stateful

        observed = observe_stateful(domain, histories, job=self.streaming_job)
        prefix = getattr(self.plan, "prefix", None)
        if prefix is not None:
            self._observe_prefix(histories, observed, prefix)
        if getattr(self.plan, "derived", ()):
            self._observe_derived(histories, observed)
        return observed

    def _observe_prefix(self, histories: Sequence[History], observed: list[Observation], prefix: str) -> None:
        """At each history's final step, what the job's filters pass of each record it produced, to the
        watermark and to the operator (`StreamingLabel.PREFIX`): one Spark job for the wave."""
        from frontier_harness.model.vocabulary.streaming import StreamingLabel
        from frontier_harness.properties.checks.streaming.committed import produced
        from frontier_harness.spark_impl.event_time.prefix import job_for, reaching
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.spans import ORACLE, span

        records = [[u.data for u in produced(h, len(h.actions), whole=True)] for h in histories]
        with span(ORACLE):
            passed = reaching(spark(), job_for(self.streaming_job), records, prefix)
        for history, obs, rs, ps in zip(histories, observed, records, passed):
            found = frozenset((r, *p) for r, p in zip(rs, ps))
            obs[(len(history.actions), StreamingLabel.PREFIX)] = found  # type: ignore[index]

    def reference_runs(self, histories: Sequence[History]) -> list[Observation]:
        """The job's trials of `histories` (each a run without a crash or a restart), each history run once:
        a later call for a history run before returns the observation of that run; its state store is not
        read."""
        from frontier_harness.spark_impl.streaming.trial import observe_references

        todo = list({h.key: h for h in histories if h.key not in self._references}.values())
        if todo:
            found = observe_references(todo, job=self.streaming_job)
            self._references.update((h.key, obs) for h, obs in zip(todo, found))
        return [self._references[h.key] for h in histories]

    def stateful_outputs(self, frames: Sequence[Sequence[tuple]]) -> list[Any]:
        """`transform` as a batch job over each frame of `(key, event_time, data, partition, offset)`
        records, whole: rows -> count, one Spark job for the frames not computed before."""
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.spans import ORACLE, span
        from frontier_harness.spark_impl.streaming.job import frame_outputs

        todo = sorted({tuple(sorted(frame)) for frame in frames} - set(self._outputs))
        if todo:
            with span(ORACLE):
                self._outputs.update(zip(todo, frame_outputs(self.streaming_job, spark(), todo)))
        return [self._outputs[tuple(sorted(frame))] for frame in frames]


class CdcJobImplementation(JobImplementation):
    """Spark, with the user's job in the cdc suite's trials: its `transform` over the CDC source's change
    rows into its `write`; its `read(spark)` is the table it materialized (columns `k` and `v`)."""

    def __init__(self, spec: str):
        super().__init__(spec)
        self.name = CDC + spec

    def _validate(self, job: Any) -> None:
        from frontier_harness.spark_impl.cdc.source import SCHEMA
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import validate

        self.columns = validate(self.streaming_job, spark(), job, SCHEMA)

    def observe_cdc(self, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        from frontier_harness.spark_impl.cdc.trial import observe_cdc

        return observe_cdc(domain, histories, job=self.streaming_job)


def load_suite_job(suite: str, spec: str) -> JobImplementation:
    """The Spark implementation running `spec`'s job in `suite`'s trials (`JOB_SUITES`)."""
    return CdcJobImplementation(spec) if suite == "cdc" else load_job(spec, stateful=suite == "stateful")


def load_job(spec: str, stateful: bool = False) -> JobImplementation:
    """The Spark implementation running `spec`'s job in the streaming (or, `stateful`, the stateful)
    suite's trials; refuses (one line, exit 2) a factory that cannot be imported, an object without
    `write` or `read` (before Spark starts), a `read` that returns neither a DataFrame nor None, or a
    `transform` the suite cannot run. Starts Spark."""
    return StatefulJobImplementation(spec) if stateful else JobImplementation(spec)


def load_job_spec(spec: str) -> JobImplementation | None:
    """The job an implementation spec names (`job:M:F`, `stateful-job:M:F`), or None for another spec."""
    for suite, prefix in sorted(JOB_SUITES.items(), key=lambda item: -len(item[1])):
        if spec.startswith(prefix):
            return load_suite_job(suite, spec.removeprefix(prefix))
    return None
