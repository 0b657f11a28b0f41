"""The ingestion pipeline with bounded input reliance: shards, resumption, commits, crashes, restarts.

A running pipeline reads the upstream log from its position, mints a remap
binding at the tick (`Remap.mint` with the upstream's upper), reclocks what it
read, and appends the remap shard, then the data shard (order chosen as in
Materialize: a binding is durable before any data reclocked to it, so the data
upper never passes the remap upper). A checkpoint computes the *timestamp
resumption frontier* (meet of the two shards' uppers), the *offset resumption
frontier* (the remap inverted there), commits the latter upstream and compacts
the remap, in either order (the seed: compaction "can happen in any order with
when we commit the upstream frontier"). A crash at a named fault point drops
everything in memory; a restart reads the shards, recomputes both frontiers,
commits and reads from there.

Rules the planted-bug tests replace are module-level functions looked up at call
time: `combine_uppers`, `compaction_target`.

>>> from frontier_harness.model.time.domains import Total
>>> p = Pipeline.start(Total())
>>> p = ingest(attrs.evolve(p, upstream=p.upstream.produce(0, "a")), 3)
>>> p.durable.data.updates, p.durable.data.upper, p.durable.remap.upper
((Update(data='a', time=3, diff=1),), {4}, {4})
"""

from __future__ import annotations

import attrs

from frontier_harness.model.errors import UnknownFault
from frontier_harness.model.ingestion.upstream import Upstream
from frontier_harness.model.reclocking.reclock import reclock
from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Domain
from frontier_harness.model.time.shard import Shard
from frontier_harness.model.vocabulary.ingestion import CHECKPOINT_FAULTS, INGEST_FAULTS, Fault


@attrs.frozen
class Durable:
    """What survives a crash: the data shard (Total IntoTime) and the remap shard.

    >>> from frontier_harness.model.time.domains import Total
    >>> Durable.empty(Total()).data.upper, Durable.empty(Total()).remap.upper
    ({0}, {1})
    """

    data: Shard
    remap: Remap

    @classmethod
    def empty(cls, domain: Domain) -> Durable:
        """Both shards before any ingestion: an empty data shard and the initial remap."""
        return cls(Shard.empty(INTO), Remap.initial(domain))


@attrs.frozen
class Reader:
    """In-memory state of a running ingestion: the upstream position read up to, and unreclocked records.

    >>> from frontier_harness.model.time.domains import Total
    >>> Reader(Antichain.of(Total(), [2])).pending
    ()
    """

    position: Antichain
    pending: tuple = ()


@attrs.frozen
class Pipeline:
    """The upstream, the durable shards, and the reader (None while crashed).

    >>> from frontier_harness.model.time.domains import Total
    >>> Pipeline.start(Total()).reader.position
    {0}
    """

    upstream: Upstream
    durable: Durable
    reader: Reader | None

    @classmethod
    def start(cls, domain: Domain) -> Pipeline:
        """A fresh upstream and shards, started like a restart."""
        return restart(cls(Upstream.empty(domain), Durable.empty(domain), None))

    @property
    def running(self) -> bool:
        return self.reader is not None


def combine_uppers(data_upper: Antichain, remap_upper: Antichain) -> Antichain:
    """Rule: the timestamp resumption frontier is the meet of the shards' uppers (earliest not durable in both).

    >>> combine_uppers(Antichain.of(INTO, [3]), Antichain.of(INTO, [5]))
    {3}
    """
    return data_upper.meet(remap_upper)


def timestamp_resumption(durable: Durable) -> Antichain:
    """`combine_uppers` of the data and remap shards' uppers.

    >>> from frontier_harness.model.time.domains import Total
    >>> timestamp_resumption(Durable.empty(Total()))
    {0}
    """
    return combine_uppers(durable.data.upper, durable.remap.upper)


def offset_resumption(durable: Durable) -> Antichain:
    """The remap inverted at the timestamp resumption frontier: every source record not beyond it is durable.

    >>> from frontier_harness.model.time.domains import Total
    >>> offset_resumption(Durable.empty(Total()))
    {0}
    """
    return durable.remap.source_upper_at(timestamp_resumption(durable))


def compaction_target(durable: Durable) -> Antichain:
    """Rule: the frontier the remap may be compacted up to: the timestamp resumption frontier.

    >>> from frontier_harness.model.time.domains import Total
    >>> compaction_target(Durable.empty(Total()))
    {0}
    """
    return timestamp_resumption(durable)


def remap_since(remap: Remap, target: Antichain) -> Antichain | None:
    """The remap's new since for `target`: one tick before it, or None when that would not advance.

    Choice (as Materialize's step-back): since = target - 1, not target, so the
    bindings strictly before `target` stay distinguishable and `source_upper_at(target)`
    still inverts to `R(target - 1)` after compaction (at since itself it is `{minimum}`).

    >>> from frontier_harness.model.time.domains import Total
    >>> r = Remap.minted(Total(), [(Antichain.of(Total(), [4]), 2)])
    >>> remap_since(r, Antichain.of(INTO, [3])), remap_since(r, Antichain.of(INTO, [1]))
    ({2}, None)
    """
    t = next(iter(target), None)
    since = next(iter(remap.since))
    if t is None or t - 1 <= since:
        return None
    return Antichain.of(INTO, [t - 1])


def _check_fault(fault: str | None, allowed: tuple) -> None:
    if fault is not None and fault not in allowed:
        raise UnknownFault(fault, allowed)


def _crash(pipeline: Pipeline, **changes) -> Pipeline:
    return attrs.evolve(pipeline, reader=None, **changes)


def ingest(pipeline: Pipeline, tick: int, fault: str | None = None) -> Pipeline:
    """Reads new records, mints at `tick`, appends remap then data shard; crashes at `fault` if named.

    A crashed pipeline does nothing. A tick not beyond the remap's upper mints
    nothing; records beyond the latest binding stay pending in memory.

    >>> from frontier_harness.model.time.domains import Total
    >>> p = Pipeline.start(Total())
    >>> p = ingest(attrs.evolve(p, upstream=p.upstream.produce(0, "a")), 2, "after_remap_append")
    >>> p.running, p.durable.remap.upper, p.durable.data.upper
    (False, {3}, {0})
    """
    _check_fault(fault, INGEST_FAULTS)
    reader = pipeline.reader
    if reader is None:  # crashed: nothing runs until a restart
        return pipeline
    upper = pipeline.upstream.upper()
    read = reader.pending + tuple(pipeline.upstream.read(reader.position))
    remap = pipeline.durable.remap.mint(upper, tick)
    if fault == Fault.MID_REMAP_WRITE:
        return _crash(pipeline)
    durable = attrs.evolve(pipeline.durable, remap=remap)
    if fault == Fault.AFTER_REMAP_APPEND:
        return _crash(pipeline, durable=durable)
    reclocked = reclock(remap, read)
    if fault == Fault.MID_DATA_WRITE:
        return _crash(pipeline, durable=durable)
    durable = attrs.evolve(durable, data=durable.data.append(reclocked.updates, remap.upper))
    if fault == Fault.AFTER_DATA_APPEND:
        return _crash(pipeline, durable=durable)
    return attrs.evolve(pipeline, durable=durable, reader=Reader(upper, reclocked.pending))


def checkpoint(pipeline: Pipeline, fault: str | None = None, compact_first: bool = False) -> Pipeline:
    """Commits the offset resumption frontier upstream, then compacts the remap (`remap_since`), or the
    other way round when `compact_first`; crashes after the step `fault` names.

    Both orders commit the same frontier: compaction leaves `R(t)` unchanged from the new
    since on, and the inversion at `t` reads `R(t - 1)` with the since at most `t - 1`.

    >>> from frontier_harness.model.time.domains import Total
    >>> p = Pipeline.start(Total())
    >>> p = ingest(attrs.evolve(p, upstream=p.upstream.produce(0, "a")), 2)
    >>> done = checkpoint(p)
    >>> done.upstream.committed, done.durable.remap.since
    ({1}, {2})
    >>> checkpoint(p, compact_first=True) == done
    True
    >>> crashed = checkpoint(p, "after_compaction", compact_first=True)
    >>> crashed.upstream.committed, crashed.durable.remap.since, crashed.running
    ({0}, {2}, False)
    """
    _check_fault(fault, CHECKPOINT_FAULTS)
    if not pipeline.running:
        return pipeline
    steps = [(Fault.AFTER_COMMIT, _commit_upstream), (Fault.AFTER_COMPACTION, _compact_remap)]
    for point, step in reversed(steps) if compact_first else steps:
        pipeline = step(pipeline)
        if fault == point:
            return _crash(pipeline)
    return pipeline


def _commit_upstream(pipeline: Pipeline) -> Pipeline:
    """The upstream commits the offset resumption frontier."""
    return attrs.evolve(pipeline, upstream=pipeline.upstream.commit(offset_resumption(pipeline.durable)))


def _compact_remap(pipeline: Pipeline) -> Pipeline:
    """The remap compacted to `remap_since` of the compaction target (unchanged if that does not advance)."""
    durable = pipeline.durable
    since = remap_since(durable.remap, compaction_target(durable))
    if since is None:
        return pipeline
    return attrs.evolve(pipeline, durable=attrs.evolve(durable, remap=durable.remap.compact(since)))


def restart(pipeline: Pipeline) -> Pipeline:
    """Drops memory, reads the shards, commits the offset resumption frontier and reads from it.

    Reading from a frontier the upstream compacted is `CompactedRead` (never an empty read).

    >>> from frontier_harness.model.time.domains import Total
    >>> p = Pipeline.start(Total())
    >>> p = ingest(attrs.evolve(p, upstream=p.upstream.produce(0, "a")), 2, "after_remap_append")
    >>> restart(p).reader
    Reader(position={1}, pending=(Update(data='a', time=0, diff=1),))
    """
    resume = offset_resumption(pipeline.durable)
    upstream = pipeline.upstream.commit(resume)
    pending = tuple(upstream.read(resume))
    return attrs.evolve(pipeline, upstream=upstream, reader=Reader(upstream.upper(), pending))
