"""Killed trials per minute: the stateful suite's SIGKILL trials, each a driver with a JVM of its own killed.

- `killed_trials_per_minute`: the stateful suite's directed SIGKILL histories of the worked example
  (`frontier_harness.streaming_job_example.windowed_counts:factory`), one a crash point, each a query whose
  batch runs in a killable driver (`frontier_harness.spark_impl.streaming.killable`) SIGKILLed at the point
  and restarted from its checkpoint, judged by `exactly_once`, after one warm-up trial. The driver is forked
  warm, and so is the Python its JVM starts, in the driver's process group.
- `killed_trials_per_minute.cold_python`: the same histories, the killable driver and the Python its JVM
  starts (our source's runner, Spark's daemons) started cold. Wall-clock, so on a shared machine it moves
  with the load.
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.streaming import CrashPoint
from frontier_harness.properties.bench import Figure, timed
from frontier_harness.properties.engine.source import RandomSource

EXAMPLE = "frontier_harness.streaming_job_example.windowed_counts:factory"
SEEDS = 40_000  # each round's histories drawn from seeds SEEDS, SEEDS + 1, ...


def trials_per_minute(rounds: int) -> tuple[float, float]:
    """`rounds` times one SIGKILL trial a crash point, judged by `exactly_once`, per minute (and seconds)."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.event_time import stateful
    from frontier_harness.properties.checks.event_time.stateful import SUITE

    impl = load_job(EXAMPLE, stateful=True)
    prop = SUITE.property("exactly_once")
    killed = [
        draw
        for name, draw in stateful.directed(stateful.EXAMPLE_PLAN, kill=True).items()
        if "SIGKILL" in name
    ]
    assert len(killed) == len(CrashPoint), killed
    list(prop.check(impl, [killed[0](RandomSource(SEEDS - 1), "partitioned")]))  # warm
    drawn = [draw(RandomSource(SEEDS + i), "partitioned") for i in range(rounds) for draw in killed]
    outcomes: list = []
    seconds = timed(lambda: outcomes.extend(prop.check(impl, drawn)))
    assert all(o.ok for o in outcomes), [o.message for o in outcomes if not o.ok][:1]
    assert all(any("SIGKILL" in event for event in o.reached) for o in outcomes), "a kill was not observed"
    return len(drawn) / (seconds / 60), seconds


def figures(scale: float) -> list[Figure]:
    from frontier_harness.spark_impl.streaming import killable, warm_runner

    rounds = max(1, round(2 * scale))
    rate, seconds = trials_per_minute(rounds)
    with warm_runner.cold(killable.KILLABLE):
        cold, cold_seconds = trials_per_minute(rounds)
    trials = rounds * len(CrashPoint)
    return [
        Figure(
            "killed_trials_per_minute",
            rate,
            "trials/min",
            f"{trials} SIGKILL trials of the stateful suite with --job {EXAMPLE} in {seconds:.0f} s, each "
            "killed at its crash point and restarted, judged by exactly_once",
        ),
        Figure(
            "killed_trials_per_minute.cold_python",
            cold,
            "trials/min",
            f"the same {trials} trials in {cold_seconds:.0f} s, each killable driver and the Python its JVM "
            "starts started cold, not forked warm",
            baseline="killed_trials_per_minute",
        ),
    ]
