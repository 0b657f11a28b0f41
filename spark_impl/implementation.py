"""The Spark pipeline as an implementation under test: one method per capability.

Each method takes a time domain and a batch of histories (plain data with
`.actions`, each having `.name` and `.args`) and computes the batch in one
Spark job. See `properties.implementations` for the protocol.
"""

from __future__ import annotations

from spark_impl import collections, expiration, ingestion, reclock, summary, ttl_codec, ttl_store
from spark_impl import plan as plan_eval
from spark_impl.session import restart, spark


class SparkImplementation:
    """Every observation computed with Spark DataFrames."""

    name = "spark"

    def prepare(self) -> None:
        """Starts the session (raises `JavaMissing`/`SparkUnavailable` before any example runs)."""
        spark()

    def recover(self) -> None:
        """A fresh session after an infrastructure failure (the runner retries once)."""
        restart()

    observe_collections = staticmethod(collections.observe_collections)
    observe_expiration, observe_prove = (
        staticmethod(expiration.observe_expiration),
        staticmethod(expiration.observe_prove),
    )
    observe_ingestion = staticmethod(ingestion.observe_ingestion)
    observe_temporal, observe_timelines = (
        staticmethod(plan_eval.observe_temporal),
        staticmethod(plan_eval.observe_timelines),
    )
    observe_reclock = staticmethod(reclock.observe_reclock)
    observe_summary = staticmethod(summary.observe_summary)
    observe_ttl = staticmethod(ttl_store.observe_ttl)
    observe_ttl_compaction = staticmethod(ttl_store.observe_ttl_compaction)
    observe_ttl_codec = staticmethod(ttl_codec.observe_ttl_codec)
