"""The registry of suites, by name, in the order `list` and `check` show them."""

from __future__ import annotations

from properties.errors import UnknownSuite
from properties.solver import counterexamples as prove_suite
from properties.suite import Suite
from properties.suites import collections, laws, resumption, ttl, ttl_codec, ttl_compaction
from properties.suites import (
    expiration as expiration_suite,
)
from properties.suites import (
    reclock as reclock_suite,
)
from properties.suites import (
    remap as remap_suite,
)
from properties.suites import (
    restart as restart_suite,
)
from properties.suites import (
    summary as summary_suite,
)
from properties.suites import (
    temporal as temporal_suite,
)
from properties.suites import (
    timelines as timelines_suite,
)

SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        laws.SUITE,
        collections.SUITE,
        resumption.SUITE,
        ttl.SUITE,
        ttl_compaction.SUITE,
        ttl_codec.SUITE,
        reclock_suite.SUITE,
        remap_suite.SUITE,
        restart_suite.SUITE,
        summary_suite.SUITE,
        prove_suite.SUITE,
        timelines_suite.SUITE,
        temporal_suite.SUITE,
        expiration_suite.SUITE,
    )
}
OBSERVERS = {
    "collections": collections.observe,
    "ingestion": resumption.observe,
    "ttl": ttl.observe_store,
    "ttl_compaction": ttl_compaction.observe,
    "ttl_codec": ttl_codec.observe,
    "reclock": reclock_suite.observe,
    "summary": summary_suite.observe,
    "prove": prove_suite.observe,
    "timelines": timelines_suite.observe,
    "temporal": temporal_suite.observe,
    "expiration": expiration_suite.observe,
}


def get_suite(name: str) -> Suite:
    """The suite called `name`; a typed error listing the known ones."""
    try:
        return SUITES[name]
    except KeyError:
        raise UnknownSuite(f"unknown suite {name!r}: known suites are {', '.join(SUITES)}") from None
