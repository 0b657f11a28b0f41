"""Reclocking source updates through a remap, in every FromTime domain."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frontier_harness.model.reclocking.reclock as reclock_module
from frontier_harness.model.errors import InvalidTime
from frontier_harness.model.reclocking.reclock import Reclocked, assign, reclock
from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, advance_collection, at
from frontier_harness.model.time.domains import Partitioned, PartitionedTime, Product, Total
from tests.reclocking_strategies import remaps, sources

DOMAINS = [Total(), Product(Total(), Total()), Partitioned()]
FAST = settings(max_examples=60, deadline=None)
P = PartitionedTime


def total(*times: int) -> Antichain:
    return Antichain.of(Total(), times)


def test_updates_go_to_the_first_time_they_are_not_beyond():
    r = Remap.minted(Total(), [(total(3), 10), (total(6), 20)])
    got = reclock(r, [Update("a", 2, 1), Update("b", 3, 1), Update("c", 5, -1), Update("d", 6, 1)])
    assert got == Reclocked(
        (Update("a", 10, 1), Update("b", 20, 1), Update("c", 20, -1)),
        (Update("d", 6, 1),),
    )


def test_nothing_is_reclockable_at_the_initial_remap_and_everything_once_closed():
    source = [Update("a", 0, 1), Update("b", 10**6, 1)]
    assert reclock(Remap.initial(Total()), source).pending == tuple(source)
    closed = Remap.minted(Total(), [(total(), 4)])
    assert reclock(closed, source) == Reclocked((Update("a", 4, 1), Update("b", 4, 1)), ())


def test_product_update_is_complete_once_no_frontier_element_is_below_it():
    d = Product(Total(), Total())
    r = Remap.minted(d, [(Antichain.of(d, [(3, 0), (0, 2)]), 1), (Antichain.of(d, [(3, 2)]), 2)])
    assert [assign(r, s) for s in [(0, 0), (1, 1), (2, 5), (3, 0), (3, 2), (4, 9)]] == [
        1,
        1,
        2,
        2,
        None,
        None,
    ]


def test_source_times_are_validated():
    with pytest.raises(InvalidTime):
        reclock(Remap.initial(Partitioned()), [Update("a", 3, 1)])


def contents_hold(r, source) -> bool:
    """At every readable step `t` the reclocked contents are the source updates not beyond `R(t)`."""
    got = reclock(r, source)
    for t, frontier in r.steps():
        expected: Counter = Counter()
        for u in source:
            if not frontier.less_equal(u.time):
                expected[u.data] += u.diff
        if at(INTO, got.updates, t) != {k: v for k, v in sorted(expected.items()) if v}:
            return False
    return True


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_reclocked_contents_are_exactly_the_complete_source_updates(domain, data):
    r, source = data.draw(remaps(domain)), data.draw(sources(domain))
    assert contents_hold(r, source)


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_every_update_is_assigned_once_or_pending(domain, data):
    r, source = data.draw(remaps(domain)), data.draw(sources(domain))
    got = reclock(r, source)
    per_data: Counter = Counter()
    for u in got.updates + got.pending:
        per_data[u.data] += u.diff
    expected: Counter = Counter()
    for u in source:
        expected[u.data] += u.diff
    assert +per_data == +expected and -per_data == -expected
    latest = r.latest()
    assert all(latest.less_equal(u.time) for u in got.pending)
    for u in source:
        t = assign(r, u.time)
        assert t is None or (
            not r.at(t).less_equal(u.time) and all(r.at(s).less_equal(u.time) for s, _ in r.steps() if s < t)
        )


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_compaction_commutes_with_reclocking(domain, data):
    r, source = data.draw(remaps(domain)), data.draw(sources(domain))
    since = Antichain.of(INTO, [data.draw(st.integers(0, r.steps()[-1][0]))])
    before, after = reclock(r, source), reclock(r.compact(since), source)
    assert after.updates == tuple(advance_collection(INTO, before.updates, since))
    assert after.pending == before.pending


@st.composite
def partition_histories(draw):
    """Partition 0's offsets per tick, and two different histories for partition 1 (None: unseen)."""
    n = draw(st.integers(1, 6))
    zero = sorted(draw(st.lists(st.integers(0, 10), min_size=n, max_size=n)))

    def other():
        offsets = sorted(draw(st.lists(st.integers(0, 10), min_size=n, max_size=n)))
        seen = draw(st.integers(0, n))
        return [None if i < seen else o for i, o in enumerate(offsets)]

    return zero, other(), other()


def partitioned_remap(zero, one):
    d = Partitioned()
    observed = []
    for tick, (a, b) in enumerate(zip(zero, one), start=1):
        offsets = {0: a} if b is None else {0: a, 1: b}
        observed.append((Antichain.of(d, d.live_frontier(offsets)), tick))
    return Remap.minted(d, observed)


@FAST
@given(partition_histories(), st.lists(st.integers(0, 11), min_size=1, max_size=6))
def test_partition_assignment_ignores_other_partitions(histories, offsets):
    zero, first, second = histories
    r1, r2 = partitioned_remap(zero, first), partitioned_remap(zero, second)
    for o in offsets:
        assert assign(r1, P.point(0, o)) == assign(r2, P.point(0, o))


def test_partition_update_stays_put_when_only_another_partition_moves():
    d = Partitioned()
    base = [
        (Antichain.of(d, d.live_frontier({0: 4})), 1),
        (Antichain.of(d, d.live_frontier({0: 4, 1: 2})), 2),
    ]
    moved = Remap.minted(d, base + [(Antichain.of(d, d.live_frontier({0: 4, 1: 9})), 3)])
    assert assign(Remap.minted(d, base), P.point(0, 3)) == assign(moved, P.point(0, 3)) == 1
    assert assign(moved, P.point(1, 5)) == 3 and assign(moved, P.point(2, 0)) is None


def test_planted_assignment_with_frontier_le_is_caught(monkeypatch):
    monkeypatch.setattr(
        reclock_module,
        "reclockable_at",
        lambda frontier, time: frontier.le(Antichain.of(frontier.domain, [time])),
    )
    r = Remap.minted(Total(), [(total(3), 2)])
    assert not contents_hold(r, [Update("a", 1, 1)])
