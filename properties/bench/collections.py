"""Foundation figures: histories/s checked by the model, naively on Spark, and batched on Spark."""

from __future__ import annotations

from collections.abc import Sequence

from frontier_harness.properties.bench import Figure, timed
from frontier_harness.properties.checks.time.collections import observe
from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.source import RandomSource
from frontier_harness.properties.engine.suite import differential

UPDATES = 20


def figures(scale: float) -> list[Figure]:
    from frontier_harness.properties.adapters.spark import SparkImplementation

    impl = SparkImplementation()
    check = differential(observe, "observe_collections")
    source = RandomSource(42)
    batch = max(100, int(20_000 * scale))

    def draw(n):
        return [draw_collection_history(source, "total", min_updates=UPDATES, max_steps=10) for _ in range(n)]

    check(impl, draw(10))  # warm the session and the plan
    histories = draw(batch)
    model_s = timed(lambda: [observe(h) for h in histories])
    # The screening lane end to end: draw, model, one Spark job, compare.
    screening_s = timed(lambda: _assert_all_hold(check(impl, draw(batch))))
    naive = draw(5)

    def one_job_each() -> None:
        for h in naive:
            _assert_all_hold(check(impl, [h]))

    naive_s = timed(one_job_each)
    size = f"histories of {UPDATES}+ updates, total time"
    return [
        Figure("model_histories_per_s", len(histories) / model_s, "histories/s", size),
        Figure(
            "spark_naive_histories_per_s", len(naive) / naive_s, "histories/s", "one Spark job per history"
        ),
        Figure(
            "spark_batched_histories_per_s",
            batch / screening_s,
            "histories/s",
            f"screening lane, {batch} histories per job, draw+model+Spark+compare",
            baseline="spark_naive_histories_per_s",
            goal=">= 1000/s and >= 100x naive",
        ),
    ]


def _assert_all_hold(outcomes: Sequence) -> None:
    failing = [o for o in outcomes if not o.ok]
    if failing:
        raise AssertionError(f"benchmark found a disagreement: {failing[0].message}")
