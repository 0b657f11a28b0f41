"""Structured Streaming figures: real streaming trials per minute, and what validating a checkpoint costs.

- `streaming_trials_per_minute`: generated histories (`frontier_harness.properties.checks.streaming.strategies.streaming`, each a
  real query with its crashes and restarts) run by `frontier_harness.spark_impl.streaming.trial` in one session,
  after one warm-up trial; wall-clock, so on a shared machine it moves with the load.
- `streaming_job_trials_per_minute`: the same, with the worked example job
  (`frontier_harness.streaming_job_example:factory`, `--job`) in place of our sink, judged by `exactly_once`:
  its reads of the job's rows and the oracle's batch job included;
- `streaming_floor_trials_per_minute` and `streaming_over_floor_s.*`: Spark's own floor for the job's
  histories, which `streaming_job_trials_per_minute` is a fraction of (its ratio), and where the rest
  goes, from the spans the trials record (`frontier_harness.properties.bench.floor`);
- `validate_checkpoint_s_per_1000_batches`: reading a checkpoint of Kafka-like offsets (3 topics
  x 4 partitions, commits, a file sink's log) and checking the laws, per 1,000 batches, against
  `read_checkpoint_s_per_1000_batches`, reading the same files into a history without the laws.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from frontier_harness.properties.bench import Figure, floor, timed
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.streaming.checkpoint_log.reader import read_checkpoint
from frontier_harness.properties.checks.streaming.strategies.streaming import draw_streaming_history
from frontier_harness.properties.engine.source import RandomSource

META = '{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}'


def write_log(root: Path, batches: int) -> Path:
    """A lawful checkpoint of `batches` batches: three Kafka topics of four partitions, a file sink."""
    for name in ("offsets", "commits", "sink/_spark_metadata"):
        (root / name).mkdir(parents=True)
    (root / "metadata").write_text('{"id":"bench"}')
    for b in range(batches):
        offsets = {topic: {str(p): b * (p + 1) for p in range(4)} for topic in ("a", "b", "c")}
        (root / "offsets" / str(b)).write_text(f"v1\n{META}\n{json.dumps(offsets)}")
        (root / "commits" / str(b)).write_text('v1\n{"nextBatchWatermarkMs":0}')
        (root / "sink" / "_spark_metadata" / str(b)).write_text(
            f'v1\n{{"path":"file:///s/{b}","action":"add"}}'
        )
    return root


def trials_per_minute(histories: int) -> tuple[float, float]:
    from frontier_harness.spark_impl.streaming.trial import run_trials

    run_trials([draw_streaming_history(RandomSource(10_000), "partitioned", max_steps=2)])  # warm
    drawn = [draw_streaming_history(RandomSource(seed), "partitioned") for seed in range(histories)]
    seconds = timed(lambda: run_trials(drawn))
    return histories / (seconds / 60), seconds


EXAMPLE_JOB = "frontier_harness.streaming_job_example:factory"


def against_floor(histories: int) -> floor.Breakdown:
    """`histories` trials of the example job judged by `exactly_once`, and at Spark's floor."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.spark_impl.streaming.trial import run_trials

    check = get_suite("streaming").property("exactly_once").check
    impl = load_job(EXAMPLE_JOB)
    warm = [draw_streaming_history(RandomSource(10_001), "partitioned", max_steps=2)]
    drawn = [draw_streaming_history(RandomSource(seed), "partitioned") for seed in range(histories)]
    at_floor = lambda hs: run_trials(hs, job=EXAMPLE_JOB, floor=True)  # noqa: E731
    return floor.measure(lambda hs: check(impl, hs), at_floor, warm, drawn)


def figures(scale: float) -> list[Figure]:
    batches = max(1000, int(10_000 * scale))
    root = write_log(Path(tempfile.mkdtemp(prefix="fh-bench-checkpoint-")), batches)
    read: dict[str, Any] = {}
    read_s = timed(lambda: read.update(log=read_checkpoint(root, root / "sink")))
    laws_s = timed(lambda: read.update(broken=check_log(read["log"])))
    assert read["broken"] == [], read["broken"][:3]
    histories = max(1, round(12 * scale))
    rate, seconds = trials_per_minute(histories)
    breakdown = against_floor(histories)
    job_rate, job_seconds = floor.judged_rate(breakdown)
    per_1000 = 1000 / batches
    return [
        Figure(
            "streaming_trials_per_minute",
            rate,
            "trials/min",
            f"{histories} generated histories in {seconds:.0f} s, waves of 6 queries, one session",
        ),
        Figure(
            "streaming_job_trials_per_minute",
            job_rate,
            "trials/min",
            f"{histories} histories with --job {EXAMPLE_JOB} in {job_seconds:.0f} s, judged (reads, oracle)",
            baseline=floor.floor_name("streaming"),
            goal=">= 15 (check --job --profile ci: 60 trials in 4 min); >= 0.70x the floor",
        ),
        Figure(
            "read_checkpoint_s_per_1000_batches",
            read_s * per_1000,
            "s",
            f"{batches} batches: offsets (3 topics x 4 partitions), commits, sink log, read into a history",
        ),
        Figure(
            "validate_checkpoint_s_per_1000_batches",
            (read_s + laws_s) * per_1000,
            "s",
            f"read + laws (frontiers in the model's order); laws alone {laws_s * per_1000:.2f} s",
            baseline="read_checkpoint_s_per_1000_batches",
        ),
        *floor.figures("streaming", breakdown),
    ]
