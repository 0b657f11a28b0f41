"""Reclocking figures: N source updates against N/100 bindings on Spark, against Spark's own consolidation.

Rows are generated in Spark (`spark.range`), never in Python: updates at Total
offsets in a scrambled order, and a remap minted from N/100 ticks whose source
upper advances by 100 offsets a tick (its 2N/100 bindings are minted once and kept
as the job's input, like the updates; minting is its own figure). The reclocking
job accumulates `R` per IntoTime, assigns every update by the as-of join and
consolidates the reclocked collection; the baseline is Spark's own consolidation of
the same update rows (`groupBy(history_id, point, data, time).agg(sum(diff))`), the
least a reclocked collection must cost; a plain sort by time is reported too. All are
written to Spark's `noop` sink under the same settings, each run once untimed, then in
turns, each turn starting one job later; each figure of the large jobs is the median of
`MEDIAN_OF` runs in one process (this machine's run-to-run noise is ~20%), the others
the best of `REPEATS`.

The plan shuffles the updates once: the as-of join is two broadcast joins
(`frontier_harness.spark_impl.reclocking.as_of`), so the consolidation's `Exchange` is the only one,
as the sort's range partitioning is for the baseline; there is no second full shuffle
to save. The bindings are never shuffled: both broadcast sides (the key's levels and the
index) read each step's interval `[u(t-1), u(t))` off its own bindings, in one task each.
`tests/test_bench_spark.py` pins that plan; print it with
`reclock_job(n)._jdf.queryExecution().executedPlan()`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from frontier_harness.properties.bench import Figure, timed

FULL = 10_000_000
PER_BINDING = 100
REPEATS = 3
MEDIAN_OF = 5
# Both jobs run as a large job should: 8 shuffle partitions, whole-stage codegen on (the
# session's interpreted default is measured for small batches; see frontier_harness.spark_impl.session),
# and no partial aggregation before the shuffle: reclocked updates are nearly all
# distinct, so a map-side pre-aggregation only builds a hash table it cannot shrink.
LARGE_JOB = {
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.codegen.wholeStage": "true",
    "spark.sql.codegen.factoryMode": "FALLBACK",
    "spark.sql.execution.bypassPartialAggregation": "true",
}


def figures(scale: float) -> list[Figure]:
    large = max(10_000, int(FULL * scale))
    small = large // 10
    with session_conf(LARGE_JOB):
        small_job, large_job, sort_job, consolidate_job = (
            reclock_job(small),
            reclock_job(large),
            _updates(large, 1).orderBy("time"),
            consolidation_job(large),
        )
        for job in (small_job, large_job, sort_job, consolidate_job):
            _run(job)  # compiles each plan and warms the JVM's code for it
        mint_s, small_s = best(lambda: _run(_minted(large // PER_BINDING))), best(lambda: _run(small_job))
        large_s, consolidate_s, sort_s = interleaved_medians(
            [lambda: _run(large_job), lambda: _run(consolidate_job), lambda: _run(sort_job)]
        )
    shape = f"{large:,} updates, {2 * large // PER_BINDING:,} bindings"
    median = f"median of {MEDIAN_OF}"
    return [
        Figure(
            "consolidate_seconds",
            consolidate_s,
            "s",
            f"Spark's own groupBy(...).agg(sum) of the {large:,} update rows, {median}",
        ),
        Figure("sort_seconds", sort_s, "s", f"plain Spark sort of the {large:,} update rows, {median}"),
        Figure(
            "reclock_seconds",
            large_s,
            "s",
            f"R per IntoTime + as-of assignment + consolidation, {shape}, {median}",
            baseline="consolidate_seconds",
            goal="<= 1.5x Spark's consolidation",
        ),
        Figure("reclock_over_sort", large_s / sort_s, "x", "reclock_seconds / sort_seconds", goal="<= 2"),
        Figure("reclock_small_seconds", small_s, "s", f"the same at {small:,} updates"),
        Figure(
            "reclock_growth",
            large_s / small_s,
            "x",
            f"time at {large:,} / time at {small:,} updates",
            goal="<= 10 (linear)",
        ),
        Figure("mint_seconds", mint_s, "s", f"minting the {large // PER_BINDING:,} ticks into bindings"),
    ]


def best(run: Callable[[], None]) -> float:
    """The fastest of `REPEATS` wall-clock timings."""
    return min(timed(run) for _ in range(REPEATS))


def interleaved_medians(runs: list[Callable[[], None]]) -> list[float]:
    """The median of `MEDIAN_OF` wall-clock timings of each, run in turns so that all see the same machine;
    each turn starts one job later than the last, so that no job always runs after the same other."""
    times: list[list[float]] = [[] for _ in runs]
    for start in range(MEDIAN_OF):
        for i in [(start + j) % len(runs) for j in range(len(runs))]:
            times[i].append(timed(runs[i]))
    return [statistics.median(column) for column in times]


def consolidation_job(n: int):
    """Spark's own consolidation of the `n` updates: the least work a consolidated collection of them needs."""
    from pyspark.sql import functions as F

    updates = _updates(n, 1)
    return (
        updates.groupBy("history_id", "point", "data", "time")
        .agg(F.sum("diff").alias("diff"))
        .where(F.col("diff") != 0)
    )


@contextmanager
def session_conf(settings: dict) -> Iterator[None]:
    """The session's SQL settings changed for the duration, then restored."""
    from frontier_harness.spark_impl.session import spark

    conf = spark().conf
    previous = {key: conf.get(key) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            conf.set(key, value)


def _updates(n: int, point: int):
    """`n` updates at the offsets `0..n-1` in a scrambled order, of the one history, observed at `point`.

    The keys `(history_id, point)` are read off each row, as a real input's are: as constants, Spark
    folds them into both jobs (it drops them from the consolidation's grouping and joins the updates to
    the key's levels by a one-row nested loop), which no real input allows.
    """
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.session import spark

    scrambled, history_id = (F.col("id") * 7_919) % n, F.shiftright(F.col("id"), 62)  # ids < 2^62: 0
    return (
        spark()
        .range(n)
        .select(
            history_id.alias("history_id"),
            (history_id + point).alias("point"),
            F.col("id").alias("step"),
            (F.col("id") % 1_000).cast("string").alias("data"),
            scrambled.alias("time"),
            F.lit(1).cast("long").alias("diff"),
        )
    )


def _minted(ticks: int):
    """The remap after `ticks` mints (tick `k` binds the upper `{100k}`), observed at the point after the last one.

    Rows `(history_id, point, since, from_time, into_time, diff)`, since 0.
    """
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.reclocking import remap
    from frontier_harness.spark_impl.session import spark

    mints = (
        spark()
        .range(1, ticks + 1)
        .select(
            F.lit(0).cast("long").alias("history_id"),
            F.col("id").alias("step"),
            F.col("id").alias("tick"),
            F.array(F.col("id") * PER_BINDING).alias("upper"),
        )
    )
    history = spark().range(1).select(F.lit(0).cast("long").alias("history_id"))
    bindings = remap.mint(history, mints, F.lit(0).cast("long"))
    return remap.remap_at_points(bindings, _since(ticks + 1))


def _since(point: int):
    """The one history's since (0) at `point`: `(history_id, point, since)`, read off a row as a since is (not
    constants, which Spark folds into the plan, as it never can a real remap's)."""
    from frontier_harness.spark_impl.session import spark

    return spark().range(1).selectExpr("id AS history_id", f"id + {point} AS point", "id AS since")


def reclock_job(n: int):
    """Reclocking `n` updates against the remap minted by `n / 100` ticks, kept as input (`localCheckpoint`).

    Every offset `s < n` lies below the last binding, so each is reclocked to the
    tick `s // 100 + 1` and none stays pending.
    """
    from frontier_harness.spark_impl.reclocking.reclock import assign_total, reclocked_and_pending

    ticks = n // PER_BINDING
    remap = _minted(ticks).localCheckpoint()
    return reclocked_and_pending(assign_total(remap, _since(ticks + 1), _updates(n, ticks + 1)))


def _run(frame) -> None:
    frame.write.format("noop").mode("overwrite").save()
