"""The TTL store's clock: readings never go back, and a reopened store is seeded from the
manifest, every replayed WAL segment and the clock's durable high-water mark.

What the documentation (`frontier_harness.model.ttl.store`) promises across crashes, tested here: a row that
a read or a compaction saw expired never becomes readable again; the reopened store
refuses every operation until the user clock is back at the mark."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.errors import ClockRegression, InvalidTime
from frontier_harness.model.ttl import store as model_store
from frontier_harness.model.ttl.clock import ManualClock, MonotonicClock, advance_floor, seed_floor
from frontier_harness.model.ttl.row import I64_MAX, I64_MIN, Row
from frontier_harness.model.ttl.store import Durable, Manifest, TtlStore, WalSegment


def test_equal_readings_are_fine_and_a_regression_names_both_readings():
    source = ManualClock(10)
    clock = MonotonicClock(source)
    assert [clock.now(), clock.now()] == [10, 10]
    source.set(9)
    with pytest.raises(ClockRegression, match="reading 9 is below the previous reading 10") as err:
        clock.now()
    assert (err.value.previous, err.value.reading) == (10, 9)
    assert clock.floor == 10
    source.set(11)
    assert clock.now() == 11


@pytest.mark.parametrize("reading", [I64_MAX, I64_MAX + 1, I64_MIN - 1, 1.5, "5", True, None])
def test_a_reading_that_is_not_an_i64_below_never_is_rejected(reading):
    with pytest.raises(InvalidTime):
        advance_floor(None, reading)


def test_i64_min_is_a_valid_reading():
    assert advance_floor(None, I64_MIN) == I64_MIN


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=20))
def test_the_clock_hands_out_exactly_the_non_decreasing_prefix(readings):
    source = ManualClock(readings[0])
    clock = MonotonicClock(source)
    handed = []
    for r in readings:
        source.set(r)
        try:
            handed.append(clock.now())
        except ClockRegression as err:
            assert r < handed[-1] == err.previous
    assert handed == sorted(handed)
    assert all(h in readings for h in handed)


def test_a_write_on_a_regressed_clock_is_refused_and_nothing_is_written():
    source = ManualClock(100)
    store = TtlStore.open(source)
    store.put(b"k", b"v1")
    source.set(99)
    for write in (lambda: store.put(b"k", b"v2"), lambda: store.delete(b"k"), store.flush):
        with pytest.raises(ClockRegression):
            write()
    assert store.memtable[b"k"].value == b"v1" and len(store.wal[-1].rows) == 1
    source.set(100)
    assert store.get(b"k") == b"v1"


def test_seed_is_the_largest_of_the_manifest_and_every_wal_segment():
    def seg(i, *stamps):
        return WalSegment(i, tuple(Row.value_row(b"k", b"", i * 10 + n, t) for n, t in enumerate(stamps)))

    durable = Durable(Manifest(timestamp=50), (seg(0, 70, 90), seg(1, 60), WalSegment(2)))
    assert model_store.seed_sources(durable) == (50, 90, 60)
    assert seed_floor(model_store.seed_sources(durable)) == 90
    assert TtlStore.open(ManualClock(0), durable=durable).clock.floor == 90
    assert TtlStore.open(ManualClock(0), durable=attrs.evolve(durable, clock_mark=95)).clock.floor == 95
    assert TtlStore.open(ManualClock(0)).clock.floor is None


def test_reopen_after_two_crashes_seeds_from_the_older_segment_too():
    source = ManualClock(100)
    store = TtlStore.open(source)
    store.put(b"k", b"v")
    source.set(20)
    store = TtlStore.open(ManualClock(5), durable=store.crash())  # a session that writes nothing
    store = TtlStore.open(source, durable=store.crash())
    assert store.clock.floor == 100
    with pytest.raises(ClockRegression, match="reading 20 is below the previous reading 100"):
        store.get(b"k")


def _expired_then_crash(source: ManualClock) -> Durable:
    """Flushes once at t=10, then writes k (expires at 105) to the WAL only, sees it expire, crashes."""
    store = TtlStore.open(source)
    store.put(b"other", b"x")
    store.flush()  # manifest timestamp 10
    source.set(100)
    store.put(b"k", b"v", ttl=5)
    source.set(105)
    assert store.get(b"k") is None
    return store.crash()


def test_manifest_only_seeding_goes_back_in_time_after_a_crash(monkeypatch):
    """Why the WAL seeds the clock: the manifest alone predates the unflushed write at t=100."""
    source = ManualClock(10)
    durable = _expired_then_crash(source)
    source.set(90)  # the user clock restarted behind the last write
    monkeypatch.setattr(model_store, "seed_sources", lambda d: (d.manifest.timestamp,))
    store = TtlStore.open(source, durable=durable)
    assert store.get(b"k") == b"v"  # an expired row is readable again
    store.put(b"j", b"w")
    assert store.memtable[b"j"].create_ts == 90 < store.memtable[b"k"].create_ts  # time went back


def test_wal_seeding_refuses_the_same_clock_even_without_the_mark():
    source = ManualClock(10)
    durable = attrs.evolve(_expired_then_crash(source), clock_mark=None)
    source.set(90)
    store = TtlStore.open(source, durable=durable)
    with pytest.raises(ClockRegression, match="reading 90 is below the previous reading 100"):
        store.get(b"k")
    with pytest.raises(ClockRegression):
        store.put(b"j", b"w")


def _read_expired_then_crash(source: ManualClock) -> Durable:
    """k (ttl 5) written and flushed at 0; a read at 10 sees it expired; then the process dies."""
    store = TtlStore.open(source)
    store.put(b"k", b"v", ttl=5)
    store.flush()
    source.set(10)
    assert store.get(b"k") is None
    return store.crash()


def test_a_row_a_read_saw_expired_never_comes_back_after_a_crash():
    source = ManualClock(0)
    durable = _read_expired_then_crash(source)
    assert durable.clock_mark == 10 and durable.manifest.timestamp == 0
    source.set(3)  # the user clock restarted behind the read, ahead of every write
    store = TtlStore.open(source, durable=durable)
    for operation in (lambda: store.get(b"k"), store.scan, lambda: store.put(b"j", b"w")):
        with pytest.raises(ClockRegression, match="reading 3 is below the previous reading 10"):
            operation()
    source.set(10)
    assert store.get(b"k") is None and store.scan() == []


def test_the_seeds_weaker_rule_would_show_it_again(monkeypatch):
    """Why the mark: seeded from written timestamps alone (the seed's rule), the row is back."""
    source = ManualClock(0)
    durable = _read_expired_then_crash(source)
    source.set(3)
    monkeypatch.setattr(model_store, "seed_sources", lambda d: (d.manifest.timestamp,))
    assert TtlStore.open(source, durable=durable).get(b"k") == b"v"


def test_a_compactions_reading_is_durable_too():
    source = ManualClock(0)
    store = TtlStore.open(source, model_store.StoreOptions(periodic_compaction_interval=10))
    store.put(b"k", b"v", ttl=5)
    store.flush()
    source.set(1000)
    assert store.periodic_compact() == ("sst-0",)
    durable = store.crash()
    assert (durable.manifest.timestamp, durable.clock_mark) == (1000, 1000)
    source.set(500)
    with pytest.raises(ClockRegression, match="previous reading 1000"):
        TtlStore.open(source, durable=attrs.evolve(durable, clock_mark=None)).get(b"k")
