"""The model as an implementation: each suite's own model observer, and the model's time algebra.

Against the model a differential suite compares the model with itself, so it
holds; this adapter exists for the laws suite (which checks the model's algebra)
and as the base of implementations that break one model rule on purpose
(`tests/planted.py`), which run at in-process speed.

>>> impl = ModelImplementation()
>>> impl.advance_by(3, impl.antichain(impl.time_domain("total"), [5]))
5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from frontier_harness.model.time.antichain import Antichain, advance_by
from frontier_harness.model.time.domains import Domain, parse_domain
from frontier_harness.properties.checks.catalog import expiration, prove, temporal, timelines
from frontier_harness.properties.checks.ingestion import resumption
from frontier_harness.properties.checks.reclocking import reclock, summary
from frontier_harness.properties.checks.time import collections, mutable_antichain
from frontier_harness.properties.checks.ttl import codec, compaction, store
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Observation


def _each(observe: Callable[[History], Observation]) -> Any:
    def observe_batch(self: Any, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        return [observe(h) for h in histories]

    observe_batch.__doc__ = f"`{observe.__module__}.{observe.__name__}` on each history."
    return observe_batch


class ModelImplementation(Implementation):
    """The model: every suite's model observer, and `frontier_harness.model.time.antichain`'s algebra."""

    name = "model"

    def time_domain(self, name: str) -> Domain:
        return parse_domain(name)

    def antichain(self, domain: Domain, times: Iterable[Any]) -> Antichain:
        return Antichain.of(domain, times)

    def advance_by(self, time: Any, frontier: Antichain) -> Any:
        return advance_by(time, frontier)

    observe_collections = _each(collections.observe)
    observe_mutable_antichain = _each(mutable_antichain.observe)
    observe_expiration = _each(expiration.observe)
    observe_prove = _each(prove.observe)
    observe_resumption = _each(resumption.observe)
    observe_durable_resumption = _each(resumption.observe)  # the model has one pipeline
    observe_temporal = _each(temporal.observe)
    observe_timelines = _each(timelines.observe)
    observe_reclock = _each(reclock.observe)
    observe_summary = _each(summary.observe)
    observe_ttl = _each(store.observe_store)
    observe_ttl_compaction = _each(compaction.observe)
    observe_ttl_codec = _each(codec.observe)
