"""The registry of suites, by name, in the order `list` and `check` show them."""

from __future__ import annotations

import attrs

from frontier_harness.model.event_time.join import JoinPlan
from frontier_harness.properties.checks.catalog import expiration, prove, temporal, timelines
from frontier_harness.properties.checks.cdc import cdc
from frontier_harness.properties.checks.event_time import join, stateful
from frontier_harness.properties.checks.ingestion import durable, resumption
from frontier_harness.properties.checks.reclocking import reclock, remap, restart, summary
from frontier_harness.properties.checks.streaming import checkpoint, streaming
from frontier_harness.properties.checks.time import collections, laws, mutable_antichain
from frontier_harness.properties.checks.ttl import codec, compaction, spark_state, store
from frontier_harness.properties.checks.upgrade import upgrade
from frontier_harness.properties.engine.errors import UnknownSuite
from frontier_harness.properties.engine.suite import Suite

SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        laws.SUITE,
        collections.SUITE,
        mutable_antichain.SUITE,
        resumption.SUITE,
        durable.SUITE,
        streaming.SUITE,
        attrs.evolve(stateful.SUITE, plan_kinds=((JoinPlan, join),)),  # a join's plan, its own properties
        cdc.SUITE,
        upgrade.SUITE,
        checkpoint.SUITE,
        store.SUITE,
        compaction.SUITE,
        codec.SUITE,
        spark_state.SUITE,
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
