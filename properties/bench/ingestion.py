"""Bounded input reliance figures: remap shard size with and without compaction, ingestion throughput.

- `remap_rows_*`: the remap shard's rows after `10^6 * scale` ticks of an LSN source
  advancing every tick. With compaction the pipeline compacts (one tick before the
  resumption frontier) after every tick, as `frontier_harness.model.ingestion.ingestion.checkpoint` does; without,
  rows are counted with the model's own minting rules (no remap is materialised).
- `*_ingest_records_per_s`: records reclocked into the data shard per second, by the
  model pipeline and by the Spark pipeline on durable Parquet shards (one source).
"""

from __future__ import annotations

import tempfile

import attrs

from frontier_harness.model.ingestion.ingestion import Pipeline, checkpoint, ingest
from frontier_harness.model.reclocking.remap import INTO, Remap, insertions, retractions
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Total, parse_domain
from frontier_harness.properties.bench import Figure, timed


def remap_rows(ticks: int, compact: bool) -> int:
    """Rows of the remap shard after `ticks` ticks, the source upper advancing by one record per tick."""
    domain, remap, rows = Total(), Remap.initial(Total()), 1
    old = Antichain.of(domain, [0])
    for tick in range(1, ticks + 1):
        new = Antichain.of(domain, [tick])
        if compact:
            remap = remap.mint(new, tick).compact(Antichain.of(INTO, [tick]))
        else:
            rows += len(retractions(old, new, tick)) + len(insertions(old, new, tick))
        old = new
    return len(remap.bindings) if compact else rows


def model_throughput(ticks: int, per_tick: int) -> float:
    p = Pipeline.start(Total())
    for tick in range(1, ticks + 1):
        for i in range(per_tick):
            p = attrs.evolve(p, upstream=p.upstream.produce(0, f"r{tick}-{i}"))
        p = checkpoint(ingest(p, tick))
    return float(len(p.durable.data.updates))


def spark_throughput(ticks: int, per_tick: int) -> int:
    from frontier_harness.spark_impl.ingestion.durable_ingestion import Ingestion

    pipeline = Ingestion(parse_domain("total"), 1, root=tempfile.mkdtemp(prefix="fh-bench-"), source="bench")
    pipeline.running = [True]
    for tick in range(1, ticks + 1):
        for i in range(per_tick):
            pipeline.upstream.produce(0, tick, 0, f"r{tick}-{i}")
        pipeline.ingest({0: tick}, {}, tick + 1)
        pipeline.checkpoint([0], {})
    return pipeline.data.read().count()


def figures(scale: float) -> list[Figure]:
    ticks = max(1000, int(1_000_000 * scale))
    counted: dict[str, float] = {}
    without_s = timed(lambda: counted.update(without=remap_rows(ticks, compact=False)))
    with_s = timed(lambda: counted.update(compacted=remap_rows(ticks, compact=True)))
    model_ticks, spark_ticks, per_tick, spark_per_tick = (
        max(20, int(50 * scale)),
        max(4, int(10 * scale)),
        200,
        5000,
    )
    model_s = timed(lambda: counted.update(model=model_throughput(model_ticks, per_tick)))
    spark_throughput(2, 10)  # warm the session and plans
    spark_s = timed(lambda: counted.update(spark=spark_throughput(spark_ticks, spark_per_tick)))
    return [
        Figure(
            "remap_rows_without_compaction",
            counted["without"],
            "rows",
            f"after {ticks} ticks ({without_s:.1f} s to count)",
        ),
        Figure(
            "remap_rows_with_compaction",
            counted["compacted"],
            "rows",
            f"after {ticks} ticks, compacted every tick ({with_s:.1f} s)",
            baseline="remap_rows_without_compaction",
            goal="constant (independent of ticks)",
        ),
        Figure(
            "model_ingest_records_per_s",
            counted["model"] / model_s,
            "records/s",
            f"{model_ticks} ticks x {per_tick} records, ingest + checkpoint per tick",
        ),
        Figure(
            "spark_ingest_records_per_s",
            counted["spark"] / spark_s,
            "records/s",
            f"{spark_ticks} ticks x {spark_per_tick} records on Parquet shards, ingest + checkpoint per tick",
        ),
    ]
