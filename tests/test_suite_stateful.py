"""The stateful suite: its judges on written observations, the refusals, and jobs written as a user would
(`tests/jobs/stateful.py`) through the suite's own search and shrinking on real trials."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.model.event_time.stateful import StatefulPlan, Window
from frontier_harness.properties.checks.event_time import stateful
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.profiles import PROFILES
from tests.test_suite_streaming import observed

SUITE = get_suite("stateful")
S = 1_000
P = 2147483647
UPDATE = StatefulPlan("aggregation", (5 * S,), Window(10 * S), ("key",), "update", 5 * S)
APPEND = attrs.evolve(UPDATE, output_mode="append")


def history(*actions: tuple) -> History:
    return History("partitioned", tuple(Action(name, args) for name, args in actions))


def produce(data: str, t: int, key: str = "a", partition: int = 0) -> tuple:
    return ("produce", {"partition": partition, "key": key, "event_time": t, "data": data})


TRIGGER, RESTART = ("trigger", {}), ("restart", {})


def crash(point: str) -> tuple:
    return ("trigger", {"fault": point})


class Impl:
    """What the judges read of an implementation: the plan, the window column, and the oracle's rows."""

    window_column = "window"

    def __init__(self, plan: StatefulPlan, outputs: dict | None = None):
        self.plan, self.outputs = plan, outputs or {}

    def stateful_outputs(self, frames):
        return [self.outputs[f] for f in frames]


def trial_step(step: int, offsets: list, commits: list, watermarks: list, rows: list, runs=(0,)) -> dict:
    """One observed step of a stateful trial: the offset log (partition 0's end offset per batch), its
    watermarks, the commits and the job's rows."""
    return observed(
        step,
        offsets=[(b, ((0, 0, end), (1, P, 0))) for b, end in offsets],
        commits=commits,
        offset_metadata=[(b, w, 0, ()) for b, w in watermarks],
        commit_metadata=[],
        runs=[(r,) for r in runs],
        job_rows=rows,
    )


def window_row(start: int, count: int, key: str = "a") -> tuple:
    return (("count", count), ("key", key), ("window", (("end", start + 10 * S), ("start", start))))


ONE = history(produce("r0", 12 * S), TRIGGER)
FRAME = (("a", 12 * S, "r0", 0, 0),)


def test_exactly_once_is_transform_over_what_the_model_keeps_and_names_doubled_rows():
    impl = Impl(UPDATE, {FRAME: {window_row(10 * S, 1): 1}})
    good = trial_step(1, [(0, 1)], [0], [(0, 0)], [(window_row(10 * S, 1), 1)])
    assert stateful.exactly_once(impl, [ONE], [good])[0].ok
    twice = trial_step(1, [(0, 1)], [0], [(0, 0)], [(window_row(10 * S, 1), 2)])
    outcome = stateful.exactly_once(impl, [ONE], [twice])[0]
    assert not outcome.ok and outcome.step == 1
    doubled = (
        "doubled [{count=1, key='a', window=[10000, 20000)} (window [10000, 20000), counting batches [0];"
    )
    assert doubled + " held 2x, expected 1x)]" in outcome.message
    lost = stateful.exactly_once(impl, [ONE], [trial_step(1, [(0, 1)], [0], [(0, 0)], [])])[0]
    assert (
        "missing [{count=1, key='a', window=[10000, 20000)} (window [10000, 20000), counting batches [0])]"
        in (lost.message)
    )


def test_exactly_once_first_holds_the_journaled_watermarks_to_the_models():
    h = history(produce("r0", 12 * S), TRIGGER, produce("r1", 30 * S), TRIGGER)
    impl = Impl(UPDATE, {})
    wrong = trial_step(1, [(0, 1)], [0], [(0, 0)], []) | trial_step(
        3, [(0, 1), (1, 2)], [0, 1], [(0, 0), (1, 6 * S)], []
    )
    outcome = stateful.exactly_once(impl, [h], [wrong])[0]
    assert (
        not outcome.ok
        and "offsets/1 journals batchWatermarkMs 6000, the model's E(1) is 7000" in outcome.message
    )


def test_append_mode_expects_only_the_windows_complete_by_the_last_committed_batch():
    h = history(produce("r0", 12 * S), TRIGGER, produce("r1", 30 * S), TRIGGER)
    two = trial_step(3, [(0, 1), (1, 2), (2, 2)], [0, 1, 2], [(0, 0), (1, 7 * S), (2, 25 * S)], [])
    frames = {FRAME: {window_row(10 * S, 1): 1}}
    outcome = stateful.exactly_once(
        Impl(APPEND, frames), [h], [trial_step(1, [(0, 1)], [0], [(0, 0)], []) | two]
    )
    assert "missing [{count=1, key='a', window=[10000, 20000)}" in outcome[0].message  # complete in batch 2
    emitted = {**two, (3, "job_rows"): frozenset({(window_row(10 * S, 1), 1)})}
    ok = stateful.exactly_once(
        Impl(APPEND, frames), [h], [trial_step(1, [(0, 1)], [0], [(0, 0)], []) | emitted]
    )
    assert ok[0].ok, ok[0].message


def test_lateness_kept_names_a_record_within_the_promise_that_the_watermark_drops():
    promise = attrs.evolve(UPDATE, delays=(1 * S,), lateness=10 * S)
    h = history(
        produce("r0", 35 * S), TRIGGER, produce("r1", 29 * S), TRIGGER
    )  # [20 s, 30 s) ends below 34 s
    obs = trial_step(1, [(0, 1)], [0], [(0, 0)], []) | trial_step(
        3, [(0, 1), (1, 1), (2, 2)], [0, 1, 2], [(0, 0), (1, 34 * S), (2, 34 * S)], []
    )
    outcome = stateful.lateness_kept(Impl(promise), [h], [obs])[0]
    assert (
        not outcome.ok
        and "record r1" in outcome.message
        and "promised lateness of 10000 ms" in outcome.message
    )
    kept = attrs.evolve(UPDATE, delays=(1 * S,), lateness=1 * S)  # promises its own 1 s delay
    assert stateful.lateness_kept(Impl(kept), [h], [obs])[0].ok


def test_state_bounded_fails_a_key_without_event_time_and_complete_windows_do_not_apply_to_update_mode():
    per_key = StatefulPlan("aggregation", (5 * S,), None, ("key",), "update", 5 * S)
    outcome = stateful.state_bounded(Impl(per_key), [ONE], [{}])[0]
    assert (
        not outcome.ok
        and "state grows without bound" in outcome.message
        and "its key (key)" in outcome.message
    )
    assert stateful.state_bounded(Impl(UPDATE), [ONE], [{}])[0].ok
    windows = SUITE.property("complete_windows_emitted")
    assert (
        "update mode" in windows.not_applicable(Impl(UPDATE)) and windows.not_applicable(Impl(APPEND)) is None
    )


def test_the_hard_cases_depend_on_the_plan_and_small_histories_reach_each():
    assert stateful.LATE not in stateful.required_events(attrs.evolve(UPDATE, delays=()))
    assert stateful.REEMIT in stateful.required_events(APPEND)
    assert stateful.PROMISE in stateful.required_events(attrs.evolve(UPDATE, delays=(S,), lateness=10 * S))
    stateful.use_plan(APPEND)
    try:
        late = history(produce("r0", 35 * S), TRIGGER, produce("r1", 14 * S), produce("r2", 29 * S), TRIGGER)
        reemit = history(
            ("query", {"trigger": "availableNow"}),
            *(
                produce("r0", 5 * S),
                produce("r1", 20 * S),
                TRIGGER,
                produce("r2", 21 * S),
                crash("after_sink"),
            ),
        )
        redelivered = history(produce("r0", 5 * S), produce("r0", 5 * S, partition=1), TRIGGER)
        assert {stateful.LATE, stateful.AT_WATERMARK} <= set(stateful.events(late))
        assert stateful.REEMIT in stateful.events(reemit) and stateful.COMPLETE in stateful.events(reemit)
        assert stateful.REDELIVERY in stateful.events(redelivered)
    finally:
        stateful.use_plan(stateful.EXAMPLE_PLAN)


REFUSED = [
    ("complete_mode", "output_mode 'complete' is not supported"),
    ("session_windows", "session_window is not supported"),
    ("arbitrary_state", "applyInPandasWithState is not supported"),
    ("transform_with_state", "transformWithState is not supported"),
    ("chained", "chained stateful operators are not supported: aggregation over aggregation"),
    ("stream_stream_join", "a stream-stream join is not supported"),
    ("no_watermark_append", "an append-mode aggregation needs a watermark"),
    ("no_window_append", "an append-mode aggregation needs a window"),
    ("row_wise", "a row-wise job runs in --suite streaming"),
]


@pytest.mark.spark
@pytest.mark.parametrize("job,problem", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_job_the_suite_cannot_run_is_refused_in_one_line(job, problem, spark_session, capsys):
    assert main(["check", "--suite", "stateful", "--job", f"tests.jobs.refused:{job}"]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"error: --job tests.jobs.refused:{job}: ") and problem in out, out
    assert len(out.splitlines()) == 1, out


def test_a_job_that_cannot_be_imported_is_refused_before_spark_starts(capsys):
    from frontier_harness.spark_impl import session

    started = session.starts()
    assert main(["check", "--suite", "stateful", "--job", "tests.jobs.nope:factory"]) == 2
    assert "cannot import 'factory' from 'tests.jobs.nope'" in capsys.readouterr().out
    assert session.starts() == started


# A few real trials a run, as `check --job` runs them (the ci profile's order: the directed trials, then 12
# screened; a failure shrunk), with a shrink budget a loaded machine does not cut short.
TRIALS = attrs.evolve(PROFILES["ci"], batched_screening_histories=1_920, shrink_seconds=900)


def _run(job: str, tmp_path):
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.engine.runner import run_suite

    impl = load_job(job, stateful=True)
    files = []
    result = run_suite(
        SUITE.under_job(), impl, impl.name, TRIALS, 0, found=lambda cx, event: files.append(cx)
    )
    return result, impl


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("job", ["upsert_counts", "append_windows", "deduplicated"])
def test_a_correct_job_holds_and_reaches_every_hard_case(job, spark_session, tmp_path):
    result, _ = _run(f"tests.jobs.stateful:{job}", tmp_path)
    failed = [(r.property, r.failure.message) for r in result.results if r.failure is not None]
    assert not failed, failed
    assert result.missing_events == (), result.missing_events


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize(
    "job,prop,found,actions",
    [
        ("append_writer", "exactly_once", "doubled", 6),
        ("upsert_by_window", "exactly_once", "missing", None),
        ("promises_ten_seconds", "lateness_kept", "within the promised lateness", None),
        ("counts_per_key", "state_bounded", "state grows without bound", None),
        ("skip_seen", "exactly_once", "doubled", 6),
    ],
    ids=["append_writer", "upsert_by_window", "promises_ten_seconds", "counts_per_key", "skip_seen"],
)
def test_a_wrong_job_is_caught_small_and_replays(job, prop, found, actions, spark_session, tmp_path):
    result, impl = _run(f"tests.jobs.stateful:{job}", tmp_path)
    failure = next(r.failure for r in result.results if r.property == prop)
    assert failure is not None and found in failure.message, failure
    if actions is not None:
        assert len(failure.history.actions) <= actions, failure.history
    if job == "upsert_by_window":  # caught without a crash
        assert not any(a.args.get("fault") for a in failure.history.actions), failure.history
    path = counterexample.write(failure, tmp_path)
    assert counterexample.read(path).impl == impl.name == f"stateful-job:tests.jobs.stateful:{job}"
    assert main(["replay", str(path)]) == 1
    assert main(["replay", str(path), "--job", f"tests.jobs.stateful:{job}"]) == 1
