"""The ingestion pipeline with bounded input reliance on Spark: every round of a batch in one job.

The pipeline is the model's (`frontier_harness.model.ingestion.ingestion`): an ingest reads the upstream,
mints a remap binding at its tick, appends the remap shard, reclocks what it
read and appends the data shard; a checkpoint commits the offset resumption
frontier (the remap inverted at `combine_uppers` of the shards' uppers) and
compacts the remap one tick before its `compaction_target`; a restart
recomputes the frontiers from the shards, commits and resumes; a fault kills
the process at a named point (`mid_*_write`: the write is lost).

A history's actions are data known in advance, so a batch is one row per
history holding its actions as an array, and the pipeline is a fold over that
array (`F.aggregate`): the state after each action is a function of the state
before it and the action. One Spark job evaluates every round of every history
of the batch: no shuffle, no join, nothing kept on the driver. The state holds
what the model's does, as Spark values:

- the upstream: records per partition, its records `(data, FromTime)`, the
  committed offset frontier and per-partition compaction points;
- the remap shard as *presence intervals* (`frontier_harness.spark_impl.reclocking.remap_intervals`): each
  source frontier element `f` is in `R(t)` for `start <= t < end`; minting
  closes and opens intervals; the intervals keep the whole history and a
  reader sees them compacted to the remap's since (`remap_read`);
- the data shard's rows (each with the step that appended it), both uppers,
  the remap's since, whether it runs;
- per commit, what it committed and the uppers and sinces around it.

What a history showed is derived from its final state once, after the fold:
the state carries no growing list of observation rows through every action.

Choice (kept from the round-by-round pipeline, `frontier_harness.spark_impl.ingestion.durable_ingestion`):
the reader keeps no position between ingests; each ingest reads from the data
shard's offset frontier (the remap inverted at the data upper), which equals
the model's position plus its pending records. A restart that needs offsets the
upstream compacted is not raised here: it shows in the observations (`resumed`
against `upstream_start`, which the resumption laws check).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.model.errors import UnknownFault
from frontier_harness.model.time.partitioned_time import PARTITION_MAX  # value types
from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.ingestion import (
    CHECKPOINT_FAULTS,
    INGEST_FAULTS,
    Fault,
    IngestionAction,
    IngestionStep,
    ResumptionLabel,
    final_tick,
    ingestion_steps,
)
from frontier_harness.spark_impl.arrow import HistoryTables, columns_of, to_frame
from frontier_harness.spark_impl.column_cache import per_session
from frontier_harness.spark_impl.reclocking import remap_intervals as intervals
from frontier_harness.spark_impl.reclocking.reclock import literal, nullable
from frontier_harness.spark_impl.reclocking.remap_intervals import let
from frontier_harness.spark_impl.time import frontiers
from frontier_harness.spark_impl.time.time_columns import TimeColumns, time_columns

FAULTS = {IngestionAction.INGEST: INGEST_FAULTS, IngestionAction.CHECKPOINT: CHECKPOINT_FAULTS}
# The labels of `R(t)` around a compaction, and the field of a commit's `around` rows each reads.
AROUND = {ResumptionLabel.REMAP_BEFORE: "before", ResumptionLabel.REMAP_AFTER: "after"}
LONG = T.LongType()


def combine_uppers(data_upper: Column, remap_upper: Column) -> Column:
    """Rule: the timestamp resumption frontier is the meet of the two Total uppers: the earlier one."""
    return F.least(data_upper, remap_upper)


def compaction_target(data_upper: Column, remap_upper: Column) -> Column:
    """Rule: the remap is compacted up to (one tick before) the timestamp resumption frontier."""
    return combine_uppers(data_upper, remap_upper)


@attrs.frozen
class Shapes:
    """A domain's Spark types: the fold's state and the observation rows."""

    tc: TimeColumns
    minimum: Any

    @property
    def time(self) -> T.DataType:
        return nullable(self.tc.spark_type)

    @property
    def state(self) -> T.StructType:
        frontier = T.ArrayType(self.time)
        return _struct(
            running=T.BooleanType(),
            counts=T.ArrayType(LONG),
            records=T.ArrayType(_struct(data=T.StringType(), time=self.time)),
            committed=frontier,
            start=T.ArrayType(LONG),
            remap=T.ArrayType(_struct(from_time=self.time, start=LONG, end=LONG)),
            remap_upper=LONG,
            since=LONG,
            data=T.ArrayType(_struct(step=LONG, data=T.StringType(), time=LONG)),
            data_upper=LONG,
            commits=T.ArrayType(
                _struct(
                    step=LONG,
                    restart=T.BooleanType(),
                    committed=frontier,
                    start=T.ArrayType(LONG),
                    remap_upper=LONG,
                    since=LONG,
                    since_after=LONG,
                )
            ),
        )

    def minimum_column(self) -> Column:
        return literal(self.tc.to_row(self.minimum), self.tc.spark_type).cast(self.time)


def _struct(**fields: T.DataType) -> T.StructType:
    return T.StructType([T.StructField(name, kind, True) for name, kind in fields.items()])


# --- the upstream --------------------------------------------------------------------------------------


def upstream_upper(tc: TimeColumns, counts: Column) -> Column:
    """The upstream's upper: each partition's next offset; a partitioned log adds `[n, MAX]@0` for the
    partitions not seen yet (so an empty one is at the minimum)."""
    if tc.spark_type == LONG:
        return counts
    seen = F.transform(counts, lambda c, p: _partitioned(p, p, c))
    return F.concat(seen, F.array(_partitioned(F.size(counts), F.lit(PARTITION_MAX), F.lit(0))))


def _partitioned(lo: Column, hi: Column, offset: Column) -> Column:
    return F.struct(lo.cast(LONG).alias("lo"), hi.cast(LONG).alias("hi"), offset.cast(LONG).alias("offset"))


def needed_offset(tc: TimeColumns, frontier: Column, partition: Column) -> Column:
    """The first offset of `partition` a reader at `frontier` needs: the least offset of one covering it."""
    if tc.spark_type == LONG:
        return F.array_min(frontier)
    covering = F.filter(frontier, lambda e: (e["lo"] <= partition) & (partition <= e["hi"]))
    return F.array_min(F.transform(covering, lambda e: e["offset"]))


def produce(shapes: Shapes, state: Column, action: Column) -> Column:
    """The upstream appends a record to its partition (a partitioned log may add the next one)."""
    counts, p = state["counts"], action["partition"]
    known = p < F.size(counts)
    offset = F.when(known, F.get(counts, p.cast("int"))).otherwise(F.lit(0).cast(LONG))
    time = offset if shapes.tc.spark_type == LONG else _partitioned(p, p, offset)
    record = F.struct(action["data"].alias("data"), time.cast(shapes.time).alias("time"))
    grown = F.transform(counts, lambda c, i: F.when(i == p, c + 1).otherwise(c))
    one, zero = F.array(F.lit(1).cast(LONG)), F.array(F.lit(0).cast(LONG))
    return (
        state.withField("counts", F.when(known, grown).otherwise(F.concat(counts, one)))
        .withField("start", F.when(known, state["start"]).otherwise(F.concat(state["start"], zero)))
        .withField("records", F.concat(state["records"], F.array(record)))
    )


def upstream_compact(shapes: Shapes, state: Column) -> Column:
    """The upstream deletes, per partition, the records not beyond its committed offset frontier."""
    committed = state["committed"]

    def kept(first: Column, p: Column) -> Column:
        needed = needed_offset(shapes.tc, committed, p.cast(LONG))
        return F.greatest(first, F.least(needed, F.get(state["counts"], p)))

    return state.withField("start", F.transform(state["start"], kept))


# --- the pipeline --------------------------------------------------------------------------------------


def remap_read(state: Column) -> Column:
    """The remap shard as a reader sees it: compacted to its since."""
    return intervals.compacted(state["remap"], state["since"])


def ingest(shapes: Shapes, state: Column, action: Column) -> Column:
    """Mint at the tick (if beyond the remap's upper), append the remap shard, read from the data shard's
    offset frontier, reclock, append the data shard; a fault stops the process at its point."""
    fault, tick = F.coalesce(action["fault"], F.lit("")), action["tick"]
    mints = tick >= state["remap_upper"]
    upper = upstream_upper(shapes.tc, state["counts"]).cast(T.ArrayType(shapes.time))
    with_remap = state.withField(
        "remap", F.when(mints, intervals.minted(state["remap"], upper, tick)).otherwise(state["remap"])
    ).withField("remap_upper", F.when(mints, tick + 1).otherwise(state["remap_upper"]))
    stopped = F.lit(False)
    return (
        F.when(~state["running"], state)
        .when(fault == Fault.MID_REMAP_WRITE.value, state.withField("running", stopped))
        .when(
            fault.isin(Fault.AFTER_REMAP_APPEND.value, Fault.MID_DATA_WRITE.value),
            with_remap.withField("running", stopped),
        )
        .otherwise(let(with_remap, lambda s: _append_data(shapes, s, action["step"], fault)))
    )


def _append_data(shapes: Shapes, state: Column, step: Column, fault: Column) -> Column:
    """The data shard gains the records beyond its offset frontier that the remap reclocks; its upper
    becomes the remap's."""

    def append(remap: Column) -> Column:
        frontier = intervals.inverted(remap, state["since"], state["data_upper"], shapes.minimum_column())
        read = F.filter(state["records"], lambda r: frontiers.less_equal(shapes.tc, frontier, r["time"]))
        assigned = intervals.reclocked(shapes.tc, remap, state["since"], read)
        rows = F.transform(
            F.filter(assigned, lambda a: a["into"].isNotNull()),
            lambda a: F.struct(step.alias("step"), a["data"].alias("data"), a["into"].alias("time")),
        )
        return F.concat(state["data"], rows)

    return (
        state.withField("data", let(remap_read(state), append))
        .withField("data_upper", state["remap_upper"])
        .withField("running", fault != Fault.AFTER_DATA_APPEND.value)
    )


def checkpoint(shapes: Shapes, state: Column, action: Column) -> Column:
    """Commit the offset resumption frontier upstream and compact the remap one tick before the target, in
    that order or (`compact_first`) the other. A fault names the step after which the process dies, so each
    step happens unless it comes after that one; the commit reads the remap as it is then."""
    fault = F.coalesce(action["fault"], F.lit(""))
    first = F.coalesce(action["compact_first"], F.lit(False))
    compacts = first | (fault != Fault.AFTER_COMMIT.value)
    commits = ~first | (fault != Fault.AFTER_COMPACTION.value)
    target = compaction_target(state["data_upper"], state["remap_upper"]) - 1
    since = F.when(compacts & (target > state["since"]), target).otherwise(state["since"])
    read_since = F.when(first, since).otherwise(state["since"])
    committed = F.when(commits, _resumption(shapes, state, read_since)).otherwise(state["committed"])

    def done(committed: Column, since: Column) -> Column:
        entry = _commit_entry(shapes, state, action["step"], F.lit(False), committed, since)
        return (
            state.withField("since", since)
            .withField("committed", committed)
            .withField("running", fault == "")
            .withField("commits", F.concat(state["commits"], F.array(entry)))
        )

    return F.when(~state["running"], state).otherwise(
        let(since, lambda s: let(committed, lambda c: done(c, s)))
    )


def restart(shapes: Shapes, state: Column, action: Column) -> Column:
    """Drop memory, recompute the frontiers from the shards, commit, resume."""

    def done(committed: Column) -> Column:
        entry = _commit_entry(shapes, state, action["step"], F.lit(True), committed, state["since"])
        return (
            state.withField("committed", committed)
            .withField("running", F.lit(True))
            .withField("commits", F.concat(state["commits"], F.array(entry)))
        )

    return let(_resumption(shapes, state, state["since"]), done)


def _resumption(shapes: Shapes, state: Column, since: Column) -> Column:
    """The offset resumption frontier: the remap, compacted to `since`, inverted at `combine_uppers`."""
    resumption = combine_uppers(state["data_upper"], state["remap_upper"])
    remap = intervals.compacted(state["remap"], since)
    return intervals.inverted(remap, since, resumption, shapes.minimum_column())


def _commit_entry(
    shapes: Shapes, state: Column, step: Column, restart: Column, committed: Column, since_after: Column
) -> Column:
    """What a commit leaves to observe: the frontier committed, the upstream's compaction points, and the
    remap's upper and since before and after (the data shard's rows carry the step that appended them)."""
    return F.struct(
        step.alias("step"),
        restart.alias("restart"),
        committed.alias("committed"),
        state["start"].alias("start"),
        state["remap_upper"].alias("remap_upper"),
        state["since"].alias("since"),
        since_after.alias("since_after"),
    )


def apply(shapes: Shapes, state: Column, action: Column) -> Column:
    """The state after `action`."""
    kind = action["kind"]
    return (
        F.when(kind == IngestionAction.PRODUCE.value, produce(shapes, state, action))
        .when(kind == IngestionAction.UPSTREAM_COMPACT.value, upstream_compact(shapes, state))
        .when(kind == IngestionAction.INGEST.value, ingest(shapes, state, action))
        .when(kind == IngestionAction.CHECKPOINT.value, checkpoint(shapes, state, action))
        .otherwise(restart(shapes, state, action))
    )


def start(shapes: Shapes) -> Column:
    """A fresh upstream and shards, started (and committed at the minimum) like a restart."""
    longs = F.array().cast(T.ArrayType(LONG))
    one = F.array(F.lit(0).cast(LONG)) if shapes.tc.spark_type == LONG else longs
    minimum = shapes.minimum_column()
    return F.struct(
        F.lit(True).alias("running"),
        one.alias("counts"),
        F.array().alias("records"),
        F.array(minimum).alias("committed"),
        one.alias("start"),
        intervals.initial(minimum).alias("remap"),
        F.lit(1).cast(LONG).alias("remap_upper"),
        F.lit(0).cast(LONG).alias("since"),
        F.array().alias("data"),
        F.lit(0).cast(LONG).alias("data_upper"),
        F.array().alias("commits"),
    ).cast(shapes.state)


# --- observations --------------------------------------------------------------------------------------


def observed(shapes: Shapes, state: Column) -> Column:
    """What a history showed, from its final state: per commit what it committed, the data shard's
    `(data, count)` then, the remap's latest source upper, at a restart the upstream's compaction points,
    around a compaction `(t, R(t))` from the new since to the upper; at the end the data shard's updates,
    the remap's bindings and its since."""
    return F.struct(
        F.transform(state["commits"], lambda entry: commit(shapes, state, entry)).alias("commits"),
        state["data"].alias("data"),
        intervals.bindings(remap_read(state)).alias("remap"),
        state["since"].alias("since"),
    )


def commit(shapes: Shapes, final: Column, entry: Column) -> Column:
    """One commit as observed: the frontier committed, the data shard's `(data, count)` (its rows carry the
    step that appended them), the remap as it was then (its `latest`, `R(t)` around a compaction)."""
    remap = intervals.as_of(final["remap"], entry["remap_upper"])
    before = intervals.compacted(remap, entry["since"])
    written = F.filter(final["data"], lambda d: d["step"] < entry["step"])
    names = F.array_distinct(F.transform(written, lambda d: d["data"]))
    count = lambda name: F.size(F.filter(written, lambda d: d["data"] == name))  # noqa: E731
    ids = F.transform(names, lambda name: F.struct(name.alias("data"), count(name).cast(LONG).alias("n")))
    compacts = entry["since_after"] > entry["since"]
    ts = F.when(compacts, F.sequence(entry["since_after"], entry["remap_upper"] - 1)).otherwise(F.array())
    after = intervals.compacted(remap, entry["since_after"])
    around = F.transform(
        ts,
        lambda t: F.struct(
            t.alias("t"),
            intervals.frontier_at(before, t).alias("before"),
            intervals.frontier_at(after, t).alias("after"),
        ),
    )
    return F.struct(
        entry["step"].alias("step"),
        entry["restart"].alias("restart"),
        entry["committed"].alias("committed"),
        ids.alias("ids"),
        intervals.frontier_at(before, entry["remap_upper"] - 1).alias("latest"),
        entry["start"].alias("start"),
        compacts.alias("compacts"),
        around.alias("around"),
    )


# --- the batch -----------------------------------------------------------------------------------------


def observe_resumption(domain: Any, histories: Sequence[HistoryLike]) -> list[dict]:
    """Observations of a batch of ingestion histories, as `frontier_harness.properties.checks.ingestion.resumption.observe` records them.

    One Spark job and one `toArrow()` for the whole batch, whatever its histories' lengths.
    """
    batch = to_frame(action_table(histories))
    table = batch.select("history_id", "end", replayed(domain).alias("observed")).toArrow()
    return decode(time_columns(domain), histories, table)


@per_session
def replayed(domain: Any) -> Column:
    """Each history's observation: its `actions` folded from `start`, built once per session and domain."""
    shapes = Shapes(time_columns(domain), domain.minimum)
    return F.aggregate(
        "actions",
        start(shapes),
        lambda state, action: apply(shapes, state, action),
        lambda state: observed(shapes, state),
    )


def action_table(histories: Sequence[HistoryLike]) -> pa.Table:
    """One row per history: its actions, then the observation's implicit end (a restart and a final
    ingest one tick past the last), and `end`, the final ingest's step."""
    action = pa.struct(
        [
            ("step", pa.int64()),
            ("kind", pa.string()),
            ("partition", pa.int64()),
            ("data", pa.string()),
            ("tick", pa.int64()),
            ("fault", pa.string()),
            ("compact_first", pa.bool_()),
        ]
    )
    ids = pa.int64()
    tables = HistoryTables({"histories": {"history_id": ids, "actions": pa.list_(action), "end": ids}})
    for hid, history in enumerate(histories):
        steps = ingestion_steps(history)
        actions = [_action(step) for step in steps]
        end = len(actions)
        actions.append(_row(end, IngestionAction.RESTART))
        actions.append(_row(end + 1, IngestionAction.INGEST, tick=final_tick(steps)))
        tables.append("histories", history_id=hid, actions=actions, end=end + 1)
    return tables.tables()["histories"]


def _row(step: int, kind: str, **args: Any) -> dict:
    return {"step": step, "kind": kind, **args}


def _action(step: IngestionStep) -> dict:
    allowed = FAULTS.get(step.action, ())
    if step.fault is not None and step.fault not in allowed:
        raise UnknownFault(step.fault, allowed)
    return _row(
        step.step,
        step.action,
        partition=step.partition,
        data=step.data,
        tick=step.tick,
        compact_first=step.compact_first,
        fault=step.fault,
    )


def decode(tc: TimeColumns, histories: Sequence[HistoryLike], table: pa.Table) -> list[dict]:
    """Each history's observation (`frontier_harness.properties.checks.ingestion.resumption`'s keys) from its row."""
    time = _time_decoder(tc)
    observations: list[dict] = [{} for _ in histories]
    cols = columns_of(table)
    for h, end, seen in zip(cols["history_id"], cols["end"], cols["observed"]):
        obs = observations[h]
        for c in seen["commits"]:
            step, committed = c["step"], frozenset(map(time, c["committed"]))
            obs[(step, ResumptionLabel.COMMITTED)] = committed
            obs[(step, ResumptionLabel.DURABLE_IDS)] = frozenset((i["data"], i["n"]) for i in c["ids"])
            obs[(step, ResumptionLabel.REMAP_LATEST)] = frozenset(map(time, c["latest"]))
            if c["restart"]:
                obs[(step, ResumptionLabel.RESUMED)] = committed
                obs[(step, ResumptionLabel.UPSTREAM_START)] = frozenset(enumerate(c["start"]))
            if c["compacts"]:
                for label, field in AROUND.items():
                    obs[(step, label)] = frozenset(
                        (a["t"], frozenset(map(time, a[field]))) for a in c["around"]
                    )
        obs[(end, ResumptionLabel.DATA)] = frozenset((d["data"], d["time"], 1) for d in seen["data"])
        obs[(end, ResumptionLabel.REMAP)] = frozenset(
            (time(b["from_time"]), b["into_time"], b["diff"]) for b in seen["remap"]
        )
        obs[(end, ResumptionLabel.REMAP_SINCE)] = frozenset((seen["since"],))
    return observations


def _time_decoder(tc: TimeColumns):
    """`tc.from_row`, remembering each time it has made (a batch repeats few distinct times)."""
    made: dict = {}

    def time(row: Any) -> Any:
        key = row if not isinstance(row, dict) else tuple(row.values())
        if key not in made:
            made[key] = tc.from_row(row)
        return made[key]

    return time
