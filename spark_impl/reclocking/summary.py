"""Practical reclocking summaries on Spark: at every IntoTime of the remap, each summarizer's output and temp.

Batched by `history_id` (restart histories, `frontier_harness.properties.checks.reclocking.strategies.reclocking`).
The remap is minted and accumulated per step with `frontier_harness.spark_impl.reclocking.remap`; `R(t)` at
each step `t` and `R(it)` at the crash tick come from `frontier_at`.

A *run* is one row keyed by `RUN`: a history, `run` (`run`, or `restarted` from
the crash) and a summarizer `variant`: `independent` reads source updates;
`ordered` and `unordered` read data and transaction metadata records over a
`product(data, metadata)` FromTime. It holds its `steps` (IntoTimes), its `pool`
of records, each with its `arrival`, and its `initial` output (published before
its first step). The model folds step by step; here each run is in closed form
with higher-order functions, which holds because coverage is monotone in `t`:

- a record *arrives* at the first step whose `R(t)` covers it (`covered`);
- it is *released* (leaves temp) at its arrival if it is an update, otherwise when
  its transaction is first emittable (`emission`);
- the summary at step `t` (`summaries`): the initial output plus every payload
  released by `t`, published at its release step, consolidated; and in temp every
  record arrived by `t` and not released by `t`.

The restarted run (`restarted`) starts from the run's summary at the crash tick
`it` and reads only the records `R(it)` does not cover (the seek), over the steps
after `it`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.reclocking import (
    Crash,
    Mint,
    RestartAction,
    SourceRecord,
    SourceUpdate,
    Summarizer,
    SummaryLabel,
    SummaryPart,
    SummaryRun,
    TxnData,
    TxnMetadata,
    restart_steps,
    summary_label,
)
from frontier_harness.spark_impl.arrow import HistoryTables, arrow_type, columns_of
from frontier_harness.spark_impl.column_cache import per_session
from frontier_harness.spark_impl.reclocking import remap
from frontier_harness.spark_impl.reclocking.reclock import POINT, literal, not_beyond, nullable, steps
from frontier_harness.spark_impl.reclocking.remap import frontier_at
from frontier_harness.spark_impl.time.collection import consolidate
from frontier_harness.spark_impl.time.time_columns import TimeColumns, time_columns

RUN = ["history_id", "run", "variant"]
RECORD = ("kind", "txn", "data", "size", "time", "diff")
VARIANTS = tuple(s.value for s in Summarizer)  # independent, ordered, unordered
STEPS = SummaryLabel.STEPS.value  # the `part` of a row holding one of the remap's steps


def is_transactional(domain: Any) -> bool:
    """Whether `domain` may carry data and metadata records: a `product(data, metadata)` FromTime."""
    return domain.name.startswith("product(")


def covered(domain: Any, tc: TimeColumns, frontier: Column, record: Column) -> Column:
    """Whether `record` is up through `frontier`: an update when its time is not beyond it; a data
    (metadata) record when its own coordinate is not beyond `frontier`'s projection on that coordinate."""
    whole = not_beyond(tc, frontier, record["time"])
    if not is_transactional(domain):
        return whole

    def own(side: str, part: Any) -> Column:
        return not_beyond(time_columns(part), F.transform(frontier, lambda f: f[side]), record["time"][side])

    kind = record["kind"]
    data, txn = RestartAction.DATA.value, RestartAction.TXN.value
    return F.when(kind == data, own("a", domain.a)).when(kind == txn, own("b", domain.b)).otherwise(whole)


def arrived(domain: Any, tc: TimeColumns, steps_: Column, records: Column) -> Column:
    """`records` with `arrival`, the first step of `steps_` (`array<struct<t, frontier>>`) whose `R(t)`
    covers the record; the records no step covers are in no summary and left out."""

    def first(record: Column) -> Column:
        return F.array_min(
            F.transform(
                F.filter(steps_, lambda s: covered(domain, tc, s["frontier"], record)), lambda s: s["t"]
            )
        )

    with_arrival = F.transform(records, lambda r: r.withField("arrival", first(r)))
    return F.filter(with_arrival, lambda r: r["arrival"].isNotNull())


def read_by(variant: Column, records: Column) -> Column:
    """The records `variant` reads: source updates for `independent`, the data and metadata records otherwise."""
    update, independent = RestartAction.UPDATE.value, Summarizer.INDEPENDENT.value
    return F.filter(records, lambda r: (r["kind"] == update) == (variant == independent))


def complete_at(pool: Column, head: Column) -> Column:
    """The step at which the transaction of metadata record `head` is complete: when `head` and its
    `size`-th data record of `pool` have arrived (null: never). Arrivals only add, so it stays complete."""
    mine = F.filter(pool, lambda d: (d["kind"] == RestartAction.DATA.value) & (d["txn"] == head["txn"]))
    arrivals = F.array_sort(F.transform(mine, lambda d: d["arrival"]))
    last = F.when(head["size"] == 0, head["arrival"]).otherwise(F.get(arrivals, head["size"] - 1))
    return F.when(last.isNotNull(), F.greatest(head["arrival"], last))


def emission(meta: TimeColumns, steps_: Column, heads: Column, head: Column, variant: Column) -> Column:
    """The first step at which `head`'s transaction is emittable: complete, and in the `ordered` variant
    so is every arrived transaction (of `heads`) whose metadata time is `<=` its own."""

    def earlier_complete(t: Column) -> Column:
        return F.forall(
            heads,
            lambda e: (
                ~((e["arrival"] <= t) & meta.le(e["meta"], head["meta"]))
                | F.coalesce(e["complete"] <= t, F.lit(False))
            ),
        )

    ordered = F.array_min(F.filter(steps_, lambda t: (head["complete"] <= t) & earlier_complete(t)))
    return F.when(variant == Summarizer.ORDERED.value, ordered).otherwise(head["complete"])


def released(domain: Any, runs: DataFrame) -> DataFrame:
    """`runs` with each pool record's `released`, the step it leaves temp (null: never): an update at its
    arrival, a data or metadata record when its transaction is emitted."""
    if not is_transactional(domain):
        return runs.withColumn("pool", _released_at_arrival())
    heads, emitted, pool = _release_columns(domain)
    return runs.withColumn("heads", heads).withColumn("heads", emitted).withColumn("pool", pool).drop("heads")


@per_session
def _released_at_arrival() -> Column:
    """The `pool` of a run that reads only updates: each record released at its arrival."""
    return F.transform("pool", lambda r: r.withField("released", r["arrival"]))


@per_session
def _release_columns(domain: Any) -> tuple[Column, Column, Column]:
    """A transactional run's `heads` (its metadata records, each with `complete`), the heads with `emitted`,
    and the `pool` with `released`: the three columns `released` adds in turn."""
    pool, variant = F.col("pool"), F.col("variant")
    heads = F.transform(
        F.filter(pool, lambda r: r["kind"] == RestartAction.TXN.value),
        lambda m: F.struct(
            m["txn"].alias("txn"),
            m["time"]["b"].alias("meta"),
            m["arrival"].alias("arrival"),
            complete_at(pool, m).alias("complete"),
        ),
    )
    emitted = F.transform(
        "heads",
        lambda h: h.withField(
            "emitted", emission(time_columns(domain.b), F.col("steps"), F.col("heads"), h, variant)
        ),
    )

    def release(r: Column) -> Column:
        txn = F.get(F.filter("heads", lambda h: h["txn"] == r["txn"]), 0)["emitted"]
        update = r["kind"] == RestartAction.UPDATE.value
        return r.withField("released", F.when(update, r["arrival"]).otherwise(txn))

    return heads, emitted, F.transform("pool", release)


def restarted(domain: Any, runs: DataFrame) -> DataFrame:
    """The restart of each run with a crash tick `it`: the steps after `it`; the run's output at `it` as its
    initial output, its temp at `it`, and the records `R(it)` (`seek`) does not cover, arriving anew."""
    return runs.where(F.col("it").isNotNull()).select(*_restart_columns(domain))


@per_session
def _restart_columns(domain: Any) -> tuple[Column | str, ...]:
    """What `restarted` selects of a run: its key and inputs, and its restart's `steps`, `initial` and `pool`."""
    tc = time_columns(domain)
    it, pool = F.col("it"), F.col("pool")
    later = F.filter("frontiers", lambda s: s["t"] > it)
    unread = F.filter(
        read_by(F.col("variant"), F.col("records")), lambda r: ~covered(domain, tc, F.col("seek"), r)
    )
    kept = F.filter(pool, lambda r: (r["arrival"] <= it) & ~F.coalesce(r["released"] <= it, F.lit(False)))
    fresh = arrived(domain, tc, later, unread)
    return (
        *RUN[:1],
        F.lit(SummaryRun.RESTARTED.value).alias("run"),
        *RUN[2:],
        "records",
        "frontiers",
        "seek",
        "it",
        F.transform(later, lambda s: s["t"]).alias("steps"),
        F.concat("initial", published(F.filter(pool, lambda r: r["released"] <= it))).alias("initial"),
        F.concat(F.transform(kept, lambda r: r.dropFields("released")), fresh).alias("pool"),
    )


def published(pool: Column) -> Column:
    """The output updates of `pool`'s released payloads (updates and data records): `(data, time, diff)`, at their release step."""
    payloads = F.filter(pool, lambda r: r["kind"] != RestartAction.TXN.value)
    return F.transform(
        payloads,
        lambda r: F.struct(r["data"].alias("data"), r["released"].alias("time"), r["diff"].alias("diff")),
    )


def summaries(runs: DataFrame) -> DataFrame:
    """Per run and step `t`: `output` rows `(data, into_time, diff)`, the initial output and the payloads
    released by `t`, consolidated; and `temp` rows, each record arrived and not released by `t`, with its `count`."""
    at = runs.select(*RUN, F.explode("steps").alias("t"), "pool", "initial")
    out, held = _step_contents()
    output = consolidate(at.select(*RUN, "t", F.inline(out)), [*RUN, "t"]).withColumnRenamed(
        "time", "into_time"
    )
    temp = (
        at.select(*RUN, "t", F.inline(held)).groupBy(*RUN, "t", *RECORD[:-1]).agg(F.count("*").alias("count"))
    )
    return output.withColumn("part", F.lit(SummaryPart.OUTPUT.value)).unionByName(
        temp.withColumn("part", F.lit(SummaryPart.TEMP.value)), allowMissingColumns=True
    )


@per_session
def _step_contents() -> tuple[Column, Column]:
    """At step `t`: the output (the initial output and the payloads released by `t`) and temp (the
    records arrived and not released by `t`)."""
    t = F.col("t")
    out = F.concat("initial", published(F.filter("pool", lambda r: r["released"] <= t)))
    held = F.filter("pool", lambda r: (r["arrival"] <= t) & ~F.coalesce(r["released"] <= t, F.lit(False)))
    return out, held


def observe_summary(domain: Any, histories: Sequence[HistoryLike]) -> list[dict]:
    """Observations of a batch of restart histories (`frontier_harness.properties.checks.reclocking.summary`) in one Spark job."""
    tc = time_columns(domain)
    frames = _history_tables(tc, histories).frames()
    rows = _observations(domain, tc, frames).toArrow()
    return _decode(tc, histories, rows)


def _observations(domain: Any, tc: TimeColumns, frames: dict[str, DataFrame]) -> DataFrame:
    histories = frames["histories"]
    points = histories.select(*POINT)
    bindings = remap.mint(
        points.select("history_id"), frames["mints"], literal(tc.to_row(domain.minimum), tc.spark_type)
    )
    sinces = points.withColumn("since", F.lit(0).cast("long"))  # restart histories never compact
    at_points = remap.remap_at_points(bindings, sinces)
    at_steps = frontier_at(at_points, steps(at_points, sinces))
    by_history = at_steps.groupBy("history_id").agg(
        F.array_sort(F.collect_list(F.struct("t", "frontier"))).alias("frontiers")
    )
    seeks = frontier_at(
        at_points, histories.where(F.col("it").isNotNull()).select(*POINT, F.col("it").alias("t"))
    )
    inputs = histories.join(by_history, on="history_id").join(
        seeks.select("history_id", F.col("frontier").alias("seek")), on="history_id", how="left"
    )
    variant = F.explode(F.array(*map(F.lit, VARIANTS))).alias("variant")
    runs = inputs.select(
        "history_id", F.lit(SummaryRun.RUN.value).alias("run"), variant, "records", "frontiers", "seek", "it"
    )
    run = released(domain, runs.select("*", *_run_columns(domain)))
    again = released(domain, restarted(domain, run))
    stepped = by_history.select(
        "history_id", F.inline(F.transform("frontiers", lambda s: F.struct(s["t"].alias("t"))))
    )
    rows = stepped.withColumn("part", F.lit(STEPS)).unionByName(
        summaries(run.unionByName(again)), allowMissingColumns=True
    )
    return rows.withColumn("time", F.col("time").cast(nullable(tc.spark_type)))


@per_session
def _run_columns(domain: Any) -> tuple[Column, Column, Column]:
    """A run's `steps`, its `pool` (the records it reads, each with its `arrival`) and its empty `initial` output."""
    return (
        F.transform("frontiers", lambda s: s["t"]).alias("steps"),
        arrived(
            domain, time_columns(domain), F.col("frontiers"), read_by(F.col("variant"), F.col("records"))
        ).alias("pool"),
        F.array().cast("array<struct<data: string, time: bigint, diff: bigint>>").alias("initial"),
    )


def _history_tables(tc: TimeColumns, histories: Sequence[HistoryLike]) -> HistoryTables:
    """`histories` (`history_id, point, it`: the last crash tick, `records`: every source record) and `mints`."""
    ids, time = pa.int64(), arrow_type(tc.spark_type)
    record = pa.struct(
        [
            ("kind", pa.string()),
            ("txn", pa.string()),
            ("data", pa.string()),
            ("size", pa.int64()),
            ("time", time),
            ("diff", pa.int64()),
        ]
    )
    tables = HistoryTables(
        {
            "histories": {"history_id": ids, "point": ids, "it": ids, "records": pa.list_(record)},
            "mints": {"history_id": ids, "step": ids, "tick": ids, "upper": pa.list_(time)},
        }
    )
    for hid, history in enumerate(histories):
        records, crash = [], None
        for step in restart_steps(history):
            match step:
                case Mint(step=at, upper=upper, tick=tick):
                    rows = [tc.to_row(t) for t in upper]
                    tables.append("mints", history_id=hid, step=at, tick=tick, upper=rows)
                case Crash(tick=tick):
                    crash = tick
                case _:
                    records.append(_record(tc, step))
        tables.append("histories", history_id=hid, point=len(history.actions), it=crash, records=records)
    return tables


def _record(tc: TimeColumns, record: SourceRecord) -> dict:
    """A source record's row: an update `(data, diff)`, a data record `(txn, data: payload)`, a metadata record `(txn, size)`."""
    row = {"txn": None, "data": None, "size": None, "time": tc.to_row(record.time), "diff": None}
    match record:
        case SourceUpdate(data=data, diff=diff):
            return {**row, "kind": str(RestartAction.UPDATE), "data": data, "diff": diff}
        case TxnData(txn=txn, payload=payload):
            return {**row, "kind": str(RestartAction.DATA), "txn": txn, "data": payload, "diff": 1}
        case TxnMetadata(txn=txn, size=size):
            return {**row, "kind": str(RestartAction.TXN), "txn": txn, "size": size}


def _decode(tc: TimeColumns, histories: Sequence[HistoryLike], rows: pa.Table) -> list[dict]:
    observed = [_empty_observation(h) for h in histories]
    cols = columns_of(rows)
    names = (
        "history_id",
        "run",
        "variant",
        "part",
        "t",
        "kind",
        "txn",
        "data",
        "size",
        "time",
        "into_time",
        "diff",
        "count",
    )
    for hid, run, variant, part, t, kind, txn, data, size, time, into, diff, count in zip(
        *(cols[c] for c in names)
    ):
        end = len(histories[hid].actions)
        if part == STEPS:
            observed[hid][(end, SummaryLabel.STEPS)].add((t,))
            continue
        label = summary_label(run, variant, part)
        if part == SummaryPart.OUTPUT:
            observed[hid][(end, label)].add((t, data, into, diff))
        else:
            own = tc.from_row(time)[0 if kind == RestartAction.DATA else 1]
            observed[hid][(end, label)].add((t, kind, txn, data, size, own, count))
    return [{key: frozenset(value) for key, value in obs.items()} for obs in observed]


def _empty_observation(history: HistoryLike) -> dict:
    """The labels the model shows for this history: its summarizers' output and temp, restarted ones after a crash."""
    names = {a.name for a in history.actions}
    transactional = {RestartAction.DATA, RestartAction.TXN} & names
    variants = VARIANTS[1:] if transactional else VARIANTS[:1]
    runs = tuple(SummaryRun) if RestartAction.CRASH in names else (SummaryRun.RUN,)
    end = len(history.actions)
    labels = [SummaryLabel.STEPS] + [
        summary_label(run, variant, part) for run in runs for variant in variants for part in SummaryPart
    ]
    return {(end, label): set() for label in labels}
