"""Our pgoutput decoder against a real slot: every change, both LSNs of each commit (PostgreSQL's own
test_decoding names the same end LSN), peeking never consumes, a slot moves only forward."""

from __future__ import annotations

import uuid

import pytest

from frontier_harness.spark_impl.cdc import slot as slots
from frontier_harness.spark_impl.cdc.pgoutput import lsn
from frontier_harness.spark_impl.cdc.upstream import Upstream


@pytest.fixture
def upstream(postgres_cluster):
    made = Upstream.create(postgres_cluster, f"decode_{uuid.uuid4().hex[:8]}")
    yield made
    made.close()


def _commit(upstream: Upstream, *writes: tuple) -> None:
    upstream.begin(0)
    for op, key, value, count in writes:
        upstream.write(0, op, key, value, count)
    upstream.commit(0)


def test_each_change_decodes_with_its_rows_and_its_commit_end_lsn(upstream):
    _commit(
        upstream, ("insert", 1, "a", 3), ("update", 1, "b", 1), ("update", 1, "c", 1), ("delete", 2, None, 1)
    )
    _commit(upstream, ("insert", 10, "x", 150))
    with upstream.connection() as conn:
        first, large = slots.peek(conn, upstream.slot, upstream.publication)
    assert [(c.op, c.before, c.after) for c in first.changes] == [
        ("insert", None, {"k": "1", "v": "a"}),
        ("insert", None, {"k": "2", "v": "a"}),
        ("insert", None, {"k": "3", "v": "a"}),
        ("update", {"k": "1", "v": "a"}, {"k": "1", "v": "b"}),
        ("update", {"k": "1", "v": "b"}, {"k": "1", "v": "c"}),
        ("delete", {"k": "2", "v": "a"}, None),
    ]
    assert [c.seq for c in first.changes] == list(range(6)) and {c.relation for c in first.changes} == {
        "public.t"
    }
    assert len(large.changes) == 150 and first.commit_lsn < first.end_lsn <= large.commit_lsn < large.end_lsn
    upstream.observe()  # PostgreSQL's own decoder: the COMMIT row's LSN is the end LSN
    assert {e for _, _, e, _, _ in upstream.transactions()} == {first.end_lsn, large.end_lsn}
    assert {(n, twice) for n, _, _, n, twice in upstream.transactions()} == {(6, True), (150, False)}


def test_peeking_consumes_nothing_upto_keeps_whole_transactions_and_a_slot_never_goes_back(upstream):
    _commit(upstream, ("insert", 1, "a", 2))
    _commit(upstream, ("insert", 5, "b", 1))
    with upstream.connection() as conn:
        before = slots.required(conn, upstream.slot).confirmed_flush
        one, two = slots.peek(conn, upstream.slot, upstream.publication)
        assert [t.end_lsn for t in slots.peek(conn, upstream.slot, upstream.publication, one.end_lsn)] == [
            one.end_lsn
        ]
        assert slots.required(conn, upstream.slot).confirmed_flush == before
        slots.advance(conn, upstream.slot, one.end_lsn)
        assert [t.xid for t in slots.peek(conn, upstream.slot, upstream.publication)] == [two.xid]
        slots.advance(conn, upstream.slot, before)  # back: nothing happens
        assert (
            slots.required(conn, upstream.slot).confirmed_flush
            == one.end_lsn
            == lsn(hex(one.end_lsn >> 32)[2:] + "/" + hex(one.end_lsn & 0xFFFFFFFF)[2:])
        )
