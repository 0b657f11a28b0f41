"""The model of bounded input reliance: upstream log, ingestion, resumption frontiers, crashes, restarts."""

from __future__ import annotations

from collections import Counter

import attrs
import pytest

import frontier_harness.model.ingestion.ingestion as ingestion
from frontier_harness.model.errors import CompactedRead, UnknownFault, UnknownPartition
from frontier_harness.model.ingestion.ingestion import (
    CHECKPOINT_FAULTS,
    INGEST_FAULTS,
    Pipeline,
    checkpoint,
    ingest,
    offset_resumption,
    restart,
    timestamp_resumption,
)
from frontier_harness.model.ingestion.upstream import Upstream, needed_offset
from frontier_harness.model.reclocking.remap import INTO
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Partitioned, PartitionedTime, Total
from frontier_harness.properties.checks.ingestion.resumption import laws, observe, uninterrupted
from frontier_harness.properties.checks.ingestion.strategies.ingestion import draw_ingestion_history
from frontier_harness.properties.engine.source import RandomSource

P = PartitionedTime


def produce(p: Pipeline, *data: str, partition: int = 0) -> Pipeline:
    for d in data:
        p = attrs.evolve(p, upstream=p.upstream.produce(partition, d))
    return p


def contents(p: Pipeline) -> Counter:
    counts = Counter()
    for u in p.durable.data.updates:
        counts[u.data] += u.diff
    return +counts


# --- upstream -------------------------------------------------------------


def test_lsn_log_reads_beyond_a_frontier_and_refuses_compacted_offsets():
    log = Upstream.empty(Total())
    for d in "abcd":
        log = log.produce(0, d)
    log = log.commit(Antichain.of(Total(), [2])).compact()
    assert log.start == (2,)
    assert [u.data for u in log.read(Antichain.of(Total(), [2]))] == ["c", "d"]
    with pytest.raises(CompactedRead, match="needs offset 1"):
        log.read(Antichain.of(Total(), [1]))


def test_partitioned_log_compacts_per_partition_and_grows_densely():
    log = Upstream.empty(Partitioned()).produce(0, "a").produce(0, "b").produce(1, "c")
    assert log.upper() == Antichain.of(Partitioned(), [P(0, 0, 2), P(1, 1, 1), P.rest(2)])
    log = log.commit(Antichain.of(Partitioned(), [P(0, 0, 1), P(1, 1, 0), P.rest(2)])).compact()
    assert log.start == (1, 0)
    with pytest.raises(UnknownPartition):
        log.produce(3, "x")
    with pytest.raises(CompactedRead, match="partition 0 needs offset 0"):
        log.read(Antichain.of(Partitioned(), [Partitioned().minimum]))
    assert needed_offset(Partitioned(), Antichain.of(Partitioned(), [P.rest(2)]), 0) is None


def test_commit_may_go_back_but_compaction_never_does():
    log = Upstream.empty(Total()).produce(0, "a").produce(0, "b").commit(Antichain.of(Total(), [2])).compact()
    log = log.commit(Antichain.of(Total(), [0])).compact()
    assert log.committed == Antichain.of(Total(), [0]) and log.start == (2,)


# --- pipeline ---------------------------------------------------------------


def test_resumption_is_the_meet_of_uppers_and_inverts_strictly_before_it():
    p = ingest(produce(Pipeline.start(Total()), "a", "b"), 2)
    p = ingest(produce(p, "c"), 4, "after_remap_append")
    durable = p.durable
    assert (durable.data.upper, durable.remap.upper) == (Antichain.of(INTO, [3]), Antichain.of(INTO, [5]))
    assert timestamp_resumption(durable) == Antichain.of(INTO, [3])
    # R(2) = {2}: "c" (offset 2) was reclocked to 4, which is not yet in the data shard.
    assert offset_resumption(durable) == Antichain.of(Total(), [2])


def test_restart_after_remap_append_reclocks_to_the_same_times():
    p = ingest(produce(Pipeline.start(Total()), "a"), 2)
    crashed = ingest(produce(p, "b"), 4, "after_remap_append")
    resumed = ingest(restart(crashed), 6)
    calm = ingest(ingest(produce(p, "b"), 4), 6)
    assert resumed.durable.data.updates == calm.durable.data.updates


@pytest.mark.parametrize("fault", INGEST_FAULTS)
def test_every_ingest_fault_then_restart_loses_and_duplicates_nothing(fault):
    p = ingest(produce(Pipeline.start(Partitioned()), "a", "b"), 1)
    p = checkpoint(p)
    p = ingest(produce(p, "c", partition=1), 3, fault)
    assert not p.running
    p = attrs.evolve(p, upstream=p.upstream.compact())
    p = ingest(produce(restart(p), "d"), 5)
    assert contents(p) == Counter({"a": 1, "b": 1, "c": 1, "d": 1})


@pytest.mark.parametrize("fault", CHECKPOINT_FAULTS)
def test_checkpoint_faults_commit_then_restart(fault):
    p = ingest(produce(Pipeline.start(Total()), "a", "b"), 2)
    p = ingest(produce(p, "c"), 3)
    p = checkpoint(p, fault)
    assert p.upstream.committed == Antichain.of(Total(), [3]) and not p.running
    assert (p.durable.remap.since == Antichain.of(INTO, [3])) == (fault == "after_compaction")
    p = ingest(restart(attrs.evolve(p, upstream=p.upstream.compact())), 7)
    assert contents(p) == Counter({"a": 1, "b": 1, "c": 1})


def test_both_checkpoint_orders_commit_the_same_frontier_and_compact_alike():
    p = ingest(produce(Pipeline.start(Total()), "a", "b"), 2)
    p = ingest(produce(p, "c"), 4, "after_remap_append")
    p = ingest(produce(restart(p), "d"), 6)
    assert checkpoint(p, compact_first=True) == checkpoint(p)
    crashed = checkpoint(p, "after_compaction", compact_first=True)
    assert crashed.durable.remap.since == checkpoint(p).durable.remap.since
    assert crashed.upstream.committed == p.upstream.committed and not crashed.running
    resumed = restart(attrs.evolve(crashed, upstream=crashed.upstream.compact()))
    assert resumed.upstream.committed == checkpoint(p).upstream.committed
    assert contents(ingest(resumed, 8)) == Counter({"a": 1, "b": 1, "c": 1, "d": 1})


def test_compaction_steps_back_one_tick_so_restart_inverts_correctly():
    p = checkpoint(ingest(produce(Pipeline.start(Total()), "a"), 4))
    assert timestamp_resumption(p.durable) == Antichain.of(INTO, [5])
    assert p.durable.remap.since == Antichain.of(INTO, [4])
    assert offset_resumption(p.durable) == Antichain.of(Total(), [1])


def test_compacting_to_the_resumption_frontier_itself_would_need_compacted_offsets(monkeypatch):
    # The reclocking author's warning, reproduced: since = T makes source_upper_at(T) = {minimum}.
    monkeypatch.setattr(
        ingestion, "remap_since", lambda remap, target: target if target != remap.since else None
    )
    p = ingest(produce(Pipeline.start(Total()), "a"), 4)
    p = checkpoint(restart(ingest(produce(p, "b"), 6, "after_remap_append")))
    assert p.durable.remap.since == Antichain.of(INTO, [5]) and p.upstream.committed == Antichain.of(
        Total(), [1]
    )
    p = attrs.evolve(p, upstream=p.upstream.compact())
    with pytest.raises(CompactedRead):
        restart(p)


def test_a_crashed_pipeline_does_nothing_and_faults_are_named():
    p = ingest(produce(Pipeline.start(Total()), "a"), 1, "mid_remap_write")
    assert ingest(p, 2) == p and checkpoint(p) == p
    with pytest.raises(UnknownFault, match="after_commit"):
        ingest(p, 3, "after_commit")


def test_random_histories_obey_the_laws_on_the_model():
    for seed in range(300):
        for domain in ("total", "partitioned"):
            h = draw_ingestion_history(RandomSource(seed), domain)
            outcome = laws(h, observe(h), observe(uninterrupted(h)))
            assert outcome.ok, (seed, domain, outcome.message)
