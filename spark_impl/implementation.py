"""The Spark pipeline as an implementation under test: one method per capability.

Each method takes a time domain and a batch of histories (plain data with
`.actions`, each having `.name` and `.args`) and computes the batch in one
Spark job. See `properties.implementations` for the protocol.
"""

from __future__ import annotations

from spark_impl import collections
from spark_impl.session import spark


class SparkImplementation:
    """Every observation computed with Spark DataFrames."""

    name = "spark"

    def prepare(self) -> None:
        """Starts the session (raises `JavaMissing`/`SparkUnavailable` before any example runs)."""
        spark()

    observe_collections = staticmethod(collections.observe_collections)
