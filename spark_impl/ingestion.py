"""The ingestion pipeline with bounded input reliance on Spark, over durable Parquet shards.

The same pipeline as the model (`model.ingestion`): ingest reads the upstream,
mints remap bindings, appends the remap shard, reclocks and appends the data
shard; a checkpoint commits the offset resumption frontier (the remap inverted
at the meet of the shards' uppers) and compacts the remap one tick before it; a
restart recomputes both from the shards, commits and resumes. Fault points are
the model's; `mid_*_write` faults leave a written but unlisted Parquet part.

Batched by `history_id`: one data shard and one remap shard hold every history
of a batch, and `observe_resumption` runs the batch in rounds, one action per
history per round, each round a handful of Spark jobs whatever the batch size.
Frontier metadata (uppers, sinces: manifest fields) is combined on the driver;
bindings, inversion, minting and reclocking are DataFrame operations.

Choice: the reader keeps no position between ingests; each ingest reads from the
data shard's offset frontier (the remap inverted at the data upper). That equals
the model's position plus pending records, and is all a restart needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from model.errors import CompactedRead, UnknownFault
from model.partitioned_time import PARTITION_MAX, PartitionedTime  # value types
from spark_impl import frontiers
from spark_impl.arrow import arrow_type, to_frame
from spark_impl.durable_shard import DurableShard, temporary_root
from spark_impl.time_columns import TimeColumns, time_columns

INGEST_FAULTS = ("mid_remap_write", "after_remap_append", "mid_data_write", "after_data_append")
CHECKPOINT_FAULTS = ("after_commit", "after_compaction")
DATA_SCHEMA = T.StructType(
    [
        T.StructField("history_id", T.LongType()),
        T.StructField("data", T.StringType()),
        T.StructField("time", T.LongType()),
        T.StructField("diff", T.LongType()),
    ]
)


def remap_schema(tc: TimeColumns) -> T.StructType:
    return T.StructType(
        [
            T.StructField("history_id", T.LongType()),
            T.StructField("from_time", tc.spark_type),
            T.StructField("into_time", T.LongType()),
            T.StructField("diff", T.LongType()),
        ]
    )


def combine_uppers(data_upper: list, remap_upper: list) -> list:
    """Rule: the timestamp resumption frontier, the meet of two Total frontiers (`[]` is closed)."""
    both = data_upper + remap_upper
    return [min(both)] if both else []


def binding_before(into_time: Column, t: Column) -> Column:
    """Rule: inversion counts bindings strictly before the resumption time."""
    return into_time < t


def compaction_target(data_upper: list, remap_upper: list) -> list:
    """Rule: the remap is compacted up to (one tick before) the timestamp resumption frontier."""
    return combine_uppers(data_upper, remap_upper)


def frontier_at(remap: DataFrame, points: DataFrame, before: bool) -> DataFrame:
    """For each `(history_id, t, since)` point: `R(t)` (bindings `<= t`) or the inversion (bindings `< t`).

    The inversion at or below `since` is `{minimum}` (the model's choice, kept):
    points carry a `minimum` column for it.
    """
    keep = binding_before(F.col("into_time"), F.col("t")) if before else F.col("into_time") <= F.col("t")
    joined = remap.join(points.select("history_id", "t"), on="history_id").where(keep)
    acc = frontiers.positive(joined, ["history_id", "t"], "from_time")
    result = points.join(acc, on=["history_id", "t"], how="left")
    empty = F.array().cast(T.ArrayType(remap.schema["from_time"].dataType))
    found = F.coalesce(F.col("frontier"), empty)
    if before:
        found = F.when(F.col("t") <= F.col("since"), F.array(F.col("minimum"))).otherwise(found)
    return result.select("history_id", "t", found.alias("frontier"))


class Upstream:
    """The upstream service for a batch: records per history (an Arrow table), offsets, commits, compaction points.

    Records are static input (`step` is when each was produced); `counts`,
    `start` and `committed` are the upstream's own metadata, kept on the driver.
    """

    def __init__(self, tc: TimeColumns, domain_name: str, n: int):
        self.tc, self.total = tc, domain_name == "total"
        self.counts = [[0] if self.total else [] for _ in range(n)]
        self.start = [[0] if self.total else [] for _ in range(n)]
        self.committed: list = [[self.minimum()] for _ in range(n)]
        self.rows: dict = {
            "history_id": [],
            "step": [],
            "partition": [],
            "offset": [],
            "data": [],
            "from_time": [],
        }

    def minimum(self) -> Any:
        return 0 if self.total else PartitionedTime(0, PARTITION_MAX, 0)

    def time_of(self, partition: int, offset: int) -> Any:
        return offset if self.total else PartitionedTime(partition, partition, offset)

    def produce(self, hid: int, step: int, partition: int, data: str) -> None:
        counts = self.counts[hid]
        if partition == len(counts) and not self.total:
            counts.append(0)
            self.start[hid].append(0)
        offset = counts[partition]
        counts[partition] += 1
        for col, value in (
            ("history_id", hid),
            ("step", step),
            ("partition", partition),
            ("offset", offset),
            ("data", data),
            ("from_time", self.tc.to_row(self.time_of(partition, offset))),
        ):
            self.rows[col].append(value)

    def upper(self, hid: int) -> list:
        """The source upper: next offset per partition (plus the unseen rest for a partitioned log)."""
        counts = self.counts[hid]
        if self.total:
            return [counts[0]]
        return [PartitionedTime(p, p, c) for p, c in enumerate(counts)] + [
            PartitionedTime(len(counts), PARTITION_MAX, 0)
        ]

    def needed(self, frontier: Iterable[Any], partition: int) -> int | None:
        covering = [
            e if self.total else e.offset for e in frontier if self.total or e.lo <= partition <= e.hi
        ]
        return min(covering, default=None)

    def commit(self, hid: int, frontier: list) -> None:
        self.committed[hid] = list(frontier)

    def compact(self, hid: int) -> None:
        for p, count in enumerate(self.counts[hid]):
            needed = self.needed(self.committed[hid], p)
            kept = count if needed is None else min(needed, count)
            self.start[hid][p] = max(self.start[hid][p], kept)

    def check_read(self, hid: int, frontier: list) -> None:
        """A read from `frontier` that needs compacted records is `CompactedRead`, never an empty read."""
        for p, first in enumerate(self.start[hid]):
            needed = self.needed(frontier, p)
            if needed is not None and needed < first:
                raise CompactedRead(frontier, p, needed, first)

    def records(self) -> DataFrame:
        types = {
            "history_id": pa.int64(),
            "step": pa.int64(),
            "partition": pa.int64(),
            "offset": pa.int64(),
            "data": pa.string(),
            "from_time": arrow_type(self.tc.spark_type),
        }
        table = pa.table({c: pa.array(v, type=types[c]) for c, v in self.rows.items()})
        return to_frame(table)

    def starts(self, hids: Iterable[int]) -> DataFrame:
        rows = [(h, p, s) for h in hids for p, s in enumerate(self.start[h])]
        table = pa.table(
            {
                "history_id": pa.array([r[0] for r in rows], pa.int64()),
                "partition": pa.array([r[1] for r in rows], pa.int64()),
                "start": pa.array([r[2] for r in rows], pa.int64()),
            }
        )
        return to_frame(table)


class Ingestion:
    """The pipeline for a batch of sources (keys `history_id`) over durable shards under `root`."""

    def __init__(self, domain: Any, n: int, root: os.PathLike | None = None, source: str = "batch"):
        self.tc, self.domain_name, self.n = time_columns(domain), domain.name, n
        root = temporary_root() if root is None else root
        self.upstream = Upstream(self.tc, domain.name, n)
        self.data = DurableShard.open_or_create(os.path.join(root, "data"), source, "data", DATA_SCHEMA)
        self.remap = DurableShard.open_or_create(
            os.path.join(root, "remap"), source, "remap", remap_schema(self.tc)
        )
        self.running = [False] * n
        fresh = [h for h in range(n) if self.remap.upper(h) == [0]]
        if fresh:
            self.remap = self.remap.append(
                self._initial(fresh), {h: [0] for h in fresh}, {h: [1] for h in fresh}
            )
        self._records: tuple = (-1, None)

    def _initial(self, hids: list) -> DataFrame:
        table = pa.table(
            {
                "history_id": pa.array(hids, pa.int64()),
                "from_time": pa.array(
                    [self.tc.to_row(self.upstream.minimum())] * len(hids), arrow_type(self.tc.spark_type)
                ),
                "into_time": pa.array([0] * len(hids), pa.int64()),
                "diff": pa.array([1] * len(hids), pa.int64()),
            }
        )
        return to_frame(table)

    def _points(self, ts: dict) -> DataFrame:
        """`(history_id, t, since, minimum)` for each `hid -> t`."""
        hids = sorted(ts)
        table = pa.table(
            {
                "history_id": pa.array(hids, pa.int64()),
                "t": pa.array([ts[h] for h in hids], pa.int64()),
                "since": pa.array([self.remap.since(h)[0] for h in hids], pa.int64()),
                "minimum": pa.array(
                    [self.tc.to_row(self.upstream.minimum())] * len(hids), arrow_type(self.tc.spark_type)
                ),
            }
        )
        return to_frame(table)

    def records(self) -> DataFrame:
        """The upstream's records as a DataFrame, rebuilt when the upstream has produced more."""
        produced = len(self.upstream.rows["data"])
        if self._records[0] != produced:
            self._records = (produced, self.upstream.records())
        return self._records[1]

    def resumption(self, hid: int) -> list:
        return combine_uppers(self.data.upper(hid), self.remap.upper(hid))

    # --- ingest --------------------------------------------------------------

    def ingest(self, ticks: dict, faults: dict, step: Any) -> None:
        """Ingest at `ticks[hid]` for running histories; `faults[hid]` crashes there.

        `step` (an int, or an int per hid): the upstream records produced before it are visible."""
        for f in faults.values():
            if f not in INGEST_FAULTS:
                raise UnknownFault(f, INGEST_FAULTS)
        hids = [h for h in ticks if self.running[h]]
        if not hids:
            return
        mints = {h: ticks[h] for h in hids if self.remap.upper(h) and ticks[h] >= self.remap.upper(h)[0]}
        self._append_remap(mints, {h for h in hids if faults.get(h) == "mid_remap_write"}, hids)
        for h in hids:
            if faults.get(h) in ("mid_remap_write", "after_remap_append"):
                self.running[h] = False
        writers = [h for h in hids if self.running[h]]
        self._append_data(writers, {h for h in writers if faults.get(h) == "mid_data_write"}, step)
        for h in writers:
            if faults.get(h) in ("mid_data_write", "after_data_append"):
                self.running[h] = False

    def _append_remap(self, mints: dict, torn: set, hids: list) -> None:
        if not mints:
            return
        uppers = [(h, self.upstream.upper(h)) for h in sorted(mints)]
        table = pa.table(
            {
                "history_id": pa.array([h for h, _ in uppers], pa.int64()),
                "tick": pa.array([mints[h] for h, _ in uppers], pa.int64()),
                "new": pa.array(
                    [[self.tc.to_row(t) for t in u] for _, u in uppers],
                    pa.list_(arrow_type(self.tc.spark_type)),
                ),
            }
        )
        wanted = to_frame(table)
        latest = frontiers.positive(self.remap.read(), ["history_id"], "from_time").withColumnRenamed(
            "frontier", "old"
        )
        both = wanted.join(latest, on="history_id")
        rows = both.select(
            "history_id",
            "tick",
            F.array_union(
                F.transform(
                    F.array_except("old", "new"),
                    lambda f: F.struct(f.alias("from_time"), F.lit(-1).cast("long").alias("diff")),
                ),
                F.transform(
                    F.array_except("new", "old"),
                    lambda f: F.struct(f.alias("from_time"), F.lit(1).cast("long").alias("diff")),
                ),
            ).alias("b"),
        ).select("history_id", F.explode("b").alias("b"), F.col("tick").alias("into_time"))
        rows = rows.select("history_id", "b.from_time", "into_time", "b.diff")
        kept = [h for h in mints if h not in torn]
        if torn:
            self.remap.write_part(rows.where(F.col("history_id").isin(sorted(torn))))
        if kept:
            self.remap = self.remap.append(
                rows.where(F.col("history_id").isin(sorted(kept))),
                {h: self.remap.upper(h) for h in kept},
                {h: [mints[h] + 1] for h in kept},
            )

    def _append_data(self, hids: list, torn: set, step: Any) -> None:
        if not hids:
            return
        rows = self._reclocked(hids, step)
        kept = [h for h in hids if h not in torn]
        if torn:
            self.data.write_part(rows.where(F.col("history_id").isin(sorted(torn))))
        if kept:
            moved = [h for h in kept if self.data.upper(h) != self.remap.upper(h)]
            self.data = self.data.append(
                rows.where(F.col("history_id").isin(sorted(kept))),
                {h: self.data.upper(h) for h in moved},
                {h: self.remap.upper(h) for h in moved},
            )

    def _reclocked(self, hids: list, step: Any) -> DataFrame:
        """Records beyond the data shard's offset frontier, reclocked by the remap; compacted ones raise."""
        tc, remap = self.tc, self.remap.read()
        steps = step if isinstance(step, dict) else {h: step for h in hids}
        visible = to_frame(
            pa.table(
                {
                    "history_id": pa.array(hids, pa.int64()),
                    "visible": pa.array([steps[h] for h in hids], pa.int64()),
                }
            )
        )
        positions = frontier_at(remap, self._points({h: self.data.upper(h)[0] for h in hids}), before=True)
        records = (
            self.records()
            .join(visible, on="history_id")
            .where(F.col("step") < F.col("visible"))
            .join(positions.select("history_id", "frontier"), on="history_id")
        )
        needed = records.where(frontiers.less_equal(tc, F.col("frontier"), F.col("from_time")))
        starts = self.upstream.starts(hids)
        needed = (
            needed.join(starts, on=["history_id", "partition"])
            .withColumn(
                "checked",
                F.when(
                    F.col("offset") < F.col("start"),
                    F.raise_error(
                        F.concat(
                            F.lit("CompactedRead: history "),
                            F.col("history_id").cast("string"),
                            F.lit(" partition "),
                            F.col("partition").cast("string"),
                            F.lit(" needs offset "),
                            F.col("offset").cast("string"),
                            F.lit(" compacted before "),
                            F.col("start").cast("string"),
                        )
                    ),
                ).otherwise(F.lit(True)),
            )
            .where(F.col("checked"))
        )
        steps = frontier_at(
            remap,
            remap.select("history_id", F.col("into_time").alias("t"))
            .distinct()
            .join(
                self._points({h: 0 for h in hids}).select("history_id", "since", "minimum"), on="history_id"
            ),
            before=False,
        )
        assigned = needed.join(steps.withColumnRenamed("frontier", "at_t"), on="history_id").where(
            ~frontiers.less_equal(tc, F.col("at_t"), F.col("from_time"))
        )
        return (
            assigned.groupBy("history_id", "data")
            .agg(F.min("t").alias("time"))
            .withColumn("diff", F.lit(1).cast("long"))
        )

    # --- checkpoint and restart ---------------------------------------------

    def facts(self, ts: dict, sinces: dict | None = None) -> dict:
        """One job: per hid the inversion at `ts[hid]`, the data shard's `(data, count)`, the remap's latest
        frontier and, for hids in `sinces`, `R(t)` from that since to the upper (`remap_before`)."""
        remap, sinces = self.remap.read(), sinces or {}
        inverted = frontier_at(remap, self._points(ts), before=True).select(
            "history_id",
            F.lit("inverted").alias("label"),
            F.explode("frontier").alias("time"),
            F.lit(None).cast("string").alias("data"),
            F.lit(None).cast("long").alias("n"),
        )
        chosen = F.col("history_id").isin(sorted(ts))
        latest = frontiers.positive(remap.where(chosen), ["history_id"], "from_time").select(
            "history_id",
            F.lit("latest").alias("label"),
            F.explode("frontier").alias("time"),
            F.lit(None).cast("string").alias("data"),
            F.lit(None).cast("long").alias("n"),
        )
        ids = (
            self.data.read()
            .where(chosen)
            .groupBy("history_id", "data")
            .agg(F.sum("diff").alias("n"))
            .select(
                "history_id",
                F.lit("ids").alias("label"),
                F.lit(None).cast(self.tc.spark_type).alias("time"),
                "data",
                "n",
            )
        )
        frames = [inverted, latest, ids] + (
            [self._steps_rows(remap, sinces, "remap_before")] if sinces else []
        )
        out = {h: {"inverted": [], "latest": [], "ids": []} for h in ts}
        self._collect_steps(out, sinces, "remap_before", self._union(frames).toArrow())
        return out

    def _union(self, frames: list) -> DataFrame:
        result = frames[0]
        for frame in frames[1:]:
            result = result.unionByName(frame)
        return result

    def _steps_rows(self, remap: DataFrame, sinces: dict, label: str) -> DataFrame:
        """`R(t)` for t from each hid's since to its upper, one row per element, `n` holding `t`."""
        ts = [(h, t) for h, s in sinces.items() for t in range(s, self.remap.upper(h)[0])]
        table = pa.table(
            {
                "history_id": pa.array([h for h, _ in ts], pa.int64()),
                "t": pa.array([t for _, t in ts], pa.int64()),
            }
        )
        points = (
            to_frame(table)
            .withColumn("since", F.lit(0).cast("long"))
            .withColumn("minimum", F.lit(None).cast(self.tc.spark_type))
        )
        return frontier_at(remap, points, before=False).select(
            "history_id",
            F.lit(label).alias("label"),
            F.explode("frontier").alias("time"),
            F.lit(None).cast("string").alias("data"),
            F.col("t").alias("n"),
        )

    def _collect_steps(self, out: dict, sinces: dict, label: str, table: pa.Table) -> None:
        steps = {h: {t: set() for t in range(s, self.remap.upper(h)[0])} for h, s in sinces.items()}
        cols = {c: table.column(c).to_pylist() for c in table.column_names}
        for h, kind, time, data, n in zip(
            cols["history_id"], cols["label"], cols["time"], cols["data"], cols["n"]
        ):
            if kind == label:
                steps[h][n].add(self.tc.from_row(time))
            else:
                out.setdefault(h, {"inverted": [], "latest": [], "ids": []})[kind].append(
                    (data, n) if kind == "ids" else self.tc.from_row(time)
                )
        for h, by_t in steps.items():
            out.setdefault(h, {})[label] = frozenset((t, frozenset(f)) for t, f in by_t.items())

    def compaction_plan(self, hids: list, faults: dict) -> dict:
        """The new remap since (one tick before the compaction target) per running hid that compacts."""
        sinces = {}
        for h in hids:
            target = compaction_target(self.data.upper(h), self.remap.upper(h))
            if (
                self.running[h]
                and faults.get(h) != "after_commit"
                and target
                and target[0] - 1 > self.remap.since(h)[0]
            ):
                sinces[h] = target[0] - 1
        return sinces

    def checkpoint(self, hids: list, faults: dict, facts: dict | None = None) -> dict:
        """Commits and compacts running `hids`; returns per hid the facts observed when committing.

        `facts` may be precomputed (`facts(..., compaction_plan(...))`) to share one job with restarts."""
        for f in faults.values():
            if f not in CHECKPOINT_FAULTS:
                raise UnknownFault(f, CHECKPOINT_FAULTS)
        hids = [h for h in hids if self.running[h]]
        if not hids:
            return {}
        sinces = self.compaction_plan(hids, faults)
        if facts is None:
            facts = self.facts({h: self.resumption(h)[0] for h in hids}, sinces)
        for h in hids:
            self.upstream.commit(h, facts[h]["inverted"])
            if faults.get(h) == "after_commit":
                self.running[h] = False
        if sinces:
            self._compact(sinces)
            after: dict = {}
            self._collect_steps(
                after,
                sinces,
                "remap_after",
                self._steps_rows(self.remap.read(), sinces, "remap_after").toArrow(),
            )
            for h in sinces:
                facts[h]["remap_after"] = after[h]["remap_after"]
        for h in hids:
            if faults.get(h) == "after_compaction":
                self.running[h] = False
        return {h: facts[h] for h in hids}

    def _compact(self, sinces: dict) -> None:
        table = pa.table(
            {
                "history_id": pa.array(sorted(sinces), pa.int64()),
                "new_since": pa.array([sinces[h] for h in sorted(sinces)], pa.int64()),
            }
        )
        advanced = (
            self.remap.read()
            .join(to_frame(table), on="history_id", how="left")
            .select(
                "history_id",
                "from_time",
                F.when(F.col("new_since").isNull(), F.col("into_time"))
                .otherwise(F.greatest("into_time", "new_since"))
                .alias("into_time"),
                "diff",
            )
        )
        rows = (
            advanced.groupBy("history_id", "from_time", "into_time")
            .agg(F.sum("diff").alias("diff"))
            .where(F.col("diff") != 0)
        )
        self.remap = self.remap.rewrite(rows, {h: [s] for h, s in sinces.items()})

    def restart(self, hids: list, facts: dict | None = None) -> dict:
        """Recomputes both frontiers from the shards, commits, checks the upstream can serve, resumes."""
        if not hids:
            return {}
        if facts is None:
            facts = self.facts({h: self.resumption(h)[0] for h in hids})
        for h in hids:
            facts[h]["upstream_start"] = frozenset(enumerate(self.upstream.start[h]))
            self.upstream.commit(h, facts[h]["inverted"])
            self.upstream.check_read(h, facts[h]["inverted"])
            self.running[h] = True
        return {h: facts[h] for h in hids}

    def final(self) -> dict:
        """Per hid: the data shard's rows and the remap's consolidated bindings."""
        data = self.data.read().select(
            "history_id",
            F.lit("data").alias("label"),
            "data",
            "time",
            "diff",
            F.lit(None).cast(self.tc.spark_type).alias("from_time"),
        )
        remap = (
            self.remap.read()
            .groupBy("history_id", "from_time", "into_time")
            .agg(F.sum("diff").alias("diff"))
            .where(F.col("diff") != 0)
            .select(
                "history_id",
                F.lit("remap").alias("label"),
                F.lit(None).cast("string").alias("data"),
                F.col("into_time").alias("time"),
                "diff",
                "from_time",
            )
        )
        table = data.unionByName(remap).toArrow()
        out: dict = {h: {"data": set(), "remap": set()} for h in range(self.n)}
        cols = [
            table.column(c).to_pylist() for c in ("history_id", "label", "data", "time", "diff", "from_time")
        ]
        for h, label, data, time, diff, from_time in zip(*cols):
            out[h][label].add(
                (data, time, diff) if label == "data" else (self.tc.from_row(from_time), time, diff)
            )
        return out


def observe_resumption(domain: Any, histories: Sequence[Any], root: os.PathLike | None = None) -> list[dict]:
    """Observations of a batch of ingestion histories, as `properties.suites.resumption.observe` records them.

    Rounds: each history applies its upstream actions (produce, upstream_compact) up to
    its next pipeline action, then every history's pipeline action runs in one round.
    """
    pipeline = Ingestion(domain, len(histories), root)
    observed: list[dict] = [{} for _ in histories]
    pipeline.running = [True] * len(histories)  # a fresh pipeline starts at the minimum, already committed
    cursors = [0] * len(histories)
    while True:
        actions = {
            h: a
            for h, a in ((h, _next_action(pipeline, hist, cursors, h)) for h, hist in enumerate(histories))
            if a
        }
        if not actions:
            break
        _round(pipeline, actions, observed)
    ends = {h: len(history.actions) for h, history in enumerate(histories)}
    _record_commits(observed, pipeline.restart(list(ends)), ends, restart=True)
    final_ticks = {
        h: 1 + max((a.args["tick"] for a in history.actions if a.name == "ingest"), default=0)
        for h, history in enumerate(histories)
    }
    pipeline.ingest(final_ticks, {}, 1 + max(ends.values(), default=0))
    final = pipeline.final()
    for h, end in ends.items():
        observed[h][(end + 1, "data")] = frozenset(final[h]["data"])
        observed[h][(end + 1, "remap")] = frozenset(final[h]["remap"])
        observed[h][(end + 1, "remap_since")] = frozenset(pipeline.remap.since(h))
    return observed


def _next_action(pipeline: Ingestion, history: Any, cursors: list, h: int) -> tuple | None:
    """Applies history `h`'s upstream actions up to its next pipeline action; that action and its step."""
    while cursors[h] < len(history.actions):
        step, action = cursors[h], history.actions[cursors[h]]
        cursors[h] += 1
        if action.name == "produce":
            pipeline.upstream.produce(h, step, action.args["partition"], action.args["data"])
        elif action.name == "upstream_compact":
            pipeline.upstream.compact(h)
        elif action.name in ("ingest", "checkpoint", "restart"):
            return step, action
        else:
            raise ValueError(f"ingestion history: unknown action {action.name!r} at step {step}")
    return None


def _round(pipeline: Ingestion, actions: dict, observed: list) -> None:
    by_kind: dict = {}
    for h, (step, action) in actions.items():
        by_kind.setdefault(action.name, {})[h] = (step, action.args)
    ingests, checkpoints, restarts = (by_kind.get(k, {}) for k in ("ingest", "checkpoint", "restart"))
    ck_faults = {h: a["fault"] for h, (_, a) in checkpoints.items() if a.get("fault")}
    sinces = pipeline.compaction_plan(list(checkpoints), ck_faults)
    asked = {
        h: pipeline.resumption(h)[0] for h in [*[h for h in checkpoints if pipeline.running[h]], *restarts]
    }
    facts = pipeline.facts(asked, sinces) if asked else {}
    _ingest_batch(pipeline, ingests)
    done = pipeline.checkpoint(list(checkpoints), ck_faults, facts)
    _record_commits(observed, done, {h: checkpoints[h][0] for h in done}, restart=False)
    resumed = pipeline.restart(list(restarts), facts)
    _record_commits(observed, resumed, {h: restarts[h][0] for h in resumed}, restart=True)


def _ingest_batch(pipeline: Ingestion, ingests: dict) -> None:
    """One ingest for the round: each history's records visible up to its own step."""
    if ingests:
        pipeline.ingest(
            {h: a["tick"] for h, (_, a) in ingests.items()},
            {h: a["fault"] for h, (_, a) in ingests.items() if a.get("fault")},
            {h: step for h, (step, _) in ingests.items()},
        )


def _record_commits(observed: list, facts: dict, steps: dict, restart: bool) -> None:
    for h, fact in facts.items():
        obs, step = observed[h], steps[h]
        obs[(step, "committed")] = frozenset(fact["inverted"])
        obs[(step, "durable_ids")] = frozenset(fact["ids"])
        obs[(step, "remap_latest")] = frozenset(fact["latest"])
        if restart:
            obs[(step, "resumed")] = frozenset(fact["inverted"])
            obs[(step, "upstream_start")] = fact["upstream_start"]
        if "remap_after" in fact:
            obs[(step, "remap_before")] = fact["remap_before"]
            obs[(step, "remap_after")] = fact["remap_after"]
