"""Practical reclocking: summaries per IntoTime and restart from `R(it)`, both cases of the seed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frontier_harness.model.reclocking.summary as summary_module
from frontier_harness.model.errors import (
    InvalidTime,
    InvalidTransactionInput,
    NoSummaryAt,
    PartiallyClosedUpper,
    ReadNotValid,
)
from frontier_harness.model.reclocking.reclock import reclock
from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.reclocking.summary import (
    DataRecord,
    Independent,
    Summary,
    Transactional,
    TxnRecord,
    combined_upper,
    project,
    restart,
    run,
    summary_at,
)
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, at
from frontier_harness.model.time.domains import Partitioned, PartitionedTime, Product, Total
from tests.reclocking_strategies import remaps
from tests.reclocking_strategies import sources as shared_sources

DOMAINS = [Total(), Product(Total(), Total()), Partitioned()]
PAIR = Product(Total(), Total())
FAST = settings(max_examples=60, deadline=None)
P = PartitionedTime


def total(*times: int) -> Antichain:
    return Antichain.of(Total(), times)


def sources(domain):
    return shared_sources(domain, diffs=(1, 1, -1))


@st.composite
def transactions(draw):
    """Transactions t0.. in metadata order, sizes 1-3, some data never arriving; a Product remap."""
    n = draw(st.integers(1, 4))
    meta = sorted(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))
    records = []
    for i in range(n):
        size = draw(st.integers(1, 3))
        records.append(TxnRecord(f"t{i}", size, meta[i]))
        records += [
            DataRecord(f"t{i}", f"t{i}:{j}", draw(st.integers(0, 9)))
            for j in range(draw(st.integers(0, size)))
        ]
    k = draw(st.integers(1, 6))
    data_uppers = sorted(draw(st.lists(st.integers(0, 11), min_size=k, max_size=k)))
    txn_uppers = sorted(draw(st.lists(st.integers(0, 7), min_size=k, max_size=k)))
    observed = [
        (combined_upper(total(a), total(b)), 2 * i + 1)
        for i, (a, b) in enumerate(zip(data_uppers, txn_uppers))
    ]
    if draw(st.booleans()):
        observed.append((combined_upper(total(), total()), 2 * k + 1))
    return Remap.minted(PAIR, observed), draw(st.permutations(records))


def restarts_agree(r, summarizer, records) -> bool:
    """From every readable `it`, with all records or only those from `R(it)`, restart equals `run`."""
    full = run(r, summarizer, records)
    for it in range(r.steps()[0][0], r.steps()[-1][0] + 2):
        if not r.readable(it):
            continue
        later = tuple((t, s) for t, s in full if t > it)
        unread = [x for x in records if not summarizer.covers(r.at(it), x)]
        for remap, given_records in (
            (r, records),
            (r, unread),
            (r.compact(Antichain.of(INTO, [it])), unread),
        ):
            if restart(remap, summarizer, it, summary_at(full, it), given_records) != later:
                return False
    return True


# -- independent records ---------------------------------------------------------------------


def test_independent_summary_is_the_output_published_so_far():
    r = Remap.minted(Total(), [(total(2), 3), (total(5), 6)])
    got = run(r, Independent(), [Update("a", 0, 1), Update("b", 3, 1), Update("c", 7, 1)])
    assert [t for t, _ in got] == [0, 3, 6]
    assert got[2][1] == Summary((Update("a", 3, 1), Update("b", 6, 1)))


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_independent_summaries_are_the_reclocked_collection(domain, data):
    r, source = data.draw(remaps(domain)), data.draw(sources(domain))
    reclocked = reclock(r, source).updates
    for t, summary in run(r, Independent(), source):
        assert summary.temp == ()
        assert summary.output == tuple(u for u in reclocked if u.time <= t)


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.name)
@FAST
@given(data=st.data())
def test_independent_restart_gives_identical_summaries(domain, data):
    r, source = data.draw(remaps(domain)), data.draw(sources(domain))
    assert restarts_agree(r, Independent(), source)


def test_restart_at_an_unreadable_time_is_a_typed_error():
    r = Remap.minted(Total(), [(total(2), 3)])
    with pytest.raises(ReadNotValid):
        restart(r, Independent(), 4, Summary(), [])


def test_summary_before_the_first_step_is_a_typed_error():
    with pytest.raises(NoSummaryAt, match="no summary at 1"):
        summary_at(((2, Summary()),), 1)


# -- transactions ----------------------------------------------------------------------------


def test_project_and_combined_upper():
    upper = combined_upper(total(4), total(2))
    assert (project(upper, 0), project(upper, 1)) == (total(4), total(2))
    assert combined_upper(total(), total()).is_empty()
    with pytest.raises(PartiallyClosedUpper, match=r"data upper \{\} with metadata upper \{2\}"):
        combined_upper(total(), total(2))


def test_transaction_waits_for_its_metadata_and_all_its_data():
    r = Remap.minted(PAIR, [(combined_upper(total(1), total(1)), 1), (combined_upper(total(2), total(1)), 2)])
    records = [TxnRecord("t", 2, 0), DataRecord("t", "x", 0), DataRecord("t", "y", 1)]
    (_, s0), (_, s1), (_, s2) = run(r, Transactional(), records)
    assert s1 == Summary((), (DataRecord("t", "x", 0), TxnRecord("t", 2, 0)))
    assert s2 == Summary((Update("x", 2, 1), Update("y", 2, 1)), ())


def test_ordered_variant_holds_a_complete_transaction_behind_an_incomplete_earlier_one():
    r = Remap.minted(PAIR, [(combined_upper(total(1), total(2)), 1), (combined_upper(total(2), total(2)), 2)])
    records = [
        TxnRecord("a", 1, 0),
        TxnRecord("b", 1, 1),
        DataRecord("a", "a:0", 1),
        DataRecord("b", "b:0", 0),
    ]
    unordered = run(r, Transactional(ordered=False), records)
    ordered = run(r, Transactional(ordered=True), records)
    assert unordered[1][1].output == (Update("b:0", 1, 1),)
    assert ordered[1][1] == Summary(
        (), (DataRecord("b", "b:0", 0), TxnRecord("a", 1, 0), TxnRecord("b", 1, 1))
    )
    assert ordered[2][1].output == (Update("a:0", 2, 1), Update("b:0", 2, 1))


def test_transactional_input_is_validated():
    r = Remap.initial(PAIR)
    with pytest.raises(InvalidTransactionInput, match="'t'"):
        run(r, Transactional(), [TxnRecord("t", 1, 0), TxnRecord("t", 1, 1)])
    with pytest.raises(InvalidTransactionInput, match="2 data records but size 1"):
        run(r, Transactional(), [TxnRecord("t", 1, 0), DataRecord("t", "x", 0), DataRecord("t", "y", 0)])
    with pytest.raises(InvalidTime, match="product"):
        run(Remap.initial(Total()), Transactional(), [TxnRecord("t", 1, 0)])


def expected_output(r, records, ordered, t) -> set:
    """Oracle, non-incremental: payloads of transactions publishable at `R(t)`."""
    frontier = r.at(t)
    covered = [x for x in records if Transactional().covers(frontier, x)]
    metas = [x for x in covered if isinstance(x, TxnRecord)]
    have = {m.txn: sum(1 for x in covered if isinstance(x, DataRecord) and x.txn == m.txn) for m in metas}
    complete = {m.txn for m in metas if have[m.txn] == m.size}
    ok = {
        m.txn
        for m in metas
        if m.txn in complete and (not ordered or all(e.txn in complete for e in metas if e.time <= m.time))
    }
    return {x.payload for x in covered if isinstance(x, DataRecord) and x.txn in ok}


def outputs_match(r, records, ordered) -> bool:
    for t, summary in run(r, Transactional(ordered), records):
        published = at(INTO, summary.output, t)
        if set(published) != expected_output(r, records, ordered, t) or any(
            n != 1 for n in published.values()
        ):
            return False
        covered = {x for x in records if Transactional().covers(r.at(t), x)}
        published_txns = {x.txn for x in covered if isinstance(x, DataRecord) and x.payload in published}
        if set(summary.temp) != {x for x in covered if x.txn not in published_txns}:
            return False
    return True


@pytest.mark.parametrize("ordered", [True, False])
@FAST
@given(history=transactions())
def test_transactional_output_and_temp_match_the_oracle(ordered, history):
    r, records = history
    assert outputs_match(r, records, ordered)


@pytest.mark.parametrize("ordered", [True, False])
@FAST
@given(history=transactions())
def test_transactional_restart_gives_identical_summaries(ordered, history):
    r, records = history
    assert restarts_agree(r, Transactional(ordered), records)


def test_planted_emission_before_an_earlier_incomplete_transaction_is_caught(monkeypatch):
    r = Remap.minted(PAIR, [(combined_upper(total(1), total(2)), 1)])
    records = [
        TxnRecord("a", 1, 0),
        TxnRecord("b", 1, 1),
        DataRecord("a", "a:0", 1),
        DataRecord("b", "b:0", 0),
    ]
    assert outputs_match(r, records, ordered=True)
    monkeypatch.setattr(summary_module, "earlier_complete", lambda record, pool, complete, domain: True)
    assert not outputs_match(r, records, ordered=True)
