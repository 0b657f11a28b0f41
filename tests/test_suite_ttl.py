"""The ttl, ttl_compaction and ttl_codec suites on the model; planted TTL bugs are caught small and replay.

Each planted factory is importable as `--impl tests.test_suite_ttl:NAME`: the model
store with one `frontier_harness.model.ttl` rule replaced. The reference the suite compares with
restates the seed's rules (`frontier_harness.properties.checks.ttl.oracles.store`), so no planted rule reaches it:
`strict_boundary` flips the model's one expiry predicate, which reads and the
compaction filter share, and is caught although the two agree with each other.
"""

from __future__ import annotations

from contextlib import contextmanager

import attrs
import pytest

from frontier_harness.model.errors import InvalidTtl
from frontier_harness.model.ttl import row
from frontier_harness.model.ttl import store as model_store
from frontier_harness.model.vocabulary.ttl import StoreAction, StoreStep
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.ttl import store as store_suite
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import QUICK, write_and_replay

TTL = get_suite("ttl")
PROFILE = attrs.evolve(QUICK, max_examples=200, batch_size=4)


@contextmanager
def patched(name, rule, module=model_store):
    original = getattr(module, name)
    setattr(module, name, rule)
    try:
        yield
    finally:
        setattr(module, name, original)


def _store_with(name, rule, module=model_store):
    class Impl(ModelImplementation):
        def observe_ttl(self, domain, histories):
            with patched(name, rule, module):
                return [store_suite.observe_store(h) for h in histories]

    return Impl()


def _strict(expire_ts, now):
    return expire_ts < now


@contextmanager
def strict_everywhere():
    """The model's expiry predicate strict (`<`) wherever the model uses it."""
    with patched("is_expired", _strict, row), patched("is_expired", _strict, model_store):
        yield


def strict_boundary():
    """Bug on both sides at once: reads and the compaction filter both test `expire_ts < now`."""

    class Impl(ModelImplementation):
        def observe_ttl(self, domain, histories):
            with strict_everywhere():
                return [store_suite.observe_store(h) for h in histories]

    return Impl()


def lt_in_compaction_filter():
    """Bug: the compaction filter tests `expire_ts < now` while reads test `<=`."""
    return _store_with("expired_for_compaction", lambda r, now: not r.is_tombstone and r.expire_ts < now)


def lt_in_reads():
    """Bug: reads test `expire_ts < now` while the compaction filter tests `<=`."""
    return _store_with("hidden_on_read", lambda r, now: r.is_tombstone or r.expire_ts < now)


def expired_dropped():
    """Bug: the TTL filter drops expired values instead of tombstoning them."""
    return _store_with(
        "ttl_filter",
        lambda rows, now: tuple(r for r in rows if not model_store.expired_for_compaction(r, now)),
    )


def tombstones_dropped_early():
    """Bug: tombstones dropped by every compaction, not only the last run's."""
    return _store_with(
        "drop_tombstones", lambda rows, is_last_run: tuple(r for r in rows if not r.is_tombstone)
    )


def clock_from_manifest_only():
    """Bug: a reopened clock seeded from the manifest alone, not the replayed WAL."""
    return _store_with(
        "seed_sources", lambda d: () if d.manifest.timestamp is None else (d.manifest.timestamp,)
    )


def default_over_explicit():
    """Bug: the store's default TTL wins over a write's explicit TTL."""
    return _store_with("effective_ttl", lambda ttl, default: default if default is not None else ttl)


def no_clock_mark():
    """Bug: the clock reseeded from written timestamps only (the seed's rule), not the durable mark."""
    seed = model_store.seed_sources
    return _store_with("seed_sources", lambda d: seed(attrs.evolve(d, clock_mark=None)))


def compaction_at_last_flush():
    """Bug: compaction runs at the newest flush's reading, so a quiet store keeps its expired rows."""
    return _store_with(
        "compaction_now", lambda reading, last_flush: reading if last_flush is None else last_flush
    )


def expire_at_in_the_past_refused():
    """Bug: an `expire_at` not after the write is refused (`InvalidTtl`) instead of expired at once."""

    def refuse(create_ts, ttl, expire_at):
        if expire_at is not None and expire_at <= create_ts:
            raise InvalidTtl(expire_at, "not after the write")
        return row.expire_ts_for(create_ts, ttl, expire_at)

    return _store_with("expire_ts_for", refuse)


def test_the_ttl_suite_holds_on_the_model_and_reaches_its_hard_cases():
    result = run_suite(
        SuiteRequest(
            TTL, ModelImplementation(), "model", attrs.evolve(PROFILE, screening_histories=2000), seed=0
        )
    )
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


PLANTED = {
    "lt_in_compaction_filter": ("expired value kept by compaction", 10),
    "lt_in_reads": ("get", 10),
    "strict_boundary": ("get", 10),
    "expired_dropped": ("get", 10),
    "tombstones_dropped_early": ("get", 10),
    "clock_from_manifest_only": ("get", 10),
    "no_clock_mark": ("get", 10),
    "default_over_explicit": ("get", 10),
    "compaction_at_last_flush": ("expired value left by periodic compaction", 10),
    "expire_at_in_the_past_refused": ("error", 10),
}


@pytest.mark.parametrize("bug", PLANTED)
def test_planted_bug_is_caught_small_and_replays(bug, tmp_path):
    impl_name = f"tests.test_suite_ttl:{bug}"
    label, max_actions = PLANTED[bug]
    result = run_suite(SuiteRequest(TTL, globals()[bug](), impl_name, PROFILE, seed=0))
    failure = result.results[0].failure
    assert failure is not None, f"{bug} was not caught"
    assert len(failure.history.actions) <= max_actions, failure.history
    assert failure.message.startswith(label), failure.message
    assert write_and_replay(failure, tmp_path, impl_name) == 1
    assert write_and_replay(failure, tmp_path, "model") == 0


def test_both_sides_flipped_at_once_is_caught_even_with_the_model_patched_everywhere(tmp_path):
    """A reference that imported the model's `is_expired` flipped with it: 0 of 500 histories differed."""
    # the suite's reference never imports them
    assert not {"is_expired", "expire_ts_for"} & set(vars(store_suite))
    with strict_everywhere():
        result = run_suite(
            SuiteRequest(TTL, ModelImplementation(), "tests.test_suite_ttl:strict_boundary", PROFILE, seed=0)
        )
    failure = result.results[0].failure
    assert failure is not None and len(failure.history.actions) <= 10, failure
    assert write_and_replay(failure, tmp_path, "tests.test_suite_ttl:strict_boundary") == 1


def test_compaction_names_take_every_older_l0_sst():
    def span(names: tuple[str, ...], n_l0: int, start: int, length: int) -> tuple[str, ...]:
        return StoreStep(0, StoreAction.COMPACT, start=start, length=length).span(names, n_l0)

    assert span(("a", "b", "c", "d"), 2, 1, 0) == ("b",)
    assert span(("a", "b", "c", "d"), 3, 0, 0) == ("a", "b", "c")
    assert span(("a", "b", "c", "d"), 1, 2, 9) == ("c", "d")
    assert span((), 0, 5, 5) == ()


def test_boundary_row_is_hidden_exactly_at_expire_ts():
    assert row.is_expired(5, 5) and not row.is_expired(5, 4)
