"""Processor trials per minute: a user's processor under the stateful suite's `crash_invisible`.

- `processor_trials_per_minute`: histories of the stateful suite scaled to the processor example
  (`frontier_harness.streaming_job_example.processor_counts:factory`, a `transformWithStateInPandas`
  count with event-time timers), each a real query with its crashes and restarts, judged by
  `crash_invisible` (the trial, then the same batches run without a crash), after one warm-up trial.
- `processor_trials_per_minute.cold_python`: the same histories, the Python the JVM starts for the
  processor at each start (`warm_runner.USER_PYTHON`: the daemon of its workers, the worker that runs its
  `init` on the driver) started as Spark starts it, not forked warm. Wall-clock, so on a shared machine it
  moves with the load.
"""

from __future__ import annotations

from frontier_harness.properties.bench import Figure, timed
from frontier_harness.properties.engine.source import RandomSource

PROCESSOR = "frontier_harness.streaming_job_example.processor_counts:factory"
SEEDS = 30_000  # histories drawn from seeds SEEDS, SEEDS + 1, ...


def trials_per_minute(histories: int) -> tuple[float, float]:
    """`histories` trials of the processor example judged by `crash_invisible`, per minute (and seconds)."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.event_time.stateful import SUITE

    impl = load_job(PROCESSOR, stateful=True)
    prop = SUITE.for_implementation(impl).property("crash_invisible")
    list(prop.check(impl, [prop.draw(RandomSource(SEEDS - 1), "partitioned")]))  # warm
    drawn = [prop.draw(RandomSource(SEEDS + i), "partitioned") for i in range(histories)]
    outcomes: list = []
    seconds = timed(lambda: outcomes.extend(prop.check(impl, drawn)))
    assert all(o.ok for o in outcomes), [o.message for o in outcomes if not o.ok][:1]
    return histories / (seconds / 60), seconds


def figures(scale: float) -> list[Figure]:
    from frontier_harness.spark_impl.streaming import warm_runner

    histories = max(1, round(6 * scale))
    rate, seconds = trials_per_minute(histories)
    with warm_runner.cold(*warm_runner.USER_PYTHON):
        cold, cold_seconds = trials_per_minute(histories)
    return [
        Figure(
            "processor_trials_per_minute",
            rate,
            "trials/min",
            f"{histories} stateful histories with --job {PROCESSOR} in {seconds:.0f} s, judged by "
            "crash_invisible (each trial and its run without a crash)",
        ),
        Figure(
            "processor_trials_per_minute.cold_python",
            cold,
            "trials/min",
            f"the same {histories} histories in {cold_seconds:.0f} s, the processor's daemon and init worker "
            "started cold by Spark at each start, not forked warm",
            baseline="processor_trials_per_minute",
        ),
    ]
