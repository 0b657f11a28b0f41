"""The foundation's typed errors and MutableAntichain's compactness (the laws suite covers the algebra)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.errors import (
    InvalidTime,
    NotAnAntichain,
    ReadNotValid,
    SinceRegression,
    UnknownDomain,
    UpperRegression,
)
from frontier_harness.model.time.antichain import Antichain, MutableAntichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import (
    PARTITION_MAX,
    Partitioned,
    PartitionedTime,
    Product,
    Total,
    parse_domain,
)
from frontier_harness.model.time.shard import Shard


@pytest.mark.parametrize(
    "domain, value, named",
    [
        (Total(), -1, "-1"),
        (Total(), True, "True"),
        (Partitioned(), PartitionedTime(3, 1, 0), "[3,1]@0"),
        (Partitioned(), PartitionedTime(0, 0, -2), "[0,0]@-2"),
        (Product(Total(), Total()), (1,), "(1,)"),
    ],
)
def test_malformed_times_are_typed_errors_naming_the_value(domain, value, named):
    with pytest.raises(InvalidTime, match=named.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        domain.validate(value)


def test_decode_rejects_inverted_interval():
    with pytest.raises(InvalidTime, match="lo <= hi"):
        Partitioned().decode([5, 2, 0])


def test_unknown_domain_is_named():
    with pytest.raises(UnknownDomain, match="product\\(total\\)"):
        parse_domain("product(total)")


def test_non_antichain_frontier_is_rejected_naming_the_pair():
    with pytest.raises(NotAnAntichain, match=r"\(0, 0\) <= \(1, 1\)"):
        Antichain.checked(Product(Total(), Total()), [(1, 1), (0, 0)])


def test_live_partitioned_frontier_is_an_antichain():
    frontier = Partitioned().live_frontier({0: 5, 1: 0})
    assert Antichain.checked(Partitioned(), frontier).sorted() == [
        PartitionedTime(0, 0, 5),
        PartitionedTime(1, 1, 0),
        PartitionedTime(2, PARTITION_MAX, 0),
    ]


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([1, -1])), max_size=60))
def test_mutable_antichain_stays_compact_under_churn(churn):
    m = MutableAntichain(Total())
    for time, diff in churn:
        m.update_iter([(time, diff)])
    assert m.support() == sum(1 for t in range(4) if m.count(t) != 0)
    assert m.frontier == Antichain.of(Total(), [t for t in range(4) if m.count(t) > 0])


def test_mutable_antichain_negative_count_hides_nothing_until_it_returns_to_zero():
    m = MutableAntichain(Total())
    assert m.update_iter([(1, -1), (2, 1)]) == [(2, 1)]
    assert m.count(1) == -1 and m.frontier == Antichain.of(Total(), [2])
    assert m.update_iter([(1, 1)]) == [] and m.support() == 1
    assert m.update_iter([(1, 1)]) == [(2, -1), (1, 1)]


def test_shard_rejects_regressions_and_invalid_reads():
    d = Total()
    shard = Shard.empty(d).append([Update("a", 1, 1)], Antichain.of(d, [3]))
    with pytest.raises(UpperRegression):
        shard.append([], Antichain.of(d, [2]))
    compacted = shard.compact(Antichain.of(d, [2]))
    with pytest.raises(SinceRegression):
        compacted.compact(Antichain.of(d, [1]))
    with pytest.raises(ReadNotValid, match="cannot read at 1"):
        compacted.read_at(1)
    assert compacted.read_at(2) == {"a": 1}
