"""Screening figures: every Spark suite's screening rate against the model-only rate of the same histories.

Per suite (its first property, on its first domain): 20,000 histories
(`--scale` shrinks the job, not the meaning) drawn once by the suite's own
generator from a seeded source, as the screening lane draws them; then the
property's check with the model as the implementation (the model-only rate:
draw + model + compare) and with Spark (the screening rate: draw + model + one
Spark job + compare), in turns, after one small warm-up job. Both rates count
the same drawing time. A disagreement fails the benchmark: it is a bug, not a
figure.
"""

from __future__ import annotations

import random
import time

from frontier_harness.properties.bench import Figure
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.source import RecordingSource
from frontier_harness.properties.engine.suite import Property, Suite

HISTORIES = 20_000
# Real queries, seconds a history, not screened: `bench --only streaming` and `--only stateful` report trials a
# minute; ttl_spark_state's batches are spaced in real time (twice its TTL), so a rate would measure the waits.
TRIALS = ("streaming", "stateful", "ttl_spark_state")


def figures(scale: float) -> list[Figure]:
    from frontier_harness.properties.adapters.model import ModelImplementation
    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.properties.checks.registry import SUITES

    model, spark = ModelImplementation(), SparkImplementation()
    spark.prepare()
    out = []
    for suite in SUITES.values():
        if suite.name in TRIALS:
            continue
        if suite.default_impl == "spark" and suite.unsupported(spark, "spark") is None:
            out += _suite_figures(suite, model, spark, max(200, int(HISTORIES * scale)))
    return out


def _suite_figures(suite: Suite, model: Implementation, spark: Implementation, n: int) -> list[Figure]:
    prop, domain = suite.properties[0], suite.domains[0]
    _check(prop, spark, _draw(prop, domain, 50, seed=1)[0])  # warm the session and the plans
    histories, draw_s = _draw(prop, domain, n, seed=0)
    model_s = draw_s + _timed_check(prop, model, histories)
    spark_s = draw_s + _timed_check(prop, spark, histories)
    note = f"{prop.name} on {domain}, {n} histories in one job, draw+model+Spark+compare"
    return [
        Figure(f"model_histories_per_s.{suite.name}", n / model_s, "histories/s", f"{prop.name} on {domain}"),
        Figure(
            f"screening_histories_per_s.{suite.name}",
            n / spark_s,
            "histories/s",
            note,
            baseline=f"model_histories_per_s.{suite.name}",
            goal=">= 1000/s and >= 0.5x the model",
        ),
    ]


def _draw(prop: Property, domain: str, n: int, seed: int) -> tuple[list, float]:
    rng, started = random.Random(seed), time.perf_counter()
    histories = [prop.draw(RecordingSource(rng), domain) for _ in range(n)]
    return histories, time.perf_counter() - started


def _timed_check(prop: Property, impl: Implementation, histories: list) -> float:
    started = time.perf_counter()
    _check(prop, impl, histories)
    return time.perf_counter() - started


def _check(prop: Property, impl: Implementation, histories: list) -> None:
    failing = [o for o in prop.check(impl, histories) if not o.ok]
    if failing:
        raise AssertionError(f"benchmark found a disagreement: {failing[0].message}")
