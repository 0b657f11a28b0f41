"""Reclocking figures: N source updates against N/100 bindings on Spark, against a plain sort of the same rows.

Rows are generated in Spark (`spark.range`), never in Python: updates at Total
offsets in a scrambled order, and a remap minted from N/100 ticks whose source
upper advances by 100 offsets a tick. The reclocking job mints the remap, assigns
every update by the as-of join and consolidates the reclocked collection; the
baseline sorts the same update rows by time. Both are written to Spark's `noop`
sink, with the same shuffle parallelism, in the same run.
"""

from __future__ import annotations

from properties.bench import Figure, timed

FULL = 10_000_000
PER_BINDING = 100
PARALLELISM = "8"


def figures(scale: float) -> list[Figure]:
    from spark_impl.session import spark

    session = spark()
    previous = session.conf.get("spark.sql.shuffle.partitions")
    session.conf.set("spark.sql.shuffle.partitions", PARALLELISM)
    try:
        large = max(10_000, int(FULL * scale))
        small = large // 10
        _run(_reclock_job(small // 10))  # warm the session and the plans
        small_s = timed(lambda: _run(_reclock_job(small)))
        large_s = timed(lambda: _run(_reclock_job(large)))
        sort_s = timed(lambda: _run(_updates(large).orderBy("time")))
    finally:
        session.conf.set("spark.sql.shuffle.partitions", previous)
    shape = f"{large:,} updates, {large // PER_BINDING:,} ticks"
    return [
        Figure("sort_seconds", sort_s, "s", f"plain Spark sort of the {large:,} update rows"),
        Figure("reclock_seconds", large_s, "s", f"mint + as-of assignment + consolidation, {shape}",
               baseline="sort_seconds", goal="<= 2x the sort"),
        Figure("reclock_small_seconds", small_s, "s", f"the same at {small:,} updates"),
        Figure("reclock_growth", large_s / small_s, "x", f"time at {large:,} / time at {small:,} updates",
               goal="~10 (linear)"),
    ]


def _updates(n: int):
    from pyspark.sql import functions as F

    from spark_impl.session import spark

    scrambled = (F.col("id") * 7_919) % n
    return spark().range(n).select(
        F.lit(0).cast("long").alias("history_id"), F.lit(1).cast("long").alias("point"), F.col("id").alias("step"),
        (F.col("id") % 1_000).cast("string").alias("data"), scrambled.alias("time"), F.lit(1).cast("long").alias("diff"),
    )


def _reclock_job(n: int):
    from pyspark.sql import functions as F

    from spark_impl import remap
    from spark_impl.reclock import assign_total, reclocked_and_pending
    from spark_impl.session import spark

    ticks = n // PER_BINDING
    mints = spark().range(1, ticks + 1).select(
        F.lit(0).cast("long").alias("history_id"), F.col("id").alias("step"), F.col("id").alias("tick"),
        F.array(F.col("id") * PER_BINDING).alias("upper"),
    )
    histories = spark().range(1).select(F.lit(0).cast("long").alias("history_id"))
    bindings = remap.mint(histories, mints, F.lit(0).cast("long"))
    sinces = histories.select("history_id", F.lit(ticks + 1).cast("long").alias("point"), F.lit(0).cast("long").alias("since"))
    at_point = remap.remap_at_points(bindings, sinces)
    updates = _updates(n).withColumn("point", F.lit(ticks + 1).cast("long"))
    return reclocked_and_pending(assign_total(at_point, sinces, updates))


def _run(frame) -> None:
    frame.write.format("noop").mode("overwrite").save()
