"""A user's own processor under the stateful suite's trials (issue 52, point 3): `crash_invisible` against the
harness's own run of the same batches without a crash, the processor's hard cases read from its state and
timers, and the worked examples (`streaming_job_example/processor_counts*.py`) through the suite's own search
and shrinking on real trials."""

from __future__ import annotations

import os
import re
import time
from collections import Counter

import attrs
import pytest

from frontier_harness.model.event_time.stateful import Batch, Record, StatefulPlan
from frontier_harness.properties.checks.event_time import stateful
from frontier_harness.properties.checks.event_time.oracles import reference_run
from frontier_harness.properties.checks.event_time.oracles.reference_run import held_at, reference_of
from frontier_harness.properties.checks.event_time.processor_reached import (
    ROWS_AFTER_DOWN,
    STATE_ACROSS_KILL,
    TIMER_AFTER_RESTART,
    TIMER_RERUN,
    processor_reached,
)
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.source import RandomSource
from frontier_harness.spark_impl.streaming import python_workers, trial, warm_runner
from tests.test_suite_stateful import RESTART, TRIGGER, crash, history, produce, trial_step

SUITE = get_suite("stateful")
S = 1_000
PROCESSOR = StatefulPlan("processor", (5 * S,), None, ("key",), "append", 5 * S, time_mode="event_time")
EXAMPLE = "frontier_harness.streaming_job_example.processor_counts:factory"
IN_MEMORY = "frontier_harness.streaming_job_example.processor_counts_in_memory:factory"
CHAINED = "frontier_harness.streaming_job_example.processor_then_window:factory"


class Impl:
    """What `crash_invisible` reads of an implementation: the plan and the reference runs (`runs`, by the
    reference history's key; `asked` records the histories it was asked to run)."""

    def __init__(self, runs: dict):
        self.plan, self.runs, self.asked = PROCESSOR, runs, []

    def reference_runs(self, histories):
        self.asked += histories
        return [self.runs[h.key] for h in histories]


def _row(key: str, count: int) -> tuple:
    return (("count", count), ("due", 20 * S), ("key", key))


def _crashed_at(point: str) -> History:
    """Batch 0, then a trigger that crashes at `point`, a restart, and a record far ahead that fires the timer."""
    return history(
        ("query", {"trigger": "processingTime"}),
        produce("r0", 12 * S),
        TRIGGER,
        produce("r1", 13 * S),
        crash(point),
        RESTART,
        produce("r2", 40 * S, key="b"),
        TRIGGER,
    )


CRASHED = _crashed_at("after_sink")  # batch 1 written, uncommitted: the restart re-runs it
BATCHES = [
    Batch(0, (Record("a", 12 * S, "r0", 0, 0),)),
    Batch(1, (Record("a", 13 * S, "r1", 0, 1),)),
    Batch(2, (Record("b", 40 * S, "r2", 0, 2),)),
    Batch(3, ()),
]


TEXTS = {b.id: f'v1\n{{"batchTimestampMs":{b.id}}}\n{{}}' for b in BATCHES}  # each batch's offsets/N


def _crashed_observation(final_rows: list) -> dict:
    obs = {}
    obs.update(trial_step(2, [(0, 1)], [0], [(0, 0)], []))
    obs.update(trial_step(4, [(0, 1), (1, 2)], [0], [(0, 0), (1, 7 * S)], []))
    obs[(4, "crash")] = frozenset({("after_sink",)})
    obs[(4, "down")] = frozenset({("down",)})
    obs.update(trial_step(5, [(0, 1), (1, 2)], [0, 1], [(0, 0), (1, 7 * S)], [], runs=(0, 1)))
    marks = [(0, 0), (1, 7 * S), (2, 8 * S), (3, 35 * S)]  # the model's E(N): the newest before, minus 5 s
    for step in (7, 8):
        obs.update(
            trial_step(step, [(0, 1), (1, 2), (2, 3), (3, 3)], [0, 1, 2, 3], marks, final_rows, (0, 1))
        )
    obs[(8, "offset_files")] = frozenset(TEXTS.items())
    return obs


def test_the_reference_runs_the_same_batches_without_a_crash_and_is_read_where_it_ran_the_same_ones():
    reference = reference_of("partitioned", BATCHES, TEXTS)
    assert [(a.name, a.args.get("data") or a.args.get("batch")) for a in reference.actions] == [
        ("query", None),
        ("produce", "r0"),
        ("journal", 0),
        ("trigger", None),
        ("produce", "r1"),
        ("journal", 1),
        ("trigger", None),
        ("produce", "r2"),
        ("journal", 2),
        ("trigger", None),
        ("journal", 3),
        ("trigger", None),
    ]
    assert not any(a.args.get("fault") or a.name == "restart" for a in reference.actions)
    assert held_at(reference, BATCHES, frozenset()) == 0
    assert held_at(reference, BATCHES, frozenset({0, 1})) == 6
    assert held_at(reference, BATCHES, frozenset({0, 1, 2, 3})) == 11  # the batch without records too


def test_crash_invisible_holds_when_the_rows_equal_the_reference_and_names_the_key_that_differs():
    reference = reference_of("partitioned", BATCHES, TEXTS)
    runs = {reference.key: {(11, "job_rows"): frozenset({(_row("a", 2), 1)})}}
    impl = Impl(runs)
    [held] = stateful.crash_invisible(impl, [CRASHED], [_crashed_observation([(_row("a", 2), 1)])])
    assert held.ok, held.message
    assert [h.key for h in impl.asked] == [reference.key]
    failed = _crashed_observation([]) | {(8, "error"): frozenset({("StreamingQueryException", "boom")})}
    beside = stateful.crash_invisible(
        impl, [CRASHED, CRASHED], [failed, _crashed_observation([(_row("a", 2), 1)])]
    )
    assert "the query failed" in beside[0].message and beside[1].ok  # no reference run for the failed trial
    [failed] = stateful.crash_invisible(impl, [CRASHED], [_crashed_observation([(_row("a", 1), 1)])])
    assert not failed.ok and failed.step == 7
    assert "after step 7 (batches [0, 1, 2, 3] committed, over 2 starts of the query)" in failed.message
    assert "key 'a': (count=1, due=20000, key='a') held 1x, 0x without a crash" in failed.message
    assert "(count=2, due=20000, key='a') held 0x, 1x without a crash" in failed.message


def test_crash_invisible_first_holds_the_journaled_watermarks_to_the_models():
    reference = reference_of("partitioned", BATCHES, TEXTS)
    obs = _crashed_observation([])
    obs[(8, "offset_metadata")] = frozenset(
        {(0, 0, 0, ()), (1, 7 * S, 0, ()), (2, 8 * S, 0, ()), (3, 36 * S, 0, ())}
    )
    impl = Impl({reference.key: {}})
    [failed] = stateful.crash_invisible(impl, [CRASHED], [obs])
    assert (
        not failed.ok
        and "offsets/3 journals batchWatermarkMs 36000, the model's E(3) is 35000" in failed.message
    )


def test_crash_invisible_fails_when_the_run_without_a_crash_failed():
    reference = reference_of("partitioned", BATCHES, TEXTS)
    impl = Impl({reference.key: {(6, "error"): frozenset({("job_failed", "Traceback ...")})}})
    [failed] = stateful.crash_invisible(impl, [CRASHED], [_crashed_observation([])])
    assert not failed.ok and "the run without a crash failed" in failed.message


def _state(*rows: tuple) -> dict:
    return {(8, "processor_state"): frozenset(rows)}


def test_crash_invisible_fails_on_a_timer_still_registered_after_the_batch_whose_clock_reached_it():
    """The state read after batches 1-3: a timer at 20 s that batch 3's E (35 s) reached is gone after it, and
    the trial holds; still registered there, `crash_invisible` fails naming it (`oracles.timers_due`)."""
    reference = reference_of("partitioned", BATCHES, TEXTS)
    impl = Impl({reference.key: {(11, "job_rows"): frozenset({(_row("a", 2), 1)})}})
    read = [(b, 0, None, None, None) for b in (1, 2, 3)]
    timer = [(b, 0, "$timers", '{"key":"a"}', 20 * S) for b in (1, 2)]
    fired = _crashed_observation([(_row("a", 2), 1)]) | _state(*read, *timer)
    [held] = stateful.crash_invisible(impl, [CRASHED], [fired])
    assert held.ok, held.message
    late = fired | _state(*read, *timer, (3, 0, "$timers", '{"key":"a"}', 20 * S))
    [failed] = stateful.crash_invisible(impl, [CRASHED], [late])
    assert not failed.ok and failed.step == 8
    assert (
        'after batch 3 the timer of key {"key":"a"} at 20000 ms is still registered: the state after batch 2 '
        "held it, and batch 3's clock, 35000 ms, is at or past it" in failed.message
    ), failed.message


def test_rows_count_as_read_back_after_a_down_only_from_a_step_after_it():
    """`ROWS_AFTER_DOWN` is reached from rows `read(spark)` returned after the query went down (the crash at
    step 4): rows read at the crash step itself, before any restart, do not count."""
    row = frozenset({(_row("a", 2), 1)})
    at_the_crash = _crashed_observation([]) | {(4, "job_rows"): row}
    after_it = _crashed_observation([(_row("a", 2), 1)])
    assert ROWS_AFTER_DOWN not in processor_reached(CRASHED, at_the_crash), at_the_crash
    assert ROWS_AFTER_DOWN in processor_reached(CRASHED, after_it)


def test_a_timer_across_a_restart_and_a_value_across_a_kill_are_read_from_the_state_after_each_batch():
    obs = _crashed_observation([])
    timers = [(0, 0, "$timers", '{"key":"a"}', 20 * S), (1, 0, "$timers", '{"key":"a"}', 20 * S)]
    counts = [(0, 0, "count", '{"key":"a"}', '{"count":1}'), (1, 0, "count", '{"key":"a"}', '{"count":2}')]
    later = [(3, 0, "$timers", '{"key":"b"}', 50 * S)]
    obs.update(_state(*timers, *counts, *later))
    assert processor_reached(CRASHED, obs) == [TIMER_AFTER_RESTART]  # no kill: no value across one
    obs[(4, "killed")] = frozenset({("after_sink",)})
    assert processor_reached(CRASHED, obs) == [TIMER_AFTER_RESTART, STATE_ACROSS_KILL]
    # the timer still registered and the count unchanged after every later batch: neither case
    unchanged = [(b, 0, "count", '{"key":"a"}', '{"count":1}') for b in (0, 1, 3)]
    obs.update(_state(*timers, *unchanged, (3, 0, "$timers", '{"key":"a"}', 20 * S)))
    assert processor_reached(CRASHED, obs) == []


def test_a_timer_fired_in_the_batch_after_sink_crashed_is_read_from_the_state_before_and_after_it():
    """Batch 1 was logged and written when `after_sink` crashed, then committed by the restart: a timer the
    state of batch 0 held and batch 1's lacks, due by batch 1's watermark (7 s), fired in the batch Spark ran
    twice; one not yet due was moved or deleted, not fired."""
    timer = (0, 0, "$timers", '{"key":"a"}', 7 * S)
    obs = _crashed_observation([])
    obs.update(_state(timer, (1, 0, "count", '{"key":"b"}', '{"count":1}')))
    assert TIMER_RERUN in processor_reached(CRASHED, obs)
    moved = [(0, 0, "$timers", '{"key":"a"}', 7 * S + 1), (1, 0, "$timers", '{"key":"a"}', 9 * S)]
    obs.update(_state(*moved))  # not due by E(1): a call with new data moved it
    assert TIMER_RERUN not in processor_reached(CRASHED, obs)
    obs.update(_state(timer, (1, 0, "$timers", '{"key":"a"}', 7 * S)))  # still registered: it did not fire
    assert TIMER_RERUN not in processor_reached(CRASHED, obs)
    value = (0, 0, "count", '{"key":"a"}', '{"count":1}')  # a value the re-run batch changed: no timer fired
    obs.update(_state(timer, value, (1, 0, "$timers", '{"key":"a"}', 7 * S)))
    assert TIMER_RERUN not in processor_reached(CRASHED, obs)
    del obs[(4, "crash")]  # no crash after the sink: no batch ran twice
    obs.update(_state(timer, (1, 0, "count", '{"key":"b"}', '{"count":1}')))
    assert TIMER_RERUN not in processor_reached(CRASHED, obs)


def test_a_processors_state_is_read_from_the_batch_committed_when_its_query_first_went_down():
    """A trial whose query started at batches 0, 3 and 5 first went down after committing batch 2: its
    processor's stores are read from batch 2 on, another operator's never; one never started again, none."""
    stores = [(0, 9, b, "ck", op) for b in range(5) for op in (0, 1)] + [
        (1, 9, b, "other", 0) for b in range(3)
    ]
    processors = {("ck", 0): ("count",), ("other", 0): ("count",)}
    read = trial._processor_stores(stores, processors, {0: {0, 3, 5}, 1: {0}})
    assert read == [(0, 9, b, "ck", 0) for b in (2, 3, 4)]


def test_a_processor_requires_its_cases_and_the_model_properties_do_not_apply_to_it():
    suite = SUITE.scaled_to(PROCESSOR)
    assert TIMER_AFTER_RESTART in suite.required_events and STATE_ACROSS_KILL in suite.required_events
    untimed = attrs.evolve(PROCESSOR, time_mode="none")
    assert TIMER_AFTER_RESTART not in SUITE.scaled_to(untimed).required_events
    impl = Impl({})
    for name in ("exactly_once", "lateness_kept", "complete_windows_emitted", "state_bounded"):
        assert "a user's processor" in suite.property(name).applies(impl), name
    assert suite.property("crash_invisible").applies(impl) is None
    assert "no user's processor" in SUITE.property("crash_invisible").applies(_Model())
    draws = suite.property("crash_invisible").directed.values()
    directed = {h.key: h for h in (draw(RandomSource(0), "partitioned") for draw in draws)}
    triggers = Counter(h.actions[0].args["trigger"] for h in directed.values())
    # the timer fired in a re-run batch's under availableNow; a two-digit batch id's among the processingTime ones
    assert triggers == {"processingTime": 8, "availableNow": 1}, triggers
    assert (
        TIMER_RERUN in suite.required_events and TIMER_RERUN not in SUITE.scaled_to(untimed).required_events
    )


class _Model:
    """An implementation of the model's operators (the example windowed count)."""

    plan = stateful.EXAMPLE_PLAN


def test_ending_the_workers_of_a_start_that_has_none_ends_nothing():
    assert python_workers.end("no-such-start") == 0


def test_what_a_daemon_leads_is_itself_and_every_live_process_in_its_group():
    """As a forked daemon leads its workers' group: `led_by` names the leader and its child while they run,
    and nothing once the group is SIGKILLed."""
    import subprocess

    leader = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(python_workers.led_by([leader.pid])) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until the child runs
        assert len(python_workers.led_by([leader.pid])) == 2 and leader.pid in python_workers.led_by(
            [leader.pid]
        )
        warm_runner.kill_with_group(leader.pid)
        leader.wait(timeout=10)
        deadline = time.monotonic() + 10
        while python_workers.led_by([leader.pid]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert python_workers.led_by([leader.pid]) == []
    finally:
        warm_runner.kill_with_group(leader.pid)


# A few real trials, as `check --job` runs them: the directed trials, then one screened; a failure shrunk.
TRIALS = attrs.evolve(PROFILES["ci"], batched_screening_histories=160, shrink_seconds=900)


def _run(job: str, only: str | None = None, impl=None):
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

    impl = impl or load_job(job, stateful=True)
    suite = SUITE.under_job()
    if only is not None:
        suite = attrs.evolve(suite, properties=(suite.property(only),))
    return run_suite(SuiteRequest(suite, impl, impl.name, TRIALS, 0)), impl


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize(
    "job",
    [
        EXAMPLE,
        # the same count as an `applyInPandasWithState` function with an event-time timeout (a variant of the
        # claim the example shows: nightly)
        pytest.param("tests.jobs.stateful:group_counts", marks=pytest.mark.nightly),
        # chained with a window count (nightly, for CI's time: `.ci/run` runs the chain through its twin, caught
        # small below)
        pytest.param(CHAINED, marks=pytest.mark.nightly),
    ],
    ids=["transformWithStateInPandas", "applyInPandasWithState", "chained_with_a_window_count"],
)
def test_the_processor_example_holds_and_reaches_every_hard_case(job, spark_session):
    """`processor_counts` (a count in its ValueState, emitted by an event-time timer), and the same count as
    a group-state function: every property held or does not apply, and every hard case was reached, counted
    from what the trials observed (a timer that fired after a restart and one in a batch Spark ran twice, a
    value written before a SIGKILL changed after it, each crash point)."""
    from frontier_harness.properties.engine.verdict import Verdict

    result, _ = _run(job)
    verdicts = {r.property: r.verdict for r in result.results}
    print({r.property: (str(r.verdict), r.examples, dict(r.events)) for r in result.results})
    assert set(verdicts.values()) <= {Verdict.HELD, Verdict.NOT_APPLICABLE}, verdicts
    assert verdicts["crash_invisible"] is Verdict.HELD and verdicts["exactly_once"] is Verdict.NOT_APPLICABLE
    assert next(r for r in result.results if r.property == "crash_invisible").examples >= 8  # 7 directed
    assert result.missing_events == result.not_run_events == (), result


@pytest.mark.slow
@pytest.mark.nightly  # .ci/run leaves it to the nightly run (CI's 90 minutes: docs/claims.md)
@pytest.mark.spark
def test_the_processor_counting_in_a_python_dict_is_caught_small_after_a_restart(spark_session):
    """`processor_counts_in_memory`: through the suite's own search and shrinking, `crash_invisible` fails
    on a short history whose query started twice, as its trial observed (a restart, or under `availableNow`
    the final drain after a trigger: each is a start); the count made before the second start was in a worker
    that died with the first."""
    result, _ = _run(IN_MEMORY, only="crash_invisible")
    [failure] = [r.failure for r in result.results if r.failure is not None]
    print(len(failure.history.actions), "actions:", failure.message, failure.history.actions)
    assert "differs from the same processor's run over the same batches without a crash" in failure.message
    starts = re.search(r"over (\d+) starts of the query", failure.message)  # as the trial observed them
    assert starts and int(starts.group(1)) >= 2, failure.message
    assert len(failure.history.actions) <= 5, failure.history


@pytest.mark.slow
@pytest.mark.nightly  # 163 s alone: .ci/run's part 1 runs the clause on real trials in processing time
@pytest.mark.spark
def test_an_engine_firing_timers_a_batch_late_is_caught_small_through_the_suites_own_search(spark_session):
    """`tests.planted_streaming:timers_fire_a_batch_late` (the example's timers left registered a batch after
    the batch that fired them): through the suite's own search and shrinking, `crash_invisible` fails on a
    short history whose query started twice (the state is read from the batch before its second start on:
    under `availableNow` each trigger is a start), naming the timer still registered and the batch whose
    clock reached it (shrunk to 5 actions: two records, a trigger, a record)."""
    from tests.planted_streaming import timers_fire_a_batch_late

    result, _ = _run(EXAMPLE, only="crash_invisible", impl=timers_fire_a_batch_late())
    [failure] = [r.failure for r in result.results if r.failure is not None]
    print(len(failure.history.actions), "actions:", failure.message, failure.history.actions)
    assert "is still registered" in failure.message and "is at or past it" in failure.message, failure.message
    assert len(failure.history.actions) <= 6, failure.history


@pytest.mark.slow
# nightly, for CI's time: in .ci/run the example's trials reach a timer fired in a batch Spark ran
# twice (above), `crash_invisible` names the key whose rows differ from the run without a crash, from
# written observations (above), and the chained processor's twin is caught through the search (below)
@pytest.mark.nightly
@pytest.mark.spark
def test_a_processor_whose_timer_rows_are_appended_twice_after_a_crash_is_caught_small(spark_session):
    """`processor_append_writer` (tests.jobs.stateful): the example's processor, its rows written with the
    docs' `mode("append")`. Through the suite's own search and shrinking, `crash_invisible` fails on a short
    history whose crash falls between a batch's write and its commit: the batch runs again, its timer fires
    again, and its row is held twice where the run without a crash holds it once."""
    result, _ = _run("tests.jobs.stateful:processor_append_writer", only="crash_invisible")
    [failure] = [r.failure for r in result.results if r.failure is not None]
    print(len(failure.history.actions), "actions:", failure.message, failure.history.actions)
    assert "differs from the same processor's run over the same batches without a crash" in failure.message
    assert "held 2x, 1x without a crash" in failure.message, failure.message
    assert any(a.args.get("fault") == "after_sink" for a in failure.history.actions), failure.history
    assert len(failure.history.actions) <= 6, failure.history  # query, 3 records, 2 triggers


@pytest.mark.slow
@pytest.mark.spark
def test_a_chained_processor_stamping_its_rows_behind_the_watermark_is_caught_small(spark_session):
    """`processor_then_window:window_start_stamped`: the chained example's processor stamps its rows with the
    start of the window it counted, behind the watermark that fired its timer whenever that watermark was
    already in the window. Through the suite's own search and shrinking, `crash_invisible` fails on a short
    history, Spark's own refusal of the row (`EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED`) in its message."""
    job = CHAINED.replace(":factory", ":window_start_stamped")
    result, _ = _run(job, only="crash_invisible")
    [failure] = [r.failure for r in result.results if r.failure is not None]
    print(len(failure.history.actions), "actions:", failure.message, failure.history.actions)
    assert "EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED" in failure.message, failure.message
    assert len(failure.history.actions) <= 4, failure.history


@pytest.mark.spark
def test_a_record_at_the_watermark_that_a_crash_lets_in_is_judged_against_the_same_batches(spark_session):
    """`tests.jobs.stateful:window_counts` (correct: counts per window in a `MapState`). Batch 0 holds `a` at
    5 s and `c` at 10 s (E moves to 5 s) and crashes after its write; `b` at 5 s arrives while the query is
    down. The restart re-runs batch 0 and, the records there, runs them in batch 1 at once: `b` is at the
    watermark but not late, E(0) being 0. A reference in one running query would run a batch without records
    first (the watermark moved) and drop `b` as late there: the run that found this (a user's correct
    processor, reported as crash-sensitive) is now judged against the trial's own batches, and holds."""
    from frontier_harness.properties.adapters.job import load_job

    impl = load_job("tests.jobs.stateful:window_counts", stateful=True)
    at_the_watermark = history(
        ("query", {"trigger": "processingTime"}),
        produce("r0", 5 * S),
        produce("r1", 10 * S, key="c", partition=1),
        crash("after_sink"),
        produce("r2", 5 * S, key="b"),
        produce("r3", 15 * S),
        RESTART,
    )
    [obs] = impl.observe_stateful("partitioned", [at_the_watermark])
    [outcome] = stateful.crash_invisible(impl, [at_the_watermark], [obs])
    final = dict(obs[(len(at_the_watermark.actions), "job_rows")])
    assert (("count", 1), ("due", 10 * S), ("key", "b")) in final, final  # the trial kept b: at E, not late
    assert outcome.ok, outcome.message
    batches = reference_run.trial_of(at_the_watermark, obs, impl.plan).batches
    offsets = reference_run.journaled_offsets(at_the_watermark, obs)
    [ref_obs] = impl.reference_runs([reference_of("partitioned", batches, offsets)])  # the run judged above
    labels = {label for _, label in ref_obs}
    assert "job_rows" in labels and not labels & {"state", "processor_state"}, labels  # judged: its rows only


PROCESSING_TIME_JOBS = [
    "quiet_counts",
    pytest.param("idle_group_counts", marks=[pytest.mark.slow]),  # the same count, as a group's timeout
]


@pytest.mark.spark
@pytest.mark.parametrize("job", PROCESSING_TIME_JOBS)
def test_a_processing_time_processor_holds_and_its_twin_counting_in_memory_is_caught(spark_session, job):
    """`tests.jobs.processing_time`: a processor whose timers fire by the batch clock T(N), its count in a value
    state with a TTL (or an `applyInPandasWithState` function whose group times out by it), runs under `once`:
    one batch a trigger with new records (a start with nothing new runs none). On the history that restarts
    between a timer's registration and its firing, its run without a crash (each batch started from the trial's
    own `offsets/N`, in starts that share their Python workers, ended with the run) equals the trial, whose rows
    hold T(N) + 1 ms, and the timer is seen fired after the restart; the twin that counts in a Python dict
    differs from it."""
    from frontier_harness.properties.adapters.job import load_job
    from tests.planted_streaming import fired_a_batch_late

    judged, forked = {}, [warm_runner.forks(m) for m in warm_runner.USER_PYTHON]
    for name in (job, f"{job}_in_memory"):
        impl = load_job(f"tests.jobs.processing_time:{name}", stateful=True)
        restarted = stateful.directed(impl.plan)[TIMER_AFTER_RESTART](RandomSource(0), "partitioned")
        assert restarted.actions[0].args == {"trigger": "once"}
        [obs] = impl.observe_stateful("partitioned", [restarted])
        [outcome] = stateful.crash_invisible(impl, [restarted], [obs])
        judged[name] = outcome, obs, impl
        assert not _continuous_workers(), "a reference run's shared Python workers outlived it"
    # each start's daemon forked warm (and a processor's `init` worker), ended with it
    grew = {m for m, n in zip(warm_runner.USER_PYTHON, forked) if warm_runner.forks(m) > n}
    assert grew == ({*warm_runner.USER_PYTHON} if job == "quiet_counts" else {warm_runner.DAEMON}), grew
    (held, obs, impl), (caught, _, _) = judged[job], judged[f"{job}_in_memory"]
    # the same trial as an engine leaving each timer registered a batch longer shows it: the timer T reached
    [late] = stateful.crash_invisible(impl, [restarted], [fired_a_batch_late(dict(obs))])
    assert not late.ok and "is still registered" in late.message and "past it" in late.message, late.message
    data = [
        i
        for i, a in enumerate(restarted.actions)
        if a.name == "trigger" and restarted.actions[i - 1].name == "produce"
    ]
    assert len(obs[(len(restarted.actions), "offset_metadata")]) == len(data), (
        obs
    )  # a start with nothing new: none
    assert held.ok, held.message
    assert TIMER_AFTER_RESTART in processor_reached(restarted, obs, "processing_time"), obs
    assert not caught.ok
    assert "differs from the same processor's run over the same batches without a crash" in caught.message
    assert "(count=0, " in caught.message and "held 1x, 0x without a crash" in caught.message, caught.message


def _continuous_workers() -> list[str]:
    """The processes whose environment names the workers a `continuous` query's starts share, of this pytest
    worker's runs (every processor's reference run is `continuous`: another worker's may be running now; the
    environment passes from this process to its drivers, their JVMs and their Python workers' launchers), and
    every daemon this worker's warm process forked still running, or a worker in its group."""
    needle = f"{python_workers.MARK}=run-".encode()
    ours = f"PYTEST_XDIST_WORKER={os.environ.get('PYTEST_XDIST_WORKER', '')}\0".encode()
    found = []
    for entry in python_workers.PROC.iterdir():
        try:
            environ = (entry / "environ").read_bytes() if entry.name.isdigit() else b""
            if needle in environ and (ours in environ or b"PYTEST_XDIST_WORKER=" not in environ):
                found.append(entry.name)
        except OSError:
            continue
    running = [run for module in warm_runner.USER_PYTHON for run in warm_runner.running(module).values()]
    return found + [str(p) for p in python_workers.led_by(running)]


@pytest.mark.slow
@pytest.mark.nightly  # 3 minutes: one start a batch, the reference's too (CI's 90 minutes: docs/claims.md)
@pytest.mark.spark
@pytest.mark.parametrize("job", ["quiet_counts_in_memory", "idle_group_counts_in_memory"])
def test_a_processing_time_processor_counting_in_a_python_dict_is_caught_small_through_the_search(
    spark_session, job
):
    """`quiet_counts_in_memory` (and the group function `idle_group_counts_in_memory`): through the suite's own
    search and shrinking, `crash_invisible` fails on a short history under `once`, whose second start lost the
    count its first made."""
    result, _ = _run(f"tests.jobs.processing_time:{job}", only="crash_invisible")
    [failure] = [r.failure for r in result.results if r.failure is not None]
    print(len(failure.history.actions), "actions:", failure.message, failure.history.actions)
    assert "differs from the same processor's run over the same batches without a crash" in failure.message
    assert failure.history.actions[0].args == {"trigger": "once"}, failure.history
    assert len(failure.history.actions) <= 5, failure.history


@pytest.mark.spark
def test_a_processor_query_gets_the_rocksdb_provider_unless_the_session_names_its_own(spark_session):
    from frontier_harness.spark_impl.streaming import query
    from frontier_harness.spark_impl.streaming.event_source import NAME, EventSource
    from frontier_harness.spark_impl.ttl.state.query import ROCKSDB
    from frontier_harness.streaming_job_example.processor_counts import factory
    from frontier_harness.streaming_job_example.windowed_counts import WindowedCounts

    def provider_after(job: object, theirs: str | None = None) -> str | None:
        """The provider the harness's session names once `job`'s stream is planned; its own restored after
        (the session is this worker's, shared with the tests after)."""
        session, own = spark_session, spark_session.conf.get(query.PROVIDER, None)
        try:
            if theirs is not None:
                session.conf.set(query.PROVIDER, theirs)
            session.dataSource.register(EventSource)  # as the plan reader does, on the same session
            stream = session.readStream.format(NAME).option("path", "/nonexistent").load()
            query._state_store_for_processors(session, job.transform(stream))  # type: ignore[attr-defined]
            return session.conf.get(query.PROVIDER, None)
        finally:
            if own is None:
                session.conf.unset(query.PROVIDER)
            else:
                session.conf.set(query.PROVIDER, own)

    # An earlier test in this process may have named a provider on the session (the ttl suites name
    # RocksDB): that provider is the session's, and is kept.
    base = spark_session.conf.get(query.PROVIDER, None)
    assert provider_after(factory("/tmp/unused")) == (base or ROCKSDB)
    assert provider_after(WindowedCounts("/tmp/unused")) == base  # the model's operators keep the session's
    theirs = "org.example.TheirProvider"
    assert provider_after(factory("/tmp/unused"), theirs) == theirs


# The second trigger runs batch 1 and crashes before logging batch 2; a restart; batch 2 after it.
CRASHED_AFTER_A_COMMIT = _crashed_at("before_offsets")


def _committed_then_crashed(*state: tuple) -> dict:
    """Batch 0 committed at step 2; the trigger at step 4 committed batch 1, then crashed; the restart at step
    5; batch 2 at step 7 (E(2) = 35 s), the final step 8 reading the processor's state."""
    obs = {}
    obs.update(trial_step(2, [(0, 1)], [0], [(0, 0)], []))
    obs.update(trial_step(4, [(0, 1), (1, 2)], [0, 1], [(0, 0), (1, 7 * S)], []))
    obs[(4, "crash")] = frozenset({("before_offsets",)})
    obs[(4, "down")] = frozenset({("down",)})
    obs.update(trial_step(5, [(0, 1), (1, 2)], [0, 1], [(0, 0), (1, 7 * S)], [], (0, 1)))
    marks = [(0, 0), (1, 7 * S), (2, 35 * S)]
    for step in (7, 8):
        obs.update(trial_step(step, [(0, 1), (1, 2), (2, 3)], [0, 1, 2], marks, [], (0, 1)))
    obs[(8, "processor_state")] = frozenset(state)
    return obs


def test_a_crash_reads_the_state_of_the_newest_batch_its_own_step_committed():
    """The trigger that crashed had committed batch 1 first: the state the query went down with is batch 1's, so
    a timer batch 1 registered and batch 2 fired (due by E(2)) fired after the restart; batch 0's state (the
    oldest committed, or the step before's newest) never held it."""
    fired = [(1, 0, "$timers", '{"key":"a"}', 20 * S), (2, 0, "count", '{"key":"b"}', '{"count":1}')]
    obs = _committed_then_crashed(*fired)
    assert processor_reached(CRASHED_AFTER_A_COMMIT, obs) == [TIMER_AFTER_RESTART]
    held = [*fired, (2, 0, "$timers", '{"key":"a"}', 20 * S)]  # still registered after batch 2: not fired
    assert processor_reached(CRASHED_AFTER_A_COMMIT, _committed_then_crashed(*held)) == []


def test_only_batches_after_the_down_count_a_timer_gone():
    """A timer the down's batch (1) holds that an earlier batch (0) lacked was registered, not fired, though
    E(0) had reached it."""
    registered = [(b, 0, "$timers", '{"key":"a"}', 0) for b in (1, 2)] + [(0, 0, "count", '{"key":"a"}', "1")]
    assert processor_reached(CRASHED_AFTER_A_COMMIT, _committed_then_crashed(*registered)) == []


def _second_action(action: tuple) -> tuple[History, dict]:
    """Three batches, the second after `action` (a trigger, or a restart that runs batch 1 before its step is
    observed), E(1) = 25 s; the state after them holds a timer at 20 s registered in batch 0 only."""
    h = history(
        ("query", {"trigger": "processingTime"}),
        produce("r0", 12 * S),
        TRIGGER,
        produce("r1", 30 * S),
        action,
        produce("r2", 40 * S),
        TRIGGER,
    )
    runs = (0, 1) if action == RESTART else (0,)
    obs = trial_step(2, [(0, 1)], [0], [(0, 0)], [])
    obs.update(trial_step(4, [(0, 1), (1, 2)], [0, 1], [(0, 0), (1, 25 * S)], [], runs))
    marks = [(0, 0), (1, 25 * S), (2, 35 * S)]
    for step in (6, 7):
        obs.update(trial_step(step, [(0, 1), (1, 2), (2, 3)], [0, 1, 2], marks, [], runs))
    count = [(b, 0, "count", '{"key":"a"}', str(b)) for b in (1, 2)]
    obs[(7, "processor_state")] = frozenset({(0, 0, "$timers", '{"key":"a"}', 20 * S), *count})
    return h, obs


def test_a_query_that_never_went_down_reaches_no_case_across_a_restart():
    """Steps after a trigger that did not crash are no restart: the timer fired in batch 1 while the query
    ran on."""
    assert processor_reached(*_second_action(TRIGGER)) == []


def test_a_plain_restart_reads_the_state_committed_before_it():
    """The query stopped after batch 0; the restart ran batch 1 before its step was observed: the timer batch 0
    held and batch 1 fired (due by E(1) = 25 s) fired after the restart, though the restart's own step
    committed batch 1."""
    assert processor_reached(*_second_action(RESTART)) == [TIMER_AFTER_RESTART]


def test_the_reference_produces_each_record_as_the_trial_read_it():
    produced = [a.args for a in reference_of("partitioned", BATCHES, TEXTS).actions if a.name == "produce"]
    assert [(p["key"], p["event_time"], p["partition"]) for p in produced] == [
        ("a", 12 * S, 0),
        ("a", 13 * S, 0),
        ("b", 40 * S, 0),
    ]


def test_a_trials_reference_runs_every_batch_from_the_offsets_the_trial_journaled():
    """The reference runs every batch the trial ran, one without records too, each from the trial's own
    `offsets/N` text under `once`, in starts that share their Python workers: so no batch the trial did not run
    (Spark plans one without records whenever the watermark moved) filters a record at the watermark as late.
    It is read after the trigger of the last committed batch, whether it held records or not."""
    once = history(("query", {"trigger": "once"}), produce("r0", 12 * S), TRIGGER)
    obs = {(len(once.actions), "offset_files"): frozenset(TEXTS.items())}
    assert reference_run.journaled_offsets(once, obs) == TEXTS
    reference = reference_of("partitioned", BATCHES, TEXTS)
    assert reference.actions[0].args == {"trigger": "once", "continuous": True}
    journaled = [(a.args["batch"], a.args["offsets"]) for a in reference.actions if a.name == "journal"]
    assert journaled == sorted(TEXTS.items())
    assert [a.name for a in reference.actions[-2:]] == ["journal", "trigger"]  # batch 3, without records
    assert held_at(reference, BATCHES, frozenset({0, 1, 2, 3})) == len(reference.actions) - 1
    assert held_at(reference, BATCHES, frozenset({0})) == 3  # query, produce, journal, trigger


def test_a_difference_names_at_most_six_keys_and_counts_the_rest():
    rows = Counter({(("key", f"k{i}"),): 1 for i in range(6)})
    six = reference_run._differ(3, frozenset({0}), {}, rows, Counter())
    assert "key 'k5'" in six and "more keys" not in six
    seven = reference_run._differ(3, frozenset({0}), {}, rows + Counter({(("key", "k6"),): 1}), Counter())
    assert "key 'k6'" not in seven and seven.endswith("(and 1 more keys)")


def test_a_processor_suite_draws_processor_histories_and_keeps_only_the_properties_it_was_narrowed_to():
    from frontier_harness.properties.checks.event_time.strategies.stateful import draw_processor_history

    drawn = SUITE.scaled_to(PROCESSOR).property("exactly_once").draw
    for seed in range(5):
        expected = draw_processor_history(RandomSource(seed), "partitioned", PROCESSOR)
        assert drawn(RandomSource(seed), "partitioned") == expected
    narrowed = attrs.evolve(SUITE, properties=SUITE.properties[:1]).scaled_to(PROCESSOR)
    assert [p.name for p in narrowed.properties] == ["exactly_once"]


def test_only_the_crash_after_the_offsets_is_drawn_with_a_compaction_while_the_query_is_down():
    directed = stateful.processor_directed(PROCESSOR)
    compacts = {
        point: any(
            a.name == "upstream_compact"
            for a in directed[f"crash {point}"](RandomSource(0), "partitioned").actions
        )
        for point in ("before_offsets", "after_offsets", "after_sink")
    }
    assert compacts == {"before_offsets": False, "after_offsets": True, "after_sink": False}


def test_all_laws_of_a_processor_fails_a_trial_with_the_first_judge_that_fails_it():
    """`crash_invisible` holds, and the upstream committed offsets no commit made durable: that law's failure
    is the verdict."""
    impl = Impl(
        {reference_of("partitioned", BATCHES, TEXTS).key: {(11, "job_rows"): frozenset({(_row("a", 2), 1)})}}
    )
    obs = _crashed_observation([(_row("a", 2), 1)])
    assert stateful.all_laws(impl, [CRASHED], [obs])[0].ok
    obs[(7, "upstream")] = frozenset({("committed", ((0, 0, 9), (1, 2147483647, 0)))})
    [outcome] = stateful.all_laws(impl, [CRASHED], [obs])
    assert not outcome.ok and "is beyond the durable frontier" in outcome.message, outcome.message
