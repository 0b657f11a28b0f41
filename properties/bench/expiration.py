"""Dataflow expiration at scale: the seed's `last_30_days` MV on a replica with a 21-day offset.

Rows are generated in Spark (`spark.range`): row `i` is inserted at a time spread
evenly over the 30 days that are in the window when the replica expires
(`[start + 21d - 30d, start + 21d]`: the data the replica holds at its end), and
its `event_ts` is its insertion time. Choice: rows older than that retract
during the replica's life whatever the offset, so they cannot benefit (a 51-day
spread measured 0.71 at 100k rows). The MV is `mz_now() <= event_ts + 30 days`,
evaluated by `frontier_harness.spark_impl.catalog.plan.temporal_events` with the dataflow's `until`: none
without expiration; with it, the model's rule (`frontier_harness.model.catalog.expiration.render`) for an
MV over a table on a replica started at `start` with the 21-day offset.

Measured in one run: diffs processed and Spark wall time with and without
expiration, and whether the outputs the replica can serve (every time before the
expiration) are identical, compared by count and an order-free fingerprint
(sum of `xxhash64(data, time, diff) mod p`; equal multisets give equal values).
"""

from __future__ import annotations

from frontier_harness.model.catalog.catalog import Catalog, MaterializedView, Table
from frontier_harness.model.catalog.expiration import render, replica_expiration
from frontier_harness.model.catalog.plan import Get, TemporalFilter
from frontier_harness.model.catalog.temporal import MzNow
from frontier_harness.properties.bench import Figure, timed

DAY = 24 * 60 * 60 * 1000
WINDOW, OFFSET = 30 * DAY, 21 * DAY
START = 1_727_000_000_000  # the replica's start, epoch milliseconds
ROWS = 10_000_000


def expiration_until() -> int:
    """The MV's `until` on the replica, by the model's rules (one tick past the replica expiration)."""
    mv = MaterializedView("last_30_days", TemporalFilter(Get("events"), (MzNow("<=", 0, WINDOW),)))
    catalog = Catalog().add(Table("events")).add(mv)
    until = render(catalog, "last_30_days", replica_expiration(START, OFFSET)).until
    assert until is not None, "a replica expiration gives the MV an until"
    return until


def outputs(rows: int, until):
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.catalog.plan import temporal_events
    from frontier_harness.spark_impl.session import spark

    session, step = spark(), WINDOW // rows
    ts = F.lit(START + OFFSET - WINDOW) + F.col("id") * step
    inserted = session.range(rows).select(
        F.array(ts, F.col("id")).alias("data"), ts.alias("time"), F.lit(1).cast("long").alias("diff")
    )
    preds = F.array(
        F.struct(
            F.lit("<=").alias("op"),
            F.lit(0).cast("long").alias("col"),
            F.lit(WINDOW).cast("long").alias("off"),
        )
    )
    events = temporal_events(F.col("data"), F.col("time"), F.col("diff"), preds, F.lit(until).cast("long"))
    return inserted.select("data", F.explode(events).alias("e")).select("data", "e.time", "e.diff")


def summary(frame, before: int) -> dict:
    """Diffs processed, and the count and fingerprint of the diffs before `before`."""
    from pyspark.sql import functions as F

    served = F.col("time") < before
    fingerprint = F.pmod(F.xxhash64("data", "time", "diff"), F.lit(1_000_000_007))
    row = frame.agg(
        F.count(F.lit(1)).alias("diffs"),
        F.sum(served.cast("long")).alias("served"),
        F.sum(F.when(served, fingerprint)).alias("fingerprint"),
    ).collect()[0]
    return row.asDict()


def figures(scale: float) -> list[Figure]:
    rows, until = max(1000, int(ROWS * scale)), expiration_until()
    summary(outputs(1000, None), until)  # warm the session
    results: dict[str, dict] = {}

    def measured(name: str, u: int | None) -> float:
        return timed(lambda: results.__setitem__(name, summary(outputs(rows, u), until)))

    seconds = {name: measured(name, u) for name, u in (("without", None), ("with", until))}
    on, off = results["with"], results["without"]
    identical = on["served"] == off["served"] and on["fingerprint"] == off["fingerprint"]
    size = f"{rows:,} rows, 30-day window, 21-day offset"
    return [
        Figure("expiration_diffs_without", off["diffs"], "diffs", size),
        Figure(
            "expiration_diffs_with",
            on["diffs"],
            "diffs",
            f"{size}; served outputs identical: {identical}",
            baseline="expiration_diffs_without",
            goal="<= 0.52 and outputs identical",
        ),
        Figure("expiration_spark_s_without", seconds["without"], "s", "Spark wall time, count + fingerprint"),
        Figure(
            "expiration_spark_s_with",
            seconds["with"],
            "s",
            "Spark wall time, count + fingerprint",
            baseline="expiration_spark_s_without",
        ),
        Figure(
            "expiration_served_outputs_identical",
            float(identical),
            "bool",
            f"{on['served']:,} diffs before the expiration on both sides",
        ),
    ]
