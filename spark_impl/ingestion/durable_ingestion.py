"""The ingestion pipeline round by round over durable Parquet shards: what a running process does.

The pipeline of `frontier_harness.spark_impl.ingestion.ingestion` (and of the model), carried the way a
running source carries it: the data and remap shards are `DurableShard`s
(Parquet parts and versioned manifests) that survive a killed process, and the
upstream's offsets, commits and compaction points are the upstream's own
(`Upstream`, kept by the caller). Each call is one round for a batch of sources
keyed by `history_id`, a few Spark jobs whatever the batch size: an ingest mints
against the remap's latest frontier and appends the remap shard, then reclocks
the records beyond the data shard's offset frontier and appends the data shard;
a checkpoint commits the offset resumption frontier and compacts the remap; a
restart recomputes both from the shards, checks the upstream can serve from
there (`CompactedRead`), commits and resumes. Fault points are the model's;
`mid_*_write` faults leave a written but unlisted Parquet part.

It shares its rules with `frontier_harness.spark_impl.ingestion.ingestion` (`combine_uppers`,
`compaction_target`) and the remap's with `frontier_harness.spark_impl.reclocking.remap` (minting, `compact`,
`frontier_at`, `inversion_time`) and `frontier_harness.spark_impl.reclocking.reclock`; where
`frontier_harness.spark_impl.ingestion.ingestion` folds every round of a history in one job, this path
reads each round's state from disk. `tests/test_crash_sigkill.py` kills it with
SIGKILL; `observe_durable` runs histories through it round by round, so a test
holds it equal to the model.

Choice (as `frontier_harness.spark_impl.ingestion.ingestion`): the reader keeps no position between
ingests; each ingest reads from the data shard's offset frontier.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.model.errors import CompactedRead, UnknownFault
from frontier_harness.model.time.partitioned_time import PARTITION_MAX, PartitionedTime  # value types
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
from frontier_harness.spark_impl.arrow import HistoryTables, arrow_type, columns_of, to_frame
from frontier_harness.spark_impl.ingestion import ingestion
from frontier_harness.spark_impl.ingestion.durable_shard import DurableShard, temporary_root
from frontier_harness.spark_impl.reclocking import remap
from frontier_harness.spark_impl.reclocking.reclock import assign_general, literal, steps
from frontier_harness.spark_impl.time import frontiers
from frontier_harness.spark_impl.time.time_columns import TimeColumns, time_columns

DATA_SCHEMA = T.StructType(
    [
        T.StructField("history_id", T.LongType()),
        T.StructField("data", T.StringType()),
        T.StructField("time", T.LongType()),
        T.StructField("diff", T.LongType()),
    ]
)
POINT = ["history_id", "point"]


def remap_schema(tc: TimeColumns) -> T.StructType:
    return T.StructType(
        [
            T.StructField("history_id", T.LongType()),
            T.StructField("from_time", tc.spark_type),
            T.StructField("into_time", T.LongType()),
            T.StructField("diff", T.LongType()),
        ]
    )


class Upstream:
    """The upstream service for a batch: records per history (Arrow), offsets, commits, compaction points.

    Records are static input (`step` is when each was produced); `counts`, `start`
    and `committed` are the upstream's own metadata, kept by the caller.
    """

    def __init__(self, tc: TimeColumns, domain_name: str, n: int):
        self.tc, self.total = tc, domain_name == "total"
        self.counts = [[0] if self.total else [] for _ in range(n)]
        self.start = [[0] if self.total else [] for _ in range(n)]
        self.committed: list = [[self.minimum()] for _ in range(n)]
        ids = pa.int64()
        columns = {"history_id": ids, "step": ids, "partition": ids, "offset": ids, "data": pa.string()}
        self.rows = HistoryTables({"records": {**columns, "from_time": arrow_type(tc.spark_type)}})

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
        time = self.tc.to_row(self.time_of(partition, offset))
        self.rows.append(
            "records",
            history_id=hid,
            step=step,
            partition=partition,
            offset=offset,
            data=data,
            from_time=time,
        )

    def upper(self, hid: int) -> list:
        """The source upper: next offset per partition (plus the unseen rest for a partitioned log)."""
        counts = self.counts[hid]
        if self.total:
            return [counts[0]]
        seen = [PartitionedTime(p, p, c) for p, c in enumerate(counts)]
        return seen + [PartitionedTime(len(counts), PARTITION_MAX, 0)]

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
        """Every record produced so far: `(history_id, step, partition, offset, data, from_time)`."""
        return self.rows.frames()["records"]

    def starts(self, hids: Iterable[int]) -> DataFrame:
        rows = [(h, p, s) for h in hids for p, s in enumerate(self.start[h])]
        columns = ("history_id", "partition", "start")
        return to_frame(
            pa.table({c: pa.array([r[i] for r in rows], pa.int64()) for i, c in enumerate(columns)})
        )


# What a row of a `facts` job holds (its `label`), besides `R(t)` around a compaction (`ResumptionLabel`).
INVERTED, LATEST, IDS, SINCE = "inversion", "latest", "ids", "since"


@attrs.frozen
class Facts:
    """What one history's checkpoint or restart observes, read from the shards in one job (`facts`) and
    completed by the commit.

    Invariant: `remap_before` is set exactly when `since` is (a compaction is due), `remap_after` once
    that compaction ran, and an observation records the two only then; `committed` is set once the
    upstream committed (a checkpoint's commit, or a restart's). Updates are `attrs.evolve`.
    """

    inverted: tuple = ()  # the offset resumption frontier: the remap inverted at `combine_uppers`
    latest: tuple = ()  # the remap's latest frontier (its latest source upper)
    ids: tuple = ()  # the data shard's `(data, count)` pairs
    since: int | None = None  # the remap's new since, when a compaction advances it
    remap_before: frozenset | None = None  # `(t, R(t))` from the new since to the upper, before
    remap_after: frozenset | None = None  # the same after the compaction
    committed: tuple | None = None  # the frontier the upstream holds committed after the commit
    upstream_start: frozenset | None = None  # at a restart: `(partition, first offset)` upstream

    @classmethod
    def gathered(cls, found: dict, around: dict) -> Facts:
        """From a `facts` job's rows: `found` by label (`INVERTED`, ...), `around[label][t]` the elements
        of `R(t)` under `remap_before` or `remap_after`."""
        frozen = {
            label: frozenset((t, frozenset(elements)) for t, elements in by_t.items())
            for label, by_t in around.items()
        }
        return cls(
            inverted=tuple(found[INVERTED]),
            latest=tuple(found[LATEST]),
            ids=tuple(found[IDS]),
            since=found[SINCE],
            remap_before=frozen.get(ResumptionLabel.REMAP_BEFORE),
            remap_after=frozen.get(ResumptionLabel.REMAP_AFTER),
        )


class Ingestion:
    """The pipeline for a batch of sources (keys `history_id`) over durable shards under `root`."""

    def __init__(self, domain: Any, n: int, root: os.PathLike | str | None = None, source: str = "batch"):
        self.tc, self.domain, self.n = time_columns(domain), domain, n
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

    def _minimum(self) -> Any:
        return literal(self.tc.to_row(self.upstream.minimum()), self.tc.spark_type)

    def _initial(self, hids: list) -> DataFrame:
        time = arrow_type(self.tc.spark_type)
        table = pa.table(
            {
                "history_id": pa.array(hids, pa.int64()),
                "from_time": pa.array([self.tc.to_row(self.upstream.minimum())] * len(hids), time),
                "into_time": pa.array([0] * len(hids), pa.int64()),
                "diff": pa.array([1] * len(hids), pa.int64()),
            }
        )
        return to_frame(table)

    def _bindings(self) -> DataFrame:
        """The remap shard's rows as each history's one remap (`point` 0), as `remap` reads them."""
        return self.remap.read().withColumn("point", F.lit(0).cast("long"))

    def _shards(self, hids: Iterable[int]) -> DataFrame:
        """Per hid, the shards' metadata: `(history_id, point, data_upper, remap_upper, since)`."""
        hids = sorted(hids)
        columns = {
            "history_id": hids,
            "point": [0] * len(hids),
            "data_upper": [self.data.upper(h)[0] for h in hids],
            "remap_upper": [self.remap.upper(h)[0] for h in hids],
            "since": [self.remap.since(h)[0] for h in hids],
        }
        return to_frame(pa.table({c: pa.array(v, pa.int64()) for c, v in columns.items()}))

    def _inverted(self, bindings: DataFrame, shards: DataFrame, upper: Any) -> DataFrame:
        """Per hid, the remap inverted at `{upper}` (a Column over `shards`): `(history_id, frontier)`."""
        at = shards.select(*POINT, remap.inversion_time(upper, F.lit(False), F.col("since")).alias("t"))
        found = remap.frontier_at(bindings, at)
        frontier = F.when(F.col("t").isNull(), F.array(self._minimum())).otherwise(F.col("frontier"))
        return found.select("history_id", frontier.alias("frontier"))

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
        self._append_remap(mints, {h for h in hids if faults.get(h) == Fault.MID_REMAP_WRITE})
        for h in hids:
            if faults.get(h) in (Fault.MID_REMAP_WRITE, Fault.AFTER_REMAP_APPEND):
                self.running[h] = False
        writers = [h for h in hids if self.running[h]]
        self._append_data(writers, {h for h in writers if faults.get(h) == Fault.MID_DATA_WRITE}, step)
        for h in writers:
            if faults.get(h) in (Fault.MID_DATA_WRITE, Fault.AFTER_DATA_APPEND):
                self.running[h] = False

    def _append_remap(self, mints: dict, torn: set) -> None:
        """Bindings at each tick: the latest frontier's elements the upstream left (-1), its new ones (+1)."""
        if not mints:
            return
        hids = sorted(mints)
        time = arrow_type(self.tc.spark_type)
        wanted = to_frame(
            pa.table(
                {
                    "history_id": pa.array(hids, pa.int64()),
                    "tick": pa.array([mints[h] for h in hids], pa.int64()),
                    "new": pa.array(
                        [[self.tc.to_row(t) for t in self.upstream.upper(h)] for h in hids], pa.list_(time)
                    ),
                }
            )
        )
        latest = self._shards(hids).select(*POINT, (F.col("remap_upper") - 1).alias("t"))
        old = remap.frontier_at(self._bindings(), latest).select("history_id", F.col("frontier").alias("old"))
        changes = wanted.join(old, on="history_id")
        signed = lambda rule, diff: F.transform(  # noqa: E731
            rule(F.col("old"), F.col("new")),
            lambda f: F.struct(f.alias("from_time"), F.lit(diff).cast("long").alias("diff")),
        )
        rows = changes.select(
            "history_id",
            F.col("tick").alias("into_time"),
            F.explode(F.concat(signed(remap.retractions, -1), signed(remap.insertions, 1))).alias("b"),
        ).select("history_id", "b.from_time", "into_time", "b.diff")
        kept = [h for h in hids if h not in torn]
        if torn:
            self.remap.write_part(rows.where(F.col("history_id").isin(sorted(torn))))
        if kept:
            self.remap = self.remap.append(
                rows.where(F.col("history_id").isin(kept)),
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
        steps_by_hid = step if isinstance(step, dict) else {h: step for h in hids}
        shards = self._shards(hids)
        visible = to_frame(
            pa.table(
                {
                    "history_id": pa.array(hids, pa.int64()),
                    "visible": pa.array([steps_by_hid[h] for h in hids], pa.int64()),
                }
            )
        )
        bindings = self._bindings()
        frontier = self._inverted(bindings, shards, F.col("data_upper"))
        records = (
            self.upstream.records()
            .join(visible, on="history_id")
            .where(F.col("step") < F.col("visible"))
            .join(frontier, on="history_id")
            .where(frontiers.less_equal(self.tc, F.col("frontier"), F.col("from_time")))
        )
        served = self._served(records.join(self.upstream.starts(hids), on=["history_id", "partition"]))
        updates = served.select(
            "history_id",
            F.lit(0).cast("long").alias("point"),
            "data",
            F.col("from_time").alias("time"),
            F.lit(1).cast("long").alias("diff"),
        )
        at_steps = remap.frontier_at(bindings, steps(bindings, shards.select(*POINT, "since")))
        assigned = assign_general(self.tc, at_steps, updates).where(F.col("into_time").isNotNull())
        return assigned.select("history_id", "data", F.col("into_time").alias("time"), "diff")

    @staticmethod
    def _served(records: DataFrame) -> DataFrame:
        """The records, failing the job (`CompactedRead`) if one was compacted away upstream."""
        message = F.concat(
            F.lit("CompactedRead: history "),
            F.col("history_id").cast("string"),
            F.lit(" partition "),
            F.col("partition").cast("string"),
            F.lit(" needs offset "),
            F.col("offset").cast("string"),
            F.lit(" compacted before "),
            F.col("start").cast("string"),
        )
        checked = F.when(F.col("offset") < F.col("start"), F.raise_error(message)).otherwise(F.lit(True))
        return records.where(checked)

    # --- checkpoint and restart ---------------------------------------------

    def facts(self, hids: list, compacting: Iterable[int] = ()) -> dict[int, Facts]:
        """One job: per hid the resumption frontier `t` (`combine_uppers`), the inversion there, the data
        shard's `(data, count)`, the remap's latest frontier; for hids in `compacting`, the new since
        (`compaction_target` - 1, when it advances) and `R(t)` from there to the upper (`remap_before`)."""
        compacting = set(compacting)
        shards = self._shards(hids).withColumn(
            "compacts", F.col("history_id").isin(sorted(compacting)) if compacting else F.lit(False)
        )
        uppers = (F.col("data_upper"), F.col("remap_upper"))
        bindings = self._bindings()
        label = lambda name: F.lit(name).alias("label")  # noqa: E731
        nothing = {"t": F.lit(None).cast("long"), "data": F.lit(None).cast("string")}
        inverted = self._inverted(bindings, shards, ingestion.combine_uppers(*uppers)).select(
            "history_id", label(INVERTED), F.explode("frontier").alias("time"), *self._blank(nothing)
        )
        latest_at = shards.select(*POINT, (F.col("remap_upper") - 1).alias("t"))
        latest = remap.frontier_at(bindings, latest_at).select(
            "history_id", label(LATEST), F.explode("frontier").alias("time"), *self._blank(nothing)
        )
        chosen = F.col("history_id").isin(sorted(hids))
        ids = (
            self.data.read()
            .where(chosen)
            .groupBy("history_id", "data")
            .agg(F.sum("diff").alias("t"))
            .select("history_id", label(IDS), F.lit(None).cast(self.tc.spark_type).alias("time"), "t", "data")
        )
        target = ingestion.compaction_target(*uppers) - 1
        sinces = shards.where(F.col("compacts") & (target > F.col("since"))).select(
            "history_id",
            label(SINCE),
            F.lit(None).cast(self.tc.spark_type).alias("time"),
            target.alias("t"),
            F.lit(None).cast("string").alias("data"),
        )
        before = self._steps_rows(bindings, sinces, shards, ResumptionLabel.REMAP_BEFORE)
        table = (
            inverted.unionByName(latest).unionByName(ids).unionByName(sinces).unionByName(before).toArrow()
        )
        return self._collect(hids, table)

    def _blank(self, columns: dict) -> list:
        return [value.alias(name) for name, value in columns.items()]

    def _steps_rows(
        self, bindings: DataFrame, sinces: DataFrame, shards: DataFrame, label: ResumptionLabel
    ) -> DataFrame:
        """`R(t)` for `t` from each hid's new since (`sinces`) to its remap upper, one row per element;
        `data` holds `t`."""
        ts = (
            sinces.select("history_id", F.col("t").alias("new_since"))
            .join(shards, on="history_id")
            .select(*POINT, F.explode(F.sequence("new_since", F.col("remap_upper") - 1)).alias("t"))
        )
        return remap.frontier_at(bindings, ts).select(
            "history_id",
            F.lit(label.value).alias("label"),
            F.explode_outer("frontier").alias("time"),
            F.lit(None).cast("long").alias("t"),
            F.col("t").cast("string").alias("data"),
        )

    def _collect(self, hids: list, table: pa.Table) -> dict[int, Facts]:
        """Each hid's `Facts` from the rows of `facts` or `_after` (`label` names what a row holds)."""
        found: dict = {h: {INVERTED: [], LATEST: [], IDS: [], SINCE: None} for h in hids}
        around: dict = {h: {} for h in hids}
        cols = columns_of(table)
        for h, label, time, t, data in zip(*(cols[c] for c in ("history_id", "label", "time", "t", "data"))):
            if label in (INVERTED, LATEST):
                found[h][label].append(self.tc.from_row(time))
            elif label == IDS:
                found[h][IDS].append((data, t))
            elif label == SINCE:
                found[h][SINCE] = t
            else:
                elements = around[h].setdefault(ResumptionLabel(label), {}).setdefault(int(data), set())
                if time is not None:
                    elements.add(self.tc.from_row(time))
        return {h: Facts.gathered(found[h], around[h]) for h in hids}

    def checkpoint(
        self,
        hids: list,
        faults: dict,
        facts: dict[int, Facts] | None = None,
        compact_first: Iterable[int] = (),
    ) -> dict[int, Facts]:
        """Commits and compacts running `hids` (those in `compact_first` compact, then commit from the
        compacted remap); returns per hid the facts observed, `committed` what the upstream holds after.

        `facts` may be precomputed (`facts(hids, compacting)`) to share one job with restarts."""
        for f in faults.values():
            if f not in CHECKPOINT_FAULTS:
                raise UnknownFault(f, CHECKPOINT_FAULTS)
        hids = [h for h in hids if self.running[h]]
        if not hids:
            return {}
        first = set(compact_first) & set(hids)
        if facts is None:
            facts = self.facts(hids, [h for h in hids if h in first or faults.get(h) != Fault.AFTER_COMMIT])
        facts = dict(facts)
        for h in hids:
            if h not in first:
                self._commit(h, facts[h].inverted, faults.get(h) == Fault.AFTER_COMMIT)
        sinces = {h: facts[h].since for h in hids if facts[h].since is not None and self.running[h]}
        if sinces:
            self._compact(sinces)
            after = self._collect(list(sinces), self._after(sinces, first & set(sinces)).toArrow())
            for h in sinces:
                # the commit of a compact-first checkpoint reads the compacted remap
                inverted = after[h].inverted if h in first else facts[h].inverted
                facts[h] = attrs.evolve(facts[h], remap_after=after[h].remap_after, inverted=inverted)
        for h in hids:
            if faults.get(h) == Fault.AFTER_COMPACTION:
                self.running[h] = False
            elif h in first:
                self._commit(h, facts[h].inverted, faults.get(h) == Fault.AFTER_COMMIT)
            facts[h] = attrs.evolve(facts[h], committed=tuple(self.upstream.committed[h]))
        return {h: facts[h] for h in hids}

    def _commit(self, hid: int, frontier: Sequence[Any], crash: bool) -> None:
        self.upstream.commit(hid, list(frontier))
        if crash:
            self.running[hid] = False

    def _after(self, sinces: dict, inverting: set) -> DataFrame:
        """`R(t)` after a compaction (`remap_after`), and the inversion for the hids in `inverting`."""
        rows = pa.table(
            {
                "history_id": pa.array(sorted(sinces), pa.int64()),
                "t": pa.array([sinces[h] for h in sorted(sinces)], pa.int64()),
            }
        )
        bindings, shards = self._bindings(), self._shards(sinces)
        after = self._steps_rows(bindings, to_frame(rows), shards, ResumptionLabel.REMAP_AFTER)
        chosen = shards.where(F.col("history_id").isin(sorted(inverting)) if inverting else F.lit(False))
        uppers = ingestion.combine_uppers(F.col("data_upper"), F.col("remap_upper"))
        inverted = self._inverted(bindings, chosen, uppers).select(
            "history_id",
            F.lit(INVERTED).alias("label"),
            F.explode("frontier").alias("time"),
            F.lit(None).cast("long").alias("t"),
            F.lit(None).cast("string").alias("data"),
        )
        return after.unionByName(inverted)

    def _compact(self, sinces: dict) -> None:
        """The remap shard rewritten compacted (`remap.compact`): advanced to each hid's new since."""
        table = pa.table(
            {
                "history_id": pa.array(sorted(sinces), pa.int64()),
                "new_since": pa.array([sinces[h] for h in sorted(sinces)], pa.int64()),
            }
        )
        joined = self.remap.read().join(to_frame(table), on="history_id", how="left")
        since = F.coalesce(F.col("new_since"), F.col("into_time")).alias("since")
        rows = remap.compact(
            joined.select("history_id", "from_time", "into_time", "diff", since), ["history_id"]
        )
        self.remap = self.remap.rewrite(rows, {h: [s] for h, s in sinces.items()})

    def restart(self, hids: list, facts: dict[int, Facts] | None = None) -> dict[int, Facts]:
        """Recomputes both frontiers from the shards, commits, checks the upstream can serve, resumes."""
        if not hids:
            return {}
        if facts is None:
            facts = self.facts(hids)
        resumed = {}
        for h in hids:
            fact = attrs.evolve(
                facts[h],
                upstream_start=frozenset(enumerate(self.upstream.start[h])),
                committed=facts[h].inverted,
            )
            self.upstream.commit(h, list(fact.inverted))
            self.upstream.check_read(h, list(fact.inverted))
            self.running[h] = True
            resumed[h] = fact
        return resumed

    def final(self) -> dict:
        """Per hid: the data shard's rows (under `data`) and the remap's consolidated bindings (`remap`)."""
        data = self.data.read().select(
            "history_id",
            F.lit(ResumptionLabel.DATA.value).alias("label"),
            "data",
            "time",
            "diff",
            F.lit(None).cast(self.tc.spark_type).alias("from_time"),
        )
        bindings = remap.consolidate_bindings(self.remap.read(), ["history_id"]).select(
            "history_id",
            F.lit(ResumptionLabel.REMAP.value).alias("label"),
            F.lit(None).cast("string").alias("data"),
            F.col("into_time").alias("time"),
            "diff",
            "from_time",
        )
        table = data.unionByName(bindings).toArrow()
        out: dict = {h: {ResumptionLabel.DATA: set(), ResumptionLabel.REMAP: set()} for h in range(self.n)}
        cols = columns_of(table)
        rows = zip(*(cols[c] for c in ("history_id", "label", "data", "time", "diff", "from_time")))
        for h, label, data, time, diff, from_time in rows:
            out[h][label].add(
                (data, time, diff)
                if label == ResumptionLabel.DATA
                else (self.tc.from_row(from_time), time, diff)
            )
        return out


def observe_durable(
    domain: Any, histories: Sequence[HistoryLike], root: os.PathLike | str | None = None
) -> list[dict]:
    """Observations of a batch of ingestion histories through the durable pipeline, round by round, as
    `frontier_harness.properties.checks.ingestion.resumption.observe` records them.

    Rounds: each history applies its upstream actions (produce, upstream_compact) up to
    its next pipeline action, then every history's pipeline action runs in one round.
    """
    pipeline = Ingestion(domain, len(histories), root)
    observed: list[dict] = [{} for _ in histories]
    pipeline.running = [True] * len(histories)  # a fresh pipeline starts at the minimum, already committed
    cursors, decoded = [0] * len(histories), [ingestion_steps(h) for h in histories]
    while True:
        pending = ((h, _next_action(pipeline, steps, cursors, h)) for h, steps in enumerate(decoded))
        actions = {h: a for h, a in pending if a}
        if not actions:
            break
        _round(pipeline, actions, observed)
    ends = {h: len(history.actions) for h, history in enumerate(histories)}
    _record_commits(observed, pipeline.restart(list(ends)), ends, restart=True)
    final_ticks = {h: final_tick(steps) for h, steps in enumerate(decoded)}
    pipeline.ingest(final_ticks, {}, 1 + max(ends.values(), default=0))
    final = pipeline.final()
    for h, end in ends.items():
        observed[h][(end + 1, ResumptionLabel.DATA)] = frozenset(final[h][ResumptionLabel.DATA])
        observed[h][(end + 1, ResumptionLabel.REMAP)] = frozenset(final[h][ResumptionLabel.REMAP])
        observed[h][(end + 1, ResumptionLabel.REMAP_SINCE)] = frozenset(pipeline.remap.since(h))
    return observed


PIPELINE_ACTIONS = (IngestionAction.INGEST, IngestionAction.CHECKPOINT, IngestionAction.RESTART)


def _next_action(
    pipeline: Ingestion, steps: tuple[IngestionStep, ...], cursors: list, h: int
) -> IngestionStep | None:
    """Applies history `h`'s upstream steps up to its next pipeline step, and returns that one."""
    while cursors[h] < len(steps):
        step = steps[cursors[h]]
        cursors[h] += 1
        if step.action is IngestionAction.PRODUCE:
            pipeline.upstream.produce(h, step.step, step.partition, step.data)
        elif step.action is IngestionAction.UPSTREAM_COMPACT:
            pipeline.upstream.compact(h)
        else:
            return step
    return None


def _round(pipeline: Ingestion, actions: dict[int, IngestionStep], observed: list) -> None:
    by_kind: dict[str, dict[int, IngestionStep]] = {}
    for h, step in actions.items():
        by_kind.setdefault(step.action, {})[h] = step
    ingests, checkpoints, restarts = (by_kind.get(k, {}) for k in PIPELINE_ACTIONS)
    ck_faults = {h: s.fault for h, s in checkpoints.items() if s.fault}
    committing = [h for h in checkpoints if pipeline.running[h]]
    first = {h for h in committing if checkpoints[h].compact_first}
    compacting = [h for h in committing if h in first or ck_faults.get(h) != Fault.AFTER_COMMIT]
    facts = pipeline.facts([*committing, *restarts], compacting) if committing or restarts else {}
    if ingests:
        pipeline.ingest(
            {h: s.tick for h, s in ingests.items()},
            {h: s.fault for h, s in ingests.items() if s.fault},
            {h: s.step for h, s in ingests.items()},
        )
    done = pipeline.checkpoint(list(checkpoints), ck_faults, facts, first)
    _record_commits(observed, done, {h: checkpoints[h].step for h in done}, restart=False)
    resumed = pipeline.restart(list(restarts), facts)
    _record_commits(observed, resumed, {h: restarts[h].step for h in resumed}, restart=True)


def _record_commits(observed: list, facts: dict[int, Facts], steps: dict, restart: bool) -> None:
    for h, fact in facts.items():
        obs, step = observed[h], steps[h]
        obs[(step, ResumptionLabel.COMMITTED)] = frozenset(fact.committed or ())
        obs[(step, ResumptionLabel.DURABLE_IDS)] = frozenset(fact.ids)
        obs[(step, ResumptionLabel.REMAP_LATEST)] = frozenset(fact.latest)
        if restart:
            obs[(step, ResumptionLabel.RESUMED)] = frozenset(fact.inverted)
            obs[(step, ResumptionLabel.UPSTREAM_START)] = fact.upstream_start
        if fact.remap_after is not None:
            obs[(step, ResumptionLabel.REMAP_BEFORE)] = fact.remap_before
            obs[(step, ResumptionLabel.REMAP_AFTER)] = fact.remap_after
