"""Reclocking figures: N source updates against N/100 bindings on Spark, against a plain sort of the same rows.

Rows are generated in Spark (`spark.range`), never in Python: updates at Total
offsets in a scrambled order, and a remap minted from N/100 ticks whose source
upper advances by 100 offsets a tick (its 2N/100 bindings are minted once and kept
as the job's input, like the updates; minting is its own figure). The reclocking
job accumulates `R` per IntoTime, assigns every update by the as-of join and
consolidates the reclocked collection; the baseline sorts the same update rows by
time. Both are written to Spark's `noop` sink under the same settings, interleaved,
and each figure is the best of `REPEATS` runs (this machine's run-to-run noise is
~20%).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from properties.bench import Figure, timed

FULL = 10_000_000
PER_BINDING = 100
REPEATS = 3
# Both jobs run as a large job should: 8 shuffle partitions, whole-stage codegen on (the
# session's interpreted default is measured for small batches; see spark_impl.session),
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
        jobs = {"warm": _reclock_job(small // 10), "small": _reclock_job(small), "large": _reclock_job(large)}
        _run(jobs["warm"])  # compiles the plans once
        _run(_updates(small // 10).orderBy("time"))
        mint_s = best(lambda: _run(_minted(large // PER_BINDING)))
        small_s = best(lambda: _run(jobs["small"]))
        large_s, sort_s = best(lambda: _run(jobs["large"])), best(lambda: _run(_updates(large).orderBy("time")))
    shape = f"{large:,} updates, {2 * large // PER_BINDING:,} bindings"
    return [
        Figure("sort_seconds", sort_s, "s", f"plain Spark sort of the {large:,} update rows"),
        Figure("reclock_seconds", large_s, "s", f"R per IntoTime + as-of assignment + consolidation, {shape}",
               baseline="sort_seconds", goal="<= 2x the sort"),
        Figure("reclock_small_seconds", small_s, "s", f"the same at {small:,} updates"),
        Figure("reclock_growth", large_s / small_s, "x", f"time at {large:,} / time at {small:,} updates",
               goal="<= 10 (linear)"),
        Figure("mint_seconds", mint_s, "s", f"minting the {large // PER_BINDING:,} ticks into bindings"),
    ]


def best(run: Callable[[], None]) -> float:
    """The fastest of `REPEATS` wall-clock timings."""
    return min(timed(run) for _ in range(REPEATS))


@contextmanager
def session_conf(settings: dict) -> Iterator[None]:
    """The session's SQL settings changed for the duration, then restored."""
    from spark_impl.session import spark

    conf = spark().conf
    previous = {key: conf.get(key) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            conf.set(key, value)


def _updates(n: int):
    from pyspark.sql import functions as F

    from spark_impl.session import spark

    scrambled = (F.col("id") * 7_919) % n
    return spark().range(n).select(
        F.lit(0).cast("long").alias("history_id"), F.lit(1).cast("long").alias("point"), F.col("id").alias("step"),
        (F.col("id") % 1_000).cast("string").alias("data"), scrambled.alias("time"), F.lit(1).cast("long").alias("diff"),
    )


def _minted(ticks: int):
    """The remap at the end of `ticks` mints, its since 0: `(history_id, point, since, from_time, into_time, diff)`."""
    from pyspark.sql import functions as F

    from spark_impl import remap
    from spark_impl.session import spark

    mints = spark().range(1, ticks + 1).select(
        F.lit(0).cast("long").alias("history_id"), F.col("id").alias("step"), F.col("id").alias("tick"),
        F.array(F.col("id") * PER_BINDING).alias("upper"),
    )
    history = spark().range(1).select(F.lit(0).cast("long").alias("history_id"))
    bindings = remap.mint(history, mints, F.lit(0).cast("long"))
    return remap.remap_at_points(bindings, _since(history))


def _since(history):
    from pyspark.sql import functions as F

    return history.select("history_id", F.lit(1).cast("long").alias("point"), F.lit(0).cast("long").alias("since"))


def _reclock_job(n: int):
    """Reclocking `n` updates against the minted remap, kept as input (`localCheckpoint`)."""
    from spark_impl.reclock import assign_total, reclocked_and_pending
    from spark_impl.session import spark

    remap = _minted(n // PER_BINDING).localCheckpoint()
    sinces = _since(spark().range(1).selectExpr("0L AS history_id"))
    return reclocked_and_pending(assign_total(remap, sinces, _updates(n)))


def _run(frame) -> None:
    frame.write.format("noop").mode("overwrite").save()
