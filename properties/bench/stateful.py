"""Stateful trials per minute: the worked example's windowed count under the stateful suite's trials.

- `stateful_trials_per_minute`: generated histories of the stateful suite
  (`frontier_harness.properties.checks.event_time.strategies.stateful`, each a real query over keyed, timed
  records with its crashes and restarts) with the example job
  (`frontier_harness.streaming_job_example.windowed_counts:factory`), judged by `exactly_once` (the
  trials, the job's reads and the oracle's batch job), after one warm-up trial; against
  `stateful_row_wise_trials_per_minute`, the same number of histories of the streaming suite with its
  row-wise example job (what state, watermarks and the oracle's windows cost); and against
  `stateful_trials_per_minute.cold_runners`, the same histories with Spark's source runners started as Spark
  starts them, not forked warm (`frontier_harness.spark_impl.streaming.warm_runner`). Wall-clock,
  so on a shared machine it moves with the load.
- `stateful_floor_trials_per_minute` and `stateful_over_floor_s.*`: Spark's own floor for the same
  histories, which `stateful_trials_per_minute` is a fraction of (its ratio), and where the rest goes,
  from the spans the trials record (`frontier_harness.properties.bench.floor`).
"""

from __future__ import annotations

from frontier_harness.properties.bench import Figure, floor, timed
from frontier_harness.properties.engine.source import RandomSource

EXAMPLE = "frontier_harness.streaming_job_example.windowed_counts:factory"
ROW_WISE = "frontier_harness.streaming_job_example:factory"
SEEDS = 20_000  # histories drawn from seeds SEEDS, SEEDS + 1, ...


def trials_per_minute(suite_name: str, job: str, histories: int) -> tuple[float, float]:
    """Histories of `suite_name` with `job`, judged by `exactly_once`, per minute (and the seconds taken)."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.registry import get_suite

    impl = load_job(job, stateful=suite_name == "stateful")
    prop = get_suite(suite_name).property("exactly_once")
    list(
        prop.check(impl, [prop.draw(RandomSource(SEEDS - 1), "partitioned")])
    )  # warm (its trials run as read)
    drawn = [prop.draw(RandomSource(SEEDS + i), "partitioned") for i in range(histories)]
    outcomes: list = []
    seconds = timed(lambda: outcomes.extend(prop.check(impl, drawn)))
    assert all(o.ok for o in outcomes), [o.message for o in outcomes if not o.ok][:1]
    return histories / (seconds / 60), seconds


def against_floor(histories: int) -> floor.Breakdown:
    """`histories` stateful trials of the example job judged by `exactly_once`, and at Spark's floor."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.spark_impl.streaming.trial import run_trials

    impl = load_job(EXAMPLE, stateful=True)
    prop = get_suite("stateful").property("exactly_once")
    warm = [prop.draw(RandomSource(SEEDS - 1), "partitioned")]
    drawn = [prop.draw(RandomSource(SEEDS + i), "partitioned") for i in range(histories)]
    at_floor = lambda hs: run_trials(hs, job=EXAMPLE, stateful=True, floor=True)  # noqa: E731
    return floor.measure(lambda hs: prop.check(impl, hs), at_floor, warm, drawn)


def figures(scale: float) -> list[Figure]:
    from frontier_harness.spark_impl.streaming import warm_runner

    histories = max(1, round(12 * scale))
    breakdown = against_floor(histories)
    rate, seconds = floor.judged_rate(breakdown)
    with warm_runner.cold():
        cold, cold_seconds = trials_per_minute("stateful", EXAMPLE, histories)
    base, base_seconds = trials_per_minute("streaming", ROW_WISE, histories)
    return [
        Figure(
            "stateful_row_wise_trials_per_minute",
            base,
            "trials/min",
            f"{histories} streaming histories with --job {ROW_WISE} in {base_seconds:.0f} s, judged",
        ),
        Figure(
            "stateful_trials_per_minute",
            rate,
            "trials/min",
            f"{histories} stateful histories with --job {EXAMPLE} in {seconds:.0f} s, judged (reads, oracle)",
            baseline=floor.floor_name("stateful"),
            goal=">= 15 (check --suite stateful --profile ci: 60 trials in 4 min); >= 0.70x the floor",
        ),
        Figure(
            "stateful_trials_per_minute.cold_runners",
            cold,
            "trials/min",
            f"the same {histories} histories in {cold_seconds:.0f} s, each query start's source runner started "
            "cold by Spark, not forked warm",
            baseline="stateful_trials_per_minute",
        ),
        *floor.figures("stateful", breakdown),
    ]
