"""TTL figures: Spark compaction throughput against a plain Spark sort of the same rows, same run.

N rows (10M at scale 1.0) generated in Spark with `spark.range`: keys spread over
N/2 distinct keys in two runs (so half the rows are older versions), half of the
newest versions expired at compaction's now. The compaction is
`spark_impl.ttl_store.compact_frame` (window newest-per-key, TTL filter,
tombstone rule) with a last-run output; the baseline sorts the same rows by key.
Both run to the `noop` sink, which executes the whole plan and writes nothing.
"""

from __future__ import annotations

from properties.bench import Figure, timed

NOW = 1_000


def figures(scale: float) -> list[Figure]:
    from pyspark.sql import functions as F

    from spark_impl.session import spark
    from spark_impl.ttl_store import NEVER, compact_frame

    n = max(10_000, int(10_000_000 * scale))
    rows = (
        spark()
        .range(n)
        .select(
            F.sha2(F.format_string("%d", F.col("id") % (n // 2)).cast("binary"), 256)
            .cast("binary")
            .alias("key"),
            F.col("id").cast("string").cast("binary").alias("value"),
            (F.col("id") + 1).alias("seq"),
            F.lit(0).alias("flags"),
            (F.col("id") % 100).alias("create_ts"),
            F.when(F.col("id") % 2 == 0, F.lit(NOW)).otherwise(F.lit(NEVER)).alias("expire_ts"),
        )
        .withColumn("now", F.lit(NOW))
        .withColumn("last", F.lit(True))
    )
    compacted = compact_frame(rows, ())
    sort = rows.orderBy("key")
    run = lambda df: df.write.format("noop").mode("overwrite").save()
    run(compact_frame(rows.limit(1000), ()))  # warm the session and the plan
    sort_s = timed(lambda: run(sort))
    compact_s = timed(lambda: run(compacted))
    kept = compacted.count()
    size = f"{n:,} rows, {n // 2:,} keys, half the newest versions expired"
    return [
        Figure("ttl_plain_sort_rows_per_s", n / sort_s, "rows/s", f"orderBy(key) of the same rows; {size}"),
        Figure(
            "ttl_compaction_rows_per_s",
            n / compact_s,
            "rows/s",
            f"{size}; {kept:,} rows kept (last run)",
            baseline="ttl_plain_sort_rows_per_s",
        ),
    ]
