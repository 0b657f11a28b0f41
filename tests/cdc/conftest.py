"""A throwaway PostgreSQL cluster for the cdc tests: one per test session (per xdist worker), started on
first use and stopped and removed at the session's end, also when a test failed.

Without PostgreSQL's server binaries a test that needs it fails in one line naming the fix
(`ci/install-postgres.sh`); it never skips.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from frontier_harness.spark_impl.cdc import postgres
from frontier_harness.spark_impl.errors import PostgresUnavailable


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[postgres.Cluster]:
    """The session's cluster, installed as the process's server (`postgres.use`) for the cdc trials."""
    try:
        cluster = postgres.Cluster.start()
    except PostgresUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    postgres.use(cluster)
    try:
        yield cluster
    finally:
        postgres.use(None)
        cluster.stop()
