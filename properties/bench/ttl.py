"""TTL figures, each against an in-run baseline.

Compaction: N rows (10M at scale 1.0) generated in Spark with `spark.range`:
keys spread over N/2 distinct keys in two runs (so half the rows are older
versions), half of the newest versions expired at compaction's now. The
compaction is `frontier_harness.spark_impl.ttl.compaction.compact_frame` (window newest-per-key,
TTL filter, tombstone rule) with a last-run output; the baseline sorts the same
rows by key. Both run to the `noop` sink, which executes the whole plan and
writes nothing.

Store histories (the ttl suite's Spark observer, `frontier_harness.spark_impl.ttl.store_observer`):
H generated histories (2,000 at scale 1.0) in one call, whose stores run in
lockstep so that a round's compactions share a Spark job; the baseline is the
same observer called with one history at a time (its first H/100 histories, at
least 3).
"""

from __future__ import annotations

from frontier_harness.properties.bench import Figure, timed

NOW = 1_000


def figures(scale: float) -> list[Figure]:
    return _compaction_figures(scale) + _store_figures(scale)


def _compaction_figures(scale: float) -> list[Figure]:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from frontier_harness.spark_impl.session import spark
    from frontier_harness.spark_impl.ttl.compaction import compact_frame
    from frontier_harness.spark_impl.ttl.row import NEVER

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

    def run(frame: DataFrame) -> None:
        frame.write.format("noop").mode("overwrite").save()

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


def _store_figures(scale: float) -> list[Figure]:
    from frontier_harness.properties.checks.ttl.strategies.store import draw_ttl_history
    from frontier_harness.properties.engine.source import RandomSource
    from frontier_harness.spark_impl.ttl.store_observer import observe_ttl

    source = RandomSource(0)
    histories = [draw_ttl_history(source, "total") for _ in range(max(30, int(2000 * scale)))]
    alone = histories[: max(3, len(histories) // 100)]
    observe_ttl(None, histories[:4])  # warm the session and the plans
    alone_s = timed(lambda: [observe_ttl(None, [h]) for h in alone])
    batch_s = timed(lambda: observe_ttl(None, histories))
    return [
        Figure(
            "ttl_store_one_history_a_call_per_s",
            len(alone) / alone_s,
            "histories/s",
            f"{len(alone)} histories, one observe_ttl call each",
        ),
        Figure(
            "ttl_store_batched_histories_per_s",
            len(histories) / batch_s,
            "histories/s",
            f"{len(histories):,} histories in one call (stores in lockstep)",
            baseline="ttl_store_one_history_a_call_per_s",
        ),
    ]
