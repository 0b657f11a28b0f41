"""The ingestion pipeline with bounded input reliance on Spark: every round of a batch in one job.

The pipeline is the model's (`model.ingestion`): an ingest reads the upstream,
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
- the remap shard as *presence intervals*: each source frontier element `f` is
  in `R(t)` for `start <= t < end` (`end` = `remap.OPEN` while present), so
  minting closes and opens intervals (`remap.retractions`, `remap.insertions`),
  compaction advances their bounds (`remap.advance_into`) and `R(t)` is the
  elements present at `t` (`remap.present`, the rule `remap.frontier_at` reads
  a remap collection with); its bindings are `+1` at `start`, `-1` at `end`;
- the data shard's rows, both uppers, the remap's since, whether it runs;
- what was observed so far (`Observation` rows).

Choice (kept from the round-by-round pipeline, `spark_impl.durable_ingestion`):
the reader keeps no position between ingests; each ingest reads from the data
shard's offset frontier (the remap inverted at the data upper), which equals
the model's position plus its pending records. A restart that needs offsets the
upstream compacted is not raised here: it shows in the observations (`resumed`
against `upstream_start`, which the resumption laws check).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from model.errors import UnknownFault
from model.partitioned_time import PARTITION_MAX  # value types
from spark_impl import frontiers, remap
from spark_impl.arrow import to_frame
from spark_impl.reclock import literal, not_beyond, nullable
from spark_impl.time_columns import TimeColumns, time_columns

INGEST_FAULTS = ("mid_remap_write", "after_remap_append", "mid_data_write", "after_data_append")
CHECKPOINT_FAULTS = ("after_commit", "after_compaction")
FAULTS = {"ingest": INGEST_FAULTS, "checkpoint": CHECKPOINT_FAULTS}
KINDS = ("produce", "upstream_compact", "ingest", "checkpoint", "restart")
LONG = T.LongType()


def combine_uppers(data_upper: Column, remap_upper: Column) -> Column:
    """Rule: the timestamp resumption frontier is the meet of the two Total uppers: the earlier one."""
    return F.least(data_upper, remap_upper)


def compaction_target(data_upper: Column, remap_upper: Column) -> Column:
    """Rule: the remap is compacted up to (one tick before) the timestamp resumption frontier."""
    return combine_uppers(data_upper, remap_upper)


@attrs.frozen
class Shapes:
    """The Spark types of a domain's fold: its state and the observation rows it emits."""

    tc: TimeColumns
    minimum: Any

    @property
    def time(self) -> T.DataType:
        return nullable(self.tc.spark_type)

    @property
    def observation(self) -> T.StructType:
        return _struct(step=LONG, label=T.StringType(), t=LONG, time=self.time, data=T.StringType(), n=LONG)

    @property
    def state(self) -> T.StructType:
        return _struct(
            running=T.BooleanType(),
            counts=T.ArrayType(LONG),
            records=T.ArrayType(_struct(step=LONG, data=T.StringType(), time=self.time)),
            committed=T.ArrayType(self.time),
            start=T.ArrayType(LONG),
            remap=T.ArrayType(_struct(from_time=self.time, start=LONG, end=LONG)),
            remap_upper=LONG,
            since=LONG,
            data=T.ArrayType(_struct(data=T.StringType(), time=LONG)),
            data_upper=LONG,
            observed=T.ArrayType(self.observation),
        )

    def minimum_column(self) -> Column:
        return literal(self.tc.to_row(self.minimum), self.tc.spark_type).cast(self.time)


def _struct(**fields: T.DataType) -> T.StructType:
    return T.StructType([T.StructField(name, kind, True) for name, kind in fields.items()])


def _let(value: Column, body: Callable[[Column], Column]) -> Column:
    """`body(value)` with `value` evaluated once (a one-element `transform` binds it to a name)."""
    return F.get(F.transform(F.array(value), body), 0)


# --- the upstream ------------------------------------------------------------------------------------


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
    record = F.struct(
        action["step"].alias("step"), action["data"].alias("data"), time.cast(shapes.time).alias("time")
    )
    grown = F.transform(counts, lambda c, i: F.when(i == p, c + 1).otherwise(c))
    return (
        state.withField(
            "counts", F.when(known, grown).otherwise(F.concat(counts, F.array(F.lit(1).cast(LONG))))
        )
        .withField(
            "start",
            F.when(known, state["start"]).otherwise(F.concat(state["start"], F.array(F.lit(0).cast(LONG)))),
        )
        .withField("records", F.concat(state["records"], F.array(record)))
    )


def upstream_compact(shapes: Shapes, state: Column) -> Column:
    """The upstream deletes, per partition, the records not beyond its committed offset frontier."""
    committed = state["committed"]

    def kept(first: Column, p: Column) -> Column:
        count = F.get(state["counts"], p)
        return F.greatest(first, F.least(needed_offset(shapes.tc, committed, p.cast(LONG)), count))

    return state.withField("start", F.transform(state["start"], kept))


# --- the remap as presence intervals -----------------------------------------------------------------


def frontier_at(intervals: Column, t: Column) -> Column:
    """`R(t)`: the source frontier elements present at IntoTime `t`."""
    present = F.filter(intervals, lambda i: remap.present(i["start"], i["end"], t))
    return F.transform(present, lambda i: i["from_time"])


def minted(intervals: Column, upper: Column, tick: Column) -> Column:
    """The remap after recording source `upper` at `tick`: retracted elements' intervals end at `tick`,
    inserted ones start there."""
    latest = frontier_at(intervals, F.lit(remap.OPEN - 1))
    return _let(
        F.struct(
            remap.retractions(latest, upper).alias("gone"), remap.insertions(latest, upper).alias("new")
        ),
        lambda change: F.concat(
            F.transform(
                intervals,
                lambda i: F.when(
                    (i["end"] == remap.OPEN) & F.array_contains(change["gone"], i["from_time"]),
                    i.withField("end", tick),
                ).otherwise(i),
            ),
            F.transform(
                change["new"],
                lambda f: F.struct(
                    f.alias("from_time"), tick.alias("start"), F.lit(remap.OPEN).cast(LONG).alias("end")
                ),
            ),
        ),
    )


def compacted(intervals: Column, since: Column) -> Column:
    """The remap compacted to `since`: bounds advanced (`remap.advance_into`), intervals left empty dropped
    (their bindings consolidated away)."""
    advanced = F.transform(
        intervals,
        lambda i: i.withField("start", remap.advance_into(i["start"], since)).withField(
            "end", remap.advance_into(i["end"], since)
        ),
    )
    return F.filter(advanced, lambda i: i["start"] < i["end"])


def inverted(shapes: Shapes, intervals: Column, since: Column, t: Column) -> Column:
    """The remap inverted at Total frontier `{t}` (`remap.inversion_time`): `R(t - 1)`, `{minimum}` at or
    below `since`."""
    at = remap.inversion_time(t, F.lit(False), since)
    return F.when(at.isNull(), F.array(shapes.minimum_column())).otherwise(frontier_at(intervals, at))


def reclocked(tc: TimeColumns, intervals: Column, since: Column, records: Column) -> Column:
    """Each record `(data, time)` with the first IntoTime step whose `R` it is not beyond (null: pending)."""
    bounds = F.concat(
        F.array(since),
        F.transform(intervals, lambda i: i["start"]),
        F.transform(intervals, lambda i: i["end"]),
    )
    steps = F.array_sort(F.array_distinct(F.filter(bounds, lambda b: (b >= since) & (b < remap.OPEN))))
    return _let(
        F.transform(steps, lambda t: F.struct(t.alias("t"), frontier_at(intervals, t).alias("frontier"))),
        lambda at_steps: F.transform(
            records,
            lambda r: F.struct(
                r["data"].alias("data"),
                F.get(F.filter(at_steps, lambda s: not_beyond(tc, s["frontier"], r["time"])), 0)["t"].alias(
                    "time"
                ),
            ),
        ),
    )


# --- observations -------------------------------------------------------------------------------------


def observation(shapes: Shapes, step: Column, label: str, **values: Column) -> Column:
    """One observation row: `(step, label)` and what was seen (`t`, `time`, `data`, `n`; absent: null).

    A row with nothing but its key makes the observation present even when the set is empty."""
    fields = {"t": LONG, "time": shapes.time, "data": T.StringType(), "n": LONG}
    return F.struct(
        step.cast(LONG).alias("step"),
        F.lit(label).alias("label"),
        *[values.get(name, F.lit(None)).cast(kind).alias(name) for name, kind in fields.items()],
    )


def frontier_rows(shapes: Shapes, step: Column, label: str, frontier: Column) -> Column:
    return F.concat(
        F.array(observation(shapes, step, label)),
        F.transform(frontier, lambda f: observation(shapes, step, label, time=f)),
    )


def commit_rows(shapes: Shapes, state: Column, step: Column, labels: tuple, committed: Column) -> Column:
    """What a commit shows: the committed frontier, the data shard's `(data, count)`, the remap's latest."""
    names = F.array_distinct(F.transform(state["data"], lambda d: d["data"]))
    count = lambda name: F.size(F.filter(state["data"], lambda d: d["data"] == name))  # noqa: E731
    ids = F.transform(names, lambda name: observation(shapes, step, "durable_ids", data=name, n=count(name)))
    latest = frontier_at(state["remap"], state["remap_upper"] - 1)
    return F.concat(
        *[frontier_rows(shapes, step, label, committed) for label in labels],
        F.array(observation(shapes, step, "durable_ids")),
        ids,
        frontier_rows(shapes, step, "remap_latest", latest),
    )


def remap_rows(shapes: Shapes, step: Column, label: str, intervals: Column, ts: Column) -> Column:
    """`(t, R(t))` for each `t` of `ts`."""
    return F.flatten(
        F.transform(
            ts,
            lambda t: F.concat(
                F.array(observation(shapes, step, label, t=t)),
                F.transform(
                    frontier_at(intervals, t), lambda f: observation(shapes, step, label, t=t, time=f)
                ),
            ),
        )
    )


def observe(state: Column, rows: Column) -> Column:
    return state.withField("observed", F.concat(state["observed"], rows))


# --- the pipeline's actions ---------------------------------------------------------------------------


def ingest(shapes: Shapes, state: Column, action: Column) -> Column:
    """Mint at the tick (if beyond the remap's upper), append the remap shard, read from the data shard's
    offset frontier, reclock, append the data shard; a fault stops the process at its point."""
    fault, tick = F.coalesce(action["fault"], F.lit("")), action["tick"]
    mints = tick >= state["remap_upper"]
    upper = upstream_upper(shapes.tc, state["counts"]).cast(T.ArrayType(shapes.time))
    new_remap = F.when(mints, minted(state["remap"], upper, tick)).otherwise(state["remap"])
    with_remap = state.withField("remap", new_remap).withField(
        "remap_upper", F.when(mints, tick + 1).otherwise(state["remap_upper"])
    )
    stopped = state.withField("running", F.lit(False))
    return (
        F.when(~state["running"], state)
        .when(fault == "mid_remap_write", stopped)
        .when(
            fault.isin("after_remap_append", "mid_data_write"), with_remap.withField("running", F.lit(False))
        )
        .otherwise(_let(with_remap, lambda s: _append_data(shapes, s, fault)))
    )


def _append_data(shapes: Shapes, state: Column, fault: Column) -> Column:
    """The data shard gains the records beyond its offset frontier that the remap reclocks; its upper
    becomes the remap's."""
    frontier = inverted(shapes, state["remap"], state["since"], state["data_upper"])
    read = F.filter(state["records"], lambda r: frontiers.less_equal(shapes.tc, frontier, r["time"]))
    assigned = reclocked(shapes.tc, state["remap"], state["since"], read)
    appended = F.filter(assigned, lambda a: a["time"].isNotNull())
    return (
        state.withField("data", F.concat(state["data"], appended))
        .withField("data_upper", state["remap_upper"])
        .withField("running", fault != "after_data_append")
    )


def checkpoint(shapes: Shapes, state: Column, action: Column) -> Column:
    """Commit the offset resumption frontier upstream and compact the remap one tick before the target, in
    that order or (`compact_first`) the other. A fault names the step after which the process dies, so each
    step happens unless it comes after that one; the commit reads the remap as it is then. Observed from the
    state before and after: what was committed, the data shard, `R(t)` around a compaction."""
    fault, step = F.coalesce(action["fault"], F.lit("")), action["step"]
    first = F.coalesce(action["compact_first"], F.lit(False))
    compacts = first | (fault != "after_commit")
    commits = ~first | (fault != "after_compaction")
    resumption = combine_uppers(state["data_upper"], state["remap_upper"])

    def done(compacted: Column) -> Column:
        read = F.when(first, compacted).otherwise(state)
        committed = inverted(shapes, read["remap"], read["since"], resumption)
        return (
            state.withField("remap", F.when(compacts, compacted["remap"]).otherwise(state["remap"]))
            .withField("since", F.when(compacts, compacted["since"]).otherwise(state["since"]))
            .withField("committed", F.when(commits, committed).otherwise(state["committed"]))
            .withField("running", fault == "")
        )

    after = _let(_compact_remap(state), done)
    return F.when(~state["running"], state).otherwise(
        _let(after, lambda a: observe(a, _checkpoint_rows(shapes, state, a, step)))
    )


def _compact_remap(state: Column) -> Column:
    """The remap compacted one tick before the compaction target, when that advances its since."""
    target = compaction_target(state["data_upper"], state["remap_upper"]) - 1
    advanced = state.withField("remap", compacted(state["remap"], target)).withField("since", target)
    return F.when(target > state["since"], advanced).otherwise(state)


def _checkpoint_rows(shapes: Shapes, before: Column, after: Column, step: Column) -> Column:
    """The commit's rows, and `(t, R(t))` before and after a compaction from the new since to the upper."""
    ts = F.sequence(after["since"], before["remap_upper"] - 1)
    around = F.concat(
        remap_rows(shapes, step, "remap_before", before["remap"], ts),
        remap_rows(shapes, step, "remap_after", after["remap"], ts),
    )
    compacted_rows = F.when(after["since"] > before["since"], around).otherwise(F.array())
    return F.concat(commit_rows(shapes, before, step, ("committed",), after["committed"]), compacted_rows)


def restart(shapes: Shapes, state: Column, action: Column) -> Column:
    """Drop memory, recompute the frontiers from the shards, commit, resume."""
    step = action["step"]
    resumption = combine_uppers(state["data_upper"], state["remap_upper"])
    starts = F.concat(
        F.array(observation(shapes, step, "upstream_start")),
        F.transform(state["start"], lambda s, p: observation(shapes, step, "upstream_start", t=p, n=s)),
    )
    return _let(
        inverted(shapes, state["remap"], state["since"], resumption),
        lambda c: (
            observe(state, F.concat(starts, commit_rows(shapes, state, step, ("committed", "resumed"), c)))
            .withField("committed", c)
            .withField("running", F.lit(True))
        ),
    )


def apply(shapes: Shapes, state: Column, action: Column) -> Column:
    """The state after `action`."""
    kind = action["kind"]
    return (
        F.when(kind == "produce", produce(shapes, state, action))
        .when(kind == "upstream_compact", upstream_compact(shapes, state))
        .when(kind == "ingest", ingest(shapes, state, action))
        .when(kind == "checkpoint", checkpoint(shapes, state, action))
        .otherwise(restart(shapes, state, action))
    )


def start(shapes: Shapes) -> Column:
    """A fresh upstream and shards, started (and committed at the minimum) like a restart."""
    empty = F.array().cast(T.ArrayType(LONG))
    one = F.array(F.lit(0).cast(LONG)) if shapes.tc.spark_type == LONG else empty
    minimum = shapes.minimum_column()
    return F.struct(
        F.lit(True).alias("running"),
        one.alias("counts"),
        F.array().alias("records"),
        F.array(minimum).alias("committed"),
        one.alias("start"),
        F.array(
            F.struct(
                minimum.alias("from_time"),
                F.lit(0).cast(LONG).alias("start"),
                F.lit(remap.OPEN).cast(LONG).alias("end"),
            )
        ).alias("remap"),
        F.lit(1).cast(LONG).alias("remap_upper"),
        F.lit(0).cast(LONG).alias("since"),
        F.array().alias("data"),
        F.lit(0).cast(LONG).alias("data_upper"),
        F.array().alias("observed"),
    ).cast(shapes.state)


def final_rows(shapes: Shapes, state: Column, step: Column) -> Column:
    """After the final ingest: the data shard's updates, the remap's bindings and its since."""
    data = F.transform(
        state["data"], lambda d: observation(shapes, step, "data", data=d["data"], t=d["time"], n=F.lit(1))
    )
    inserted = F.transform(
        state["remap"],
        lambda i: observation(shapes, step, "remap", time=i["from_time"], t=i["start"], n=F.lit(1)),
    )
    retracted = F.transform(
        F.filter(state["remap"], lambda i: i["end"] < remap.OPEN),
        lambda i: observation(shapes, step, "remap", time=i["from_time"], t=i["end"], n=F.lit(-1)),
    )
    return F.concat(
        F.array(
            observation(shapes, step, "data"), observation(shapes, step, "remap_since", n=state["since"])
        ),
        data,
        inserted,
        retracted,
    )


# --- the batch ----------------------------------------------------------------------------------------


def observe_resumption(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Observations of a batch of ingestion histories, as `properties.suites.resumption.observe` records them.

    One Spark job and one `toArrow()` for the whole batch, whatever its histories' lengths.
    """
    shapes = Shapes(time_columns(domain), domain.minimum)
    batch = to_frame(action_table(shapes, histories))
    end = F.col("end")
    final = F.aggregate(
        "actions",
        start(shapes),
        lambda state, action: apply(shapes, state, action),
        lambda state: F.concat(state["observed"], final_rows(shapes, state, end)),
    )
    rows = batch.select("history_id", F.inline(final)).toArrow()
    return decode(shapes.tc, len(histories), rows)


def action_table(shapes: Shapes, histories: Sequence[Any]) -> pa.Table:
    """One row per history: its actions, then the observation's implicit end (a restart and a final
    ingest one tick past the last), and `end`, the final ingest's step."""
    rows = []
    for hid, history in enumerate(histories):
        actions = [_action(step, a) for step, a in enumerate(history.actions)]
        end = len(actions)
        ticks = [a["tick"] for a in actions if a["kind"] == "ingest"]
        actions.append(_row(end, "restart"))
        actions.append(_row(end + 1, "ingest", tick=1 + max(ticks, default=0)))
        rows.append({"history_id": hid, "actions": actions, "end": end + 1})
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
    schema = pa.schema([("history_id", pa.int64()), ("actions", pa.list_(action)), ("end", pa.int64())])
    return pa.Table.from_pylist(rows, schema=schema)


def _row(step: int, kind: str, **args: Any) -> dict:
    return {"step": step, "kind": kind, **args}


def _action(step: int, action: Any) -> dict:
    args = action.args
    if action.name not in KINDS:
        raise ValueError(f"ingestion history: unknown action {action.name!r} at step {step}")
    fault = args.get("fault")
    if fault is not None and fault not in FAULTS.get(action.name, ()):
        raise UnknownFault(fault, FAULTS.get(action.name, ()))
    return _row(
        step,
        action.name,
        partition=args.get("partition"),
        data=args.get("data"),
        tick=args.get("tick"),
        compact_first=bool(args.get("compact_first", False)),
        fault=fault,
    )


def decode(tc: TimeColumns, n: int, rows: pa.Table) -> list[dict]:
    """Each history's observation from the job's rows (a row with a null payload makes its key present)."""
    observed: list[dict] = [{} for _ in range(n)]
    cols = [rows.column(c).to_pylist() for c in ("history_id", "step", "label", "t", "time", "data", "n")]
    for h, step, label, t, time, data, count in zip(*cols):
        seen = observed[h].setdefault(
            (step, label), {} if label in ("remap_before", "remap_after") else set()
        )
        if label in ("committed", "resumed", "remap_latest"):
            if time is not None:
                seen.add(tc.from_row(time))
        elif label in ("remap_before", "remap_after"):
            elements = seen.setdefault(t, set())
            if time is not None:
                elements.add(tc.from_row(time))
        elif label == "durable_ids":
            if data is not None:
                seen.add((data, count))
        elif label == "upstream_start":
            if t is not None:
                seen.add((t, count))
        elif label == "data":
            if data is not None:
                seen.add((data, t, count))
        elif label == "remap":
            seen.add((tc.from_row(time), t, count))
        else:
            seen.add(count)
    return [
        {
            key: frozenset((t, frozenset(f)) for t, f in value.items())
            if isinstance(value, dict)
            else frozenset(value)
            for key, value in obs.items()
        }
        for obs in observed
    ]
