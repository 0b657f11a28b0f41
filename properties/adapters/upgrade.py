"""Spark for an upgrade check: what a job or a checkpoint keys a restart on (the static half), and the
trials that switch the old job's query to the new job (the dynamic half); Spark's own failures reported as
infrastructure and bad input as one line (exit 2).

`recorded_job(spec, directory)` plans the job (`frontier_harness.spark_impl.upgrade.planned`);
`recorded_checkpoint(directory)` reads what Spark recorded in a checkpoint
(`frontier_harness.spark_impl.event_time.checkpoint_metadata`). Both start Spark first: a missing Java is
`InfrastructureError` (exit 3); a job that cannot be imported, built or planned is `ImplementationError`,
a directory that is not a checkpoint (or a file of one that cannot be read) is `CheckpointFormatError`,
a session that cannot give the plan (Spark Connect) is `ConfigurationError`: each exit 2, one line.

`UpgradeImplementation(old, new)`, named `upgrade-job:OLD->NEW` (`upgrade_spec`, so reports and `replay`
load it again), is the upgrade suite's: the new job's stateful plan (both jobs refused as the stateful suite
refuses them), the static verdict of the two plans (`comparison`) and the `Mix` it makes, its
`observe_upgrade` trials, and the batch oracles of both jobs' transforms (`stateful_outputs`,
`old_outputs`). The dynamic half judges window aggregations whose window and watermark delay the upgrade
keeps; another pair is `CannotJudge` (exit 2), named.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.event_time.stateful import StatefulPlan
from frontier_harness.model.upgrade.compare import compare
from frontier_harness.model.upgrade.switch import Mix, mix_of
from frontier_harness.model.vocabulary.event_time import OperatorKey, PlanKey, Recorded
from frontier_harness.model.vocabulary.upgrade import Verdict
from frontier_harness.properties.adapters.job import StatefulJobImplementation
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.properties.engine.errors import (
    CheckpointFormatError,
    ConfigurationError,
    ImplementationError,
)

UPGRADE, ARROW = "upgrade-job:", "->"


def _session() -> Any:
    from frontier_harness.spark_impl.session import spark

    SparkImplementation().prepare()  # a missing Java or a dead JVM: infrastructure, before anything is read
    return spark()


@contextlib.contextmanager
def _bad_input() -> Iterator[None]:
    """spark_impl's refusals as the harness's bad-input errors (exit 2, one line)."""
    from frontier_harness.spark_impl.errors import (
        CheckpointUnreadable,
        NotACheckpoint,
        PlanNotReadable,
        StateUnreadable,
    )
    from frontier_harness.spark_impl.streaming.job import JobContractError

    try:
        yield
    except JobContractError as exc:
        raise ImplementationError(str(exc)) from exc
    except NotACheckpoint as exc:
        raise CheckpointFormatError(
            exc.directory, None, "not a Structured Streaming checkpoint (no metadata file)"
        ) from exc
    except CheckpointUnreadable as exc:
        raise CheckpointFormatError(exc.path, None, exc.reason) from exc
    except StateUnreadable as exc:
        raise CheckpointFormatError(
            exc.file or exc.checkpoint, None, f"Spark cannot load the state store: {exc.reason}"
        ) from exc
    except PlanNotReadable as exc:
        raise ConfigurationError(str(exc)) from exc


def recorded_job(
    spec: str, directory: os.PathLike | str | None = None, pinned_over: dict | None = None
) -> dict:
    """What job `spec` (MODULE:FACTORY) would key its checkpoint on; planned under `pinned_over`, the settings a
    restart on a checkpoint pins (`model.upgrade.output.restored`), when given."""
    from frontier_harness.spark_impl.upgrade.planned import job_metadata

    session = _session()
    with _bad_input():
        return job_metadata(session, spec, directory, pinned_over)


def recorded_checkpoint(directory: Path) -> dict:
    """What Spark recorded in the checkpoint at `directory`."""
    from frontier_harness.spark_impl.event_time.checkpoint_metadata import checkpoint_metadata

    session = _session()
    with _bad_input():
        return checkpoint_metadata(session, directory)


def upgrade_spec(old: str, new: str) -> str:
    """The implementation spec of an upgrade from job `old` to job `new`, as reports name it.

    >>> upgrade_spec("jobs:counts", "jobs:sums")
    'upgrade-job:jobs:counts->jobs:sums'
    """
    return f"{UPGRADE}{old}{ARROW}{new}"


def load_upgrade_spec(spec: str) -> UpgradeImplementation | None:
    """The upgrade an implementation spec names (`upgrade-job:OLD->NEW`), or None for another spec."""
    if not spec.startswith(UPGRADE):
        return None
    old, arrow, new = spec.removeprefix(UPGRADE).partition(ARROW)
    if not arrow or not old or not new:
        raise ImplementationError(
            f"--impl {spec!r}: expected upgrade-job:OLD_MODULE:FACTORY->NEW_MODULE:FACTORY"
        )
    return UpgradeImplementation(old, new)


class UpgradeImplementation(StatefulJobImplementation):
    """Spark running `old`'s stateful trials, `new` from each history's upgrade restart (module docstring)."""

    comparison: Any
    mix: Mix | None

    def __init__(self, old: str, new: str):
        self.old_job = old
        self._old_outputs: dict = {}
        super().__init__(new)
        self.name = upgrade_spec(old, new)

    def _validate(self, job: Any) -> None:
        from frontier_harness.spark_impl.event_time.stateful_plan import stateful_plan
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import built

        super()._validate(job)
        old = stateful_plan(self.old_job, spark(), built(self.old_job))
        planned = [recorded_job(spec) for spec in (self.old_job, self.streaming_job)]
        self.comparison = compare(*planned)
        self.mix = None if self.comparison.outcome() is Verdict.RESTART_FAILS else self._mix(old, planned)

    def _mix(self, old: dict, planned: list[dict]) -> Mix:
        plan = self.plan
        window = plan.window if isinstance(plan, StatefulPlan) else None
        kept = window is not None and old[PlanKey.WINDOW] == [window.duration, window.slide, window.start]
        chained = (
            not isinstance(plan, StatefulPlan)
            or plan.deduplication is not None
            or plan.inner_window is not None
        )
        if (
            not kept
            or chained
            or old[PlanKey.DEDUPLICATION] is not None
            or old.get(PlanKey.INNER_WINDOW) is not None
            or tuple(old[PlanKey.DELAYS]) != plan.delays
            or getattr(plan, "prefix", None) is not None
            or old[PlanKey.PREFIX] is not None
        ):
            raise CannotJudge(
                f"the trials of {self.old_job} -> {self.streaming_job}",
                "the dynamic half models window aggregations (not over another stateful operator, no filter before them) "
                "whose window and watermark delay the upgrade keeps",
            )
        aggregates = [p[Recorded.OPERATORS][0].get(OperatorKey.AGGREGATES) or [] for p in planned]
        return mix_of(self.comparison, *aggregates)

    def observe_upgrade(self, domain: Any, histories: Any) -> list:
        from frontier_harness.spark_impl.upgrade.trials import observe_upgrade

        observed = observe_upgrade(domain, histories, self.old_job, self.streaming_job)
        self._observe_state_keys(histories, observed)
        return observed

    def _observe_state_keys(self, histories: Any, observed: list) -> None:
        """At each history's final step, the values the old job's and the new job's aggregation key each
        record it produced by (`StreamingLabel.STATE_KEYS`: `(record, old, new)`), as Spark computes them:
        one Spark job per job for the wave."""
        from frontier_harness.model.vocabulary.streaming import StreamingLabel
        from frontier_harness.properties.checks.streaming.committed import produced
        from frontier_harness.spark_impl.event_time.prefix import job_for, state_keys
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.spans import ORACLE, span

        records = [[u.data for u in produced(h, len(h.actions), whole=True)] for h in histories]
        with span(ORACLE):
            old, new = (
                state_keys(spark(), job_for(job), records) for job in (self.old_job, self.streaming_job)
            )
        for history, obs, rs, olds, news in zip(histories, observed, records, old, new):
            found = frozenset((r, olds[r[2]], news[r[2]]) for r in rs)
            obs[(len(history.actions), StreamingLabel.STATE_KEYS)] = found

    def old_outputs(self, frames: Any) -> list[Any]:
        """The old job's `transform` as a batch job over each frame of records, whole (as `stateful_outputs`)."""
        from frontier_harness.spark_impl.session import spark
        from frontier_harness.spark_impl.streaming.job import frame_outputs

        todo = sorted({tuple(sorted(frame)) for frame in frames} - set(self._old_outputs))
        if todo:
            self._old_outputs.update(zip(todo, frame_outputs(self.old_job, spark(), todo)))
        return [self._old_outputs[tuple(sorted(frame))] for frame in frames]
