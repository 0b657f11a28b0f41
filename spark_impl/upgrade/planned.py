"""What a job would key its checkpoint on, planned with its own settings and its own source, no data run.

A job for `upgrade` is a stateful job (`frontier_harness.properties.checks.streaming.job.StatefulJob`:
`transform`, `write`, `read`, `output_mode`) that may also say what it runs with in production:

- `conf`: the Spark settings it runs with (a dict), set while it is planned or started (`job_conf`: the
  session's own values come back after; a started query keeps the settings it started with);
- `source(spark)`: its streaming input, a streaming DataFrame of the records `transform` takes; without
  it, the harness's keyed, timed records (`frontier_harness.spark_impl.streaming.event_source`).

`job_metadata(session, spec)` builds the job with its factory (in `directory`, or a scratch one), plans
`transform(source)` and reads what Spark keys the checkpoint on from the plan objects
(`frontier_harness.spark_impl.event_time.plan_metadata`), with the job's `output_mode` (append unless it
says). A job that cannot be imported or built, or whose `source` or `transform` raises, is a
`JobContractError` naming it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from frontier_harness.model.vocabulary.event_time import OutputMode, Recorded
from frontier_harness.spark_impl.event_time.plan_metadata import pinned_conf
from frontier_harness.spark_impl.event_time.stateful_plan import first_line, job_plan
from frontier_harness.spark_impl.streaming.event_source import NAME, EventSource
from frontier_harness.spark_impl.streaming.job import JobContractError, built


def job_conf(session: Any, job: Any) -> contextlib.AbstractContextManager[None]:
    """The job's `conf` set on `session` for the duration, the session's own values restored after."""
    return session_settings(session, dict(getattr(job, "conf", None) or {}))


@contextlib.contextmanager
def session_settings(session: Any, values: dict) -> Iterator[None]:
    """`values` set on `session` for the duration, the session's own values restored after."""
    values = {str(k): str(v) for k, v in values.items()}
    before = {key: session.conf.get(key, None) for key in values}
    for key, value in values.items():
        session.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            session.conf.unset(key) if value is None else session.conf.set(key, value)


def records(session: Any, spec: str, job: Any) -> Any:
    """The job's streaming input: its `source(spark)`, or the harness's keyed, timed records."""
    source = getattr(job, "source", None)
    if source is None:
        session.dataSource.register(EventSource)
        return session.readStream.format(NAME).option("path", "/nonexistent").load()
    try:
        return source(session)
    except Exception as exc:
        raise JobContractError(spec, f"source(spark) raised {type(exc).__name__}: {first_line(exc)}") from exc


def job_metadata(
    session: Any, spec: str, directory: os.PathLike | str | None = None, pinned_over: dict | None = None
) -> dict:
    """What job `spec` (MODULE:FACTORY) would key its checkpoint on, and its output mode; with `pinned_over`,
    the settings a restart on a checkpoint pins over the job's, planned under them as Spark plans the
    restart (a state schema's nullability follows them), the job's own settings recorded."""
    job = built(spec, directory)
    with job_conf(session, job):
        asked = pinned_conf(session)
        with session_settings(session, pinned_over or {}):
            _, recorded = job_plan(spec, session, job, records(session, spec, job))
    recorded[Recorded.CONF] = asked
    recorded[Recorded.OUTPUT_MODE] = getattr(job, "output_mode", OutputMode.APPEND)
    return recorded
