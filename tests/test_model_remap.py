"""The remap collection: minting, validation, compaction and inversion, in every FromTime domain."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frontier_harness.model.reclocking.remap as remap_module
from frontier_harness.model.errors import (
    InvalidRemap,
    InversionBeyondUpper,
    ReadNotValid,
    SinceBeyondUpper,
    SinceRegression,
    SourceUpperRegression,
)
from frontier_harness.model.reclocking.reclock import assign
from frontier_harness.model.reclocking.remap import INTO, Binding, Remap, audit
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Partitioned, PartitionedTime, Product, Total
from tests.reclocking_strategies import remaps

DOMAINS = [Total(), Product(Total(), Total()), Partitioned()]
FAST = settings(max_examples=60, deadline=None)
P = PartitionedTime


def into(*times: int) -> Antichain:
    return Antichain.of(INTO, times)


def total(*times: int) -> Antichain:
    return Antichain.of(Total(), times)


def test_initial_remap_starts_at_the_minimum():
    r = Remap.initial(Product(Total(), Total()))
    assert r.bindings == (Binding((0, 0), 0, 1),)
    assert (r.at(0), r.since, r.upper, audit(r)) == (Antichain.of(r.domain, [(0, 0)]), into(0), into(1), [])


def test_mint_retracts_old_and_inserts_new_at_the_tick():
    r = Remap.initial(Total()).mint(total(4), 3)
    assert r.bindings == (Binding(0, 0, 1), Binding(0, 3, -1), Binding(4, 3, 1))
    assert (r.at(2), r.at(3), r.upper) == (total(0), total(4), into(4))


def test_ticks_that_do_not_advance_are_skipped():
    r = Remap.initial(Total()).mint(total(4), 3)
    assert r.mint(total(9), 3) == r and r.mint(total(9), 0) == r


def test_unchanged_source_upper_advances_the_upper_without_bindings():
    r = Remap.initial(Total()).mint(total(4), 3)
    assert r.mint(total(4), 7) == attrs.evolve(r, upper=into(8))


def test_closed_source_upper_closes_the_remap_and_later_ticks_are_skipped():
    r = Remap.initial(Total()).mint(total(4), 3).mint(total(), 5)
    assert (r.upper, r.latest(), r.at(5), r.at(10**9)) == (into(), total(), total(), total())
    assert r.mint(total(9), 100) == r and audit(r) == []


def test_source_upper_regression_names_both():
    with pytest.raises(SourceUpperRegression, match=r"\{3\} is not >= current \{4\}"):
        Remap.initial(Total()).mint(total(4), 3).mint(total(3), 5)


def test_read_outside_since_upper_is_a_typed_error():
    r = Remap.initial(Total()).mint(total(4), 3).compact(into(2))
    for t in (1, 4):
        with pytest.raises(ReadNotValid):
            r.at(t)


def test_partitioned_mint_touches_only_the_changed_partition():
    d = Partitioned()
    r = Remap.minted(d, [(Antichain.of(d, d.live_frontier({0: 3, 1: 2})), 1)])
    r = r.mint(Antichain.of(d, d.live_frontier({0: 3, 1: 5})), 2)
    assert [b for b in r.bindings if b.into_time == 2] == [
        Binding(P(1, 1, 2), 2, -1),
        Binding(P(1, 1, 5), 2, 1),
    ]


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_minted_remaps_pass_the_validator_and_are_monotone(domain, data):
    r = data.draw(remaps(domain))
    assert audit(r) == []
    steps = r.steps()
    assert all(a.le(b) for (_, a), (_, b) in zip(steps, steps[1:]))
    assert Remap.build(domain, r.bindings, r.upper) == r


# -- the validator: mutated remaps are caught, with the offending bindings named ---------------


def test_build_reports_every_violation_naming_the_bindings():
    bindings = [Binding(0, 0, 1), Binding(0, 2, -1), Binding(5, 2, 1), Binding(5, 4, -1), Binding(3, 4, 1)]
    with pytest.raises(InvalidRemap) as caught:
        Remap.build(Total(), bindings + [Binding(7, 4, 1)], into(5))
    kinds = {v.kind: v for v in caught.value.violations}
    assert set(kinds) == {"regression", "comparable"}
    assert kinds["regression"].bindings == (Binding(5, 2, 1), Binding(3, 4, 1))
    assert "Binding(from_time=3, into_time=4, diff=1)" in str(caught.value)


def test_duplicated_element_is_a_multiplicity_violation():
    r = Remap.initial(Total()).mint(total(4), 3)
    bad = attrs.evolve(r, bindings=r.bindings[:-1] + (Binding(4, 3, 2),))
    [v] = audit(bad)
    assert (v.kind, v.bindings) == ("multiplicity", (Binding(4, 3, 2),))


def test_binding_beyond_upper_or_before_since_is_outside():
    r = Remap.initial(Total())
    [v] = audit(attrs.evolve(r, bindings=r.bindings + (Binding(0, 1, -1), Binding(2, 1, 1))))
    assert v.kind == "outside" and len(v.bindings) == 2


def test_uncompacted_remap_must_start_at_the_minimum():
    with pytest.raises(InvalidRemap, match="start: R\\(0\\) must be \\{0\\}"):
        Remap.build(Total(), [Binding(2, 0, 1)], into(1))


def test_closure_violations_both_ways():
    r = Remap.initial(Total()).mint(total(4), 3)
    assert [v.kind for v in audit(attrs.evolve(r, upper=into()))] == ["closure"]
    closed_source = attrs.evolve(r, bindings=r.bindings + (Binding(4, 5, -1),), upper=into(6))
    assert [v.kind for v in audit(closed_source)] == ["closure"]


def test_malformed_bindings_are_reported_not_crashed_on():
    found = audit(
        attrs.evolve(
            Remap.initial(Partitioned()), bindings=(Binding((0, 0), 0, 1), Binding(P(0, 9, 0), -1, 0))
        )
    )
    assert [v.kind for v in found] == ["malformed", "malformed"]


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_regressing_or_duplicated_mutations_are_caught(domain, data):
    r = data.draw(remaps(domain))
    position = data.draw(st.integers(0, len(r.bindings) - 1))
    b = r.bindings[position]
    doubled = Binding(b.from_time, b.into_time, b.diff * 2)
    mutated = attrs.evolve(r, bindings=r.bindings[:position] + (doubled,) + r.bindings[position + 1 :])
    assert audit(mutated)
    last = r.steps()[-1][0]
    regress = Binding(domain.minimum, last, 1)
    if not r.latest().is_empty() and regress not in r.bindings and not r.upper.is_empty():
        assert audit(
            attrs.evolve(
                r,
                bindings=tuple(
                    sorted(r.bindings + (regress,), key=lambda b: (b.into_time, domain.key(b.from_time)))
                ),
            )
        )


def test_planted_mint_without_retraction_is_caught(monkeypatch):
    monkeypatch.setattr(remap_module, "retractions", lambda old, new, tick: [])
    r = Remap.initial(Total()).mint(total(1), 1)
    [v] = audit(r)
    assert v.kind == "comparable" and v.bindings == (Binding(0, 0, 1), Binding(1, 1, 1))


# -- compaction -------------------------------------------------------------------------------


def test_compaction_advances_and_consolidates():
    r = Remap.minted(Total(), [(total(2), 1), (total(5), 2), (total(7), 4)]).compact(into(2))
    assert r.bindings == (Binding(5, 2, 1), Binding(5, 4, -1), Binding(7, 4, 1))
    assert (r.since, r.at(2), r.at(4), audit(r)) == (into(2), total(5), total(7), [])


def test_since_never_goes_back_and_stays_before_upper():
    r = Remap.minted(Total(), [(total(2), 1), (total(5), 2)]).compact(into(2))
    with pytest.raises(SinceRegression, match=r"\{1\} is not >= current \{2\}"):
        r.compact(into(1))
    for since in (into(3), into()):
        with pytest.raises(SinceBeyondUpper):
            r.compact(since)


def test_closed_remap_compacts_anywhere():
    r = Remap.minted(Total(), [(total(2), 1), (total(), 2)]).compact(into(50))
    assert (r.bindings, r.at(50), audit(r)) == ((), total(), [])


def test_planted_compaction_without_consolidation_is_caught(monkeypatch):
    monkeypatch.setattr(remap_module, "consolidate_bindings", lambda domain, bindings: tuple(bindings))
    r = Remap.minted(Total(), [(total(2), 1), (total(5), 2)]).compact(into(2))
    assert [v.kind for v in audit(r)] == ["unconsolidated"]


def test_planted_since_going_back_is_caught(monkeypatch):
    r = Remap.minted(Total(), [(total(2), 1), (total(5), 4)]).compact(into(3))
    monkeypatch.setattr(remap_module, "check_since", lambda current, requested: None)
    assert "closure" in [v.kind for v in audit(r.compact(into(1)))]


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_compaction_keeps_every_readable_accumulation(domain, data):
    r = data.draw(remaps(domain))
    last = r.steps()[-1][0]
    since = data.draw(st.integers(0, last))
    compacted = r.compact(into(since))
    assert audit(compacted) == []
    assert all(compacted.at(t) == r.at(t) for t in range(since, last + 2) if r.readable(t))
    assert len(compacted.bindings) <= len(r.bindings)


# -- inversion --------------------------------------------------------------------------------


def test_inversion_is_strictly_before_the_frontier():
    r = Remap.minted(Total(), [(total(3), 2), (total(8), 5)])
    assert [r.source_upper_at(into(t)) for t in range(7)] == [total(t) for t in (0, 0, 0, 3, 3, 3, 8)]


def test_inversion_at_or_below_since_is_the_minimum():
    r = Remap.minted(Total(), [(total(3), 2), (total(8), 5)]).compact(into(4))
    assert r.source_upper_at(into(4)) == r.source_upper_at(into(1)) == total(0)
    assert r.source_upper_at(into(5)) == total(3)


def test_inversion_of_the_empty_frontier():
    closed = Remap.minted(Total(), [(total(3), 2), (total(), 5)])
    assert closed.source_upper_at(into()) == total() and closed.source_upper_at(into(5)) == total(3)
    with pytest.raises(InversionBeyondUpper, match=r"at \{\}: it is beyond the remap's upper \{3\}"):
        Remap.minted(Total(), [(total(3), 2)]).source_upper_at(into())


def test_inversion_beyond_upper_is_a_typed_error():
    with pytest.raises(InversionBeyondUpper):
        Remap.minted(Total(), [(total(3), 2)]).source_upper_at(into(4))


def inversion_holds(r, times) -> bool:
    """Every source time reclocked at or after `t` is beyond `source_upper_at({t})`."""
    for t in range(r.steps()[0][0] + 1, r.steps()[-1][0] + 2):
        inverted = r.source_upper_at(into(t))
        late = [s for s in times if (a := assign(r, s)) is not None and a >= t]
        if not all(inverted.less_equal(s) for s in late):
            return False
    return True


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_every_later_assigned_update_is_beyond_the_inversion(domain, data):
    r = data.draw(remaps(domain))
    times = [f for _, frontier in r.steps() for f in frontier]
    assert inversion_holds(r, times)


def test_planted_inversion_with_le_is_caught(monkeypatch):
    r = Remap.minted(Total(), [(total(3), 2)])
    monkeypatch.setattr(
        remap_module, "binding_before", lambda into_time, frontier: not frontier.less_than(into_time)
    )
    assert not inversion_holds(r, [0, 1, 2])
