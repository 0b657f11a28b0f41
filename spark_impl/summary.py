"""Practical reclocking summaries on Spark: at every IntoTime of the remap, each summarizer's output and temp.

Batched by `history_id` (restart histories, `frontier_harness.properties.checks.reclocking.strategies.reclocking`).
The remap is minted and accumulated per step with `frontier_harness.spark_impl.remap`; `R(t)` at
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

from frontier_harness.spark_impl import remap
from frontier_harness.spark_impl.arrow import append_row, arrow_type, to_frame
from frontier_harness.spark_impl.collection import consolidate
from frontier_harness.spark_impl.reclock import POINT, literal, not_beyond, nullable, steps
from frontier_harness.spark_impl.remap import frontier_at
from frontier_harness.spark_impl.time_columns import TimeColumns, time_columns

RUN = ["history_id", "run", "variant"]
RECORD = ("kind", "txn", "data", "size", "time", "diff")
VARIANTS = ("independent", "ordered", "unordered")


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
    return F.when(kind == "data", own("a", domain.a)).when(kind == "txn", own("b", domain.b)).otherwise(whole)


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
    return F.filter(records, lambda r: (r["kind"] == "update") == (variant == VARIANTS[0]))


def complete_at(pool: Column, head: Column) -> Column:
    """The step at which the transaction of metadata record `head` is complete: when `head` and its
    `size`-th data record of `pool` have arrived (null: never). Arrivals only add, so it stays complete."""
    mine = F.filter(pool, lambda d: (d["kind"] == "data") & (d["txn"] == head["txn"]))
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
    return F.when(variant == "ordered", ordered).otherwise(head["complete"])


def released(domain: Any, runs: DataFrame) -> DataFrame:
    """`runs` with each pool record's `released`, the step it leaves temp (null: never): an update at its
    arrival, a data or metadata record when its transaction is emitted."""
    if not is_transactional(domain):
        return runs.withColumn("pool", F.transform("pool", lambda r: r.withField("released", r["arrival"])))
    pool, variant = F.col("pool"), F.col("variant")
    heads = F.transform(
        F.filter(pool, lambda r: r["kind"] == "txn"),
        lambda m: F.struct(
            m["txn"].alias("txn"),
            m["time"]["b"].alias("meta"),
            m["arrival"].alias("arrival"),
            complete_at(pool, m).alias("complete"),
        ),
    )
    with_heads = runs.withColumn("heads", heads)
    emitted = F.transform(
        "heads",
        lambda h: h.withField(
            "emitted", emission(time_columns(domain.b), F.col("steps"), F.col("heads"), h, variant)
        ),
    )
    with_emitted = with_heads.withColumn("heads", emitted)

    def release(r: Column) -> Column:
        txn = F.get(F.filter("heads", lambda h: h["txn"] == r["txn"]), 0)["emitted"]
        return r.withField("released", F.when(r["kind"] == "update", r["arrival"]).otherwise(txn))

    return with_emitted.withColumn("pool", F.transform("pool", release)).drop("heads")


def restarted(domain: Any, tc: TimeColumns, runs: DataFrame) -> DataFrame:
    """The restart of each run with a crash tick `it`: the steps after `it`; the run's output at `it` as its
    initial output, its temp at `it`, and the records `R(it)` (`seek`) does not cover, arriving anew."""
    it, pool = F.col("it"), F.col("pool")
    later = F.filter("frontiers", lambda s: s["t"] > it)
    unread = F.filter(
        read_by(F.col("variant"), F.col("records")), lambda r: ~covered(domain, tc, F.col("seek"), r)
    )
    kept = F.filter(pool, lambda r: (r["arrival"] <= it) & ~F.coalesce(r["released"] <= it, F.lit(False)))
    fresh = arrived(domain, tc, later, unread)
    return runs.where(it.isNotNull()).select(
        *RUN[:1],
        F.lit("restarted").alias("run"),
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
    payloads = F.filter(pool, lambda r: r["kind"] != "txn")
    return F.transform(
        payloads,
        lambda r: F.struct(r["data"].alias("data"), r["released"].alias("time"), r["diff"].alias("diff")),
    )


def summaries(runs: DataFrame) -> DataFrame:
    """Per run and step `t`: `output` rows `(data, into_time, diff)`, the initial output and the payloads
    released by `t`, consolidated; and `temp` rows, each record arrived and not released by `t`, with its `count`."""
    at = runs.select(*RUN, F.explode("steps").alias("t"), "pool", "initial")
    t = F.col("t")
    out = F.concat("initial", published(F.filter("pool", lambda r: r["released"] <= t)))
    output = consolidate(at.select(*RUN, "t", F.inline(out)), [*RUN, "t"]).withColumnRenamed(
        "time", "into_time"
    )
    held = F.filter("pool", lambda r: (r["arrival"] <= t) & ~F.coalesce(r["released"] <= t, F.lit(False)))
    temp = (
        at.select(*RUN, "t", F.inline(held)).groupBy(*RUN, "t", *RECORD[:-1]).agg(F.count("*").alias("count"))
    )
    return output.withColumn("part", F.lit("output")).unionByName(
        temp.withColumn("part", F.lit("temp")), allowMissingColumns=True
    )


def observe_summary(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Observations of a batch of restart histories (`frontier_harness.properties.checks.reclocking.summary`) in one Spark job."""
    tc = time_columns(domain)
    frames = {name: to_frame(table) for name, table in _history_tables(tc, histories).items()}
    rows = _observations(domain, tc, frames).toArrow()
    return _decode(tc, histories, rows)


def _observations(domain: Any, tc: TimeColumns, frames: dict) -> DataFrame:
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
        "history_id", F.lit("run").alias("run"), variant, "records", "frontiers", "seek", "it"
    )
    runs = runs.select(
        "*",
        F.transform("frontiers", lambda s: s["t"]).alias("steps"),
        arrived(domain, tc, F.col("frontiers"), read_by(F.col("variant"), F.col("records"))).alias("pool"),
        F.array().cast("array<struct<data: string, time: bigint, diff: bigint>>").alias("initial"),
    )
    run = released(domain, runs)
    again = released(domain, restarted(domain, tc, run))
    stepped = by_history.select(
        "history_id", F.inline(F.transform("frontiers", lambda s: F.struct(s["t"].alias("t"))))
    )
    rows = stepped.withColumn("part", F.lit("steps")).unionByName(
        summaries(run.unionByName(again)), allowMissingColumns=True
    )
    return rows.withColumn("time", F.col("time").cast(nullable(tc.spark_type)))


def _history_tables(tc: TimeColumns, histories: Sequence[Any]) -> dict[str, pa.Table]:
    """`histories` (`history_id, point, it`: the last crash tick, `records`: every source record) and `mints`."""
    time = arrow_type(tc.spark_type)
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
    cols: dict[str, dict[str, list]] = {
        "histories": {"history_id": [], "point": [], "it": [], "records": []},
        "mints": {"history_id": [], "step": [], "tick": [], "upper": []},
    }
    for hid, history in enumerate(histories):
        records, crash = [], None
        for step, action in enumerate(history.actions):
            args = action.args
            if action.name == "mint":
                append_row(
                    cols["mints"],
                    history_id=hid,
                    step=step,
                    tick=args["tick"],
                    upper=[tc.to_row(t) for t in args["upper"]],
                )
            elif action.name == "crash":
                crash = args["tick"]
            else:
                records.append(_record(tc, step, action))
        append_row(cols["histories"], history_id=hid, point=len(history.actions), it=crash, records=records)
    types = {
        "history_id": pa.int64(),
        "point": pa.int64(),
        "it": pa.int64(),
        "records": pa.list_(record),
        "step": pa.int64(),
        "tick": pa.int64(),
        "upper": pa.list_(time),
    }
    return {
        name: pa.table({c: pa.array(v, type=types[c]) for c, v in table.items()})
        for name, table in cols.items()
    }


def _record(tc: TimeColumns, step: int, action: Any) -> dict:
    """A source record's row: an update `(data, diff)`, a data record `(txn, data: payload)`, a metadata record `(txn, size)`."""
    args = action.args
    if action.name not in ("update", "data", "txn"):
        raise ValueError(f"restart history: unknown action {action.name!r} at step {step}")
    payload = args.get("payload") if action.name == "data" else args.get("data")
    diff = args.get("diff", 1) if action.name != "txn" else None
    return {
        "kind": action.name,
        "txn": args.get("txn"),
        "data": payload,
        "size": args.get("size"),
        "time": tc.to_row(args["time"]),
        "diff": diff,
    }


def _decode(tc: TimeColumns, histories: Sequence[Any], rows: pa.Table) -> list[dict]:
    observed = [_empty_observation(h) for h in histories]
    cols = {name: rows.column(name).to_pylist() for name in rows.column_names}
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
        if part == "steps":
            observed[hid][(end, "steps")].add((t,))
            continue
        label = f"{'restarted ' if run == 'restarted' else ''}{variant} {part}"
        if part == "output":
            observed[hid][(end, label)].add((t, data, into, diff))
        else:
            own = tc.from_row(time)[0 if kind == "data" else 1]
            observed[hid][(end, label)].add((t, kind, txn, data, size, own, count))
    return [{key: frozenset(value) for key, value in obs.items()} for obs in observed]


def _empty_observation(history: Any) -> dict:
    """The labels the model shows for this history: its summarizers' output and temp, restarted ones after a crash."""
    names = {a.name for a in history.actions}
    variants = VARIANTS[1:] if {"data", "txn"} & names else VARIANTS[:1]
    runs = ("", "restarted ") if "crash" in names else ("",)
    end = len(history.actions)
    labels = ["steps"] + [
        f"{run}{variant} {part}" for run in runs for variant in variants for part in ("output", "temp")
    ]
    return {(end, label): set() for label in labels}
