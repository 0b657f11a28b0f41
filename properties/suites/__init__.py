"""The registry of suites, by name, in the order `list` and `check` show them."""

from __future__ import annotations

from properties.errors import UnknownSuite
from properties.suite import Suite
from properties.suites import (
    checkpoint,
    collections,
    expiration,
    laws,
    mutable_antichain,
    prove,
    reclock,
    remap,
    restart,
    resumption,
    streaming,
    summary,
    temporal,
    timelines,
    ttl,
    ttl_codec,
    ttl_compaction,
)

SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        laws.SUITE,
        collections.SUITE,
        mutable_antichain.SUITE,
        resumption.SUITE,
        streaming.SUITE,
        checkpoint.SUITE,
        ttl.SUITE,
        ttl_compaction.SUITE,
        ttl_codec.SUITE,
        reclock.SUITE,
        remap.SUITE,
        restart.SUITE,
        summary.SUITE,
        prove.SUITE,
        timelines.SUITE,
        temporal.SUITE,
        expiration.SUITE,
    )
}


def get_suite(name: str) -> Suite:
    """The suite called `name`; a typed error listing the known ones."""
    try:
        return SUITES[name]
    except KeyError:
        raise UnknownSuite(f"unknown suite {name!r}: known suites are {', '.join(SUITES)}") from None
