"""The *durable_resumption* suite: the durable ingestion pipeline equals the model, crash by crash.

Spark has two ingestion pipelines. The resumption suite's `observe_resumption` judges
`frontier_harness.spark_impl.ingestion.ingestion`, every round of a history folded in one job;
`frontier_harness.spark_impl.ingestion.durable_ingestion` is the pipeline as a running process carries it,
round by round over Parquet shards that survive a killed process (the one
`tests/test_crash_sigkill.py` SIGKILLs). This suite holds the second equal to the model
too: the resumption suite's histories and observations (`resumption.observe`), through
`observe_durable_resumption`.

Cost: a call runs a few Spark jobs per pipeline action of its longest history, whatever
the batch size, so histories are shorter than the resumption suite's (`MAX_STEPS`) and
a batch is a few dozen of them (`batched_cost`: 40 in `ci`, one screening call per
domain). The hard cases are the resumption suite's to require: the same generator draws
hundreds of its histories a run, where this suite's `dev` run draws about ten, too few to
require any without flaky runs.
"""

from __future__ import annotations

from frontier_harness.properties.checks.ingestion import resumption
from frontier_harness.properties.checks.ingestion.strategies.ingestion import draw_ingestion_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.source import Source
from frontier_harness.properties.engine.suite import Property, Reference, Suite, differential

MAX_STEPS = 6


def draw_short_history(source: Source, domain_name: str) -> History:
    """A resumption history of at most `MAX_STEPS` mixed steps after its first produces."""
    return draw_ingestion_history(source, domain_name, max_steps=MAX_STEPS)


SUITE = Suite(
    name="durable_resumption",
    doc="The durable (Parquet, round-by-round) ingestion pipeline: commits, restarts and final shards "
    "equal the model's.",
    properties=(
        Property(
            name="durable_observations_match_model",
            doc="The durable pipeline's commits, restarts and final shards equal the model's.",
            draw=draw_short_history,
            check=differential(resumption.observe, "observe_durable_resumption"),
            events=resumption.events,
        ),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    batched_cost=250.0,  # a call: a few Spark jobs per round of its longest history; ci: 40 histories
    serial_jobs=True,
    domains=resumption.DOMAINS,
)
