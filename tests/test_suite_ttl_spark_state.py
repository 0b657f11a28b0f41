"""The ttl_spark_state suite on Spark: what it observes (a crash is a driver seen killed after its sink, a
restart a driver of its own, every batch's clock whether or not it answered a get), its judge on written
observations, and planted processors and drivers caught through the suite's own search and shrinking
(`tests/planted_ttl_state.py`).
"""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.ttl import spark_state
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests.helpers import write_and_replay

SUITE = get_suite("ttl_spark_state")
OPEN = Action("open", {"ttl_ms": 2000})


def put(key: str, value: str) -> Action:
    return Action("put", {"key": key, "value": value})


def get(key: str) -> Action:
    return Action("get", {"key": key})


def trigger(wait_ms: int = 0, crash: bool = False) -> Action:
    return Action("trigger", {"wait_ms": wait_ms, **({"crash": True} if crash else {})})


def history(*actions: Action) -> History:
    return History("total", (OPEN, *actions))


def test_every_batch_is_held_to_its_clock_whether_or_not_it_answered_a_get():
    """A batch that answered no get of the history still shows its `current_timestamp()` (the probe): a
    batch that answered nothing at all fails, its clock unseen; one that saw another clock fails."""
    h = history(put("a", "x"), trigger())
    clock = {(2, "clock"): frozenset({(1000,)}), (2, "get"): frozenset()}
    assert spark_state.judge(h, clock | {(2, "now"): frozenset({(1000,)})}).ok
    unseen = spark_state.judge(h, clock | {(2, "now"): frozenset()})
    assert (
        not unseen.ok
        and unseen.message == "the batch at step 2 answered nothing, its batchTimestampMs is 1000"
    )
    other = spark_state.judge(h, clock | {(2, "now"): frozenset({(999,)})})
    assert not other.ok and "saw current_timestamp() [999]" in other.message


def test_the_hard_cases_are_counted_from_what_the_trial_observed():
    """A crash counts when its driver was seen killed (`killed`), a restart when two batches in a row read
    their clocks in different starts of the query (`run`), the straddle when a get answered a value and the
    next get of its key, no write between, answered none: never from the history's own arguments."""
    h = history(
        put("a", "x"),
        get("a"),
        trigger(),
        get("a"),
        trigger(4000, crash=True),
        Action("restart", {}),
        trigger(),
    )

    def step(at: int, clock: int, run: int, gets=(), killed=False) -> dict:
        found = {
            (at, "clock"): {(clock,)},
            (at, "now"): {(clock,)},
            (at, "run"): {(run,)},
            (at, "get"): set(gets),
        }
        found |= {(at, "killed"): {("after_sink",)}} if killed else {}
        return {k: frozenset(v) for k, v in found.items()}

    seen = (
        step(3, 1000, 0, [(1, "a", "x")]) | step(5, 6000, 1, [(0, "a", None)], killed=True) | step(7, 7000, 2)
    )
    assert spark_state.reached(h, seen) == sorted(
        [spark_state.CRASH, spark_state.RESTART, spark_state.STRADDLE]
    )
    one_start = step(3, 1000, 0, [(1, "a", "x")]) | step(5, 6000, 0, [(0, "a", "x")]) | step(7, 7000, 0)
    assert (
        spark_state.reached(h, one_start) == []
    )  # asked to crash and restart: nothing seen, nothing counted


@pytest.mark.spark
def test_a_crash_is_a_driver_seen_killed_after_its_sink_and_a_restart_a_driver_of_its_own(spark_session):
    """One history: batch 1's driver is SIGKILLed after its sink wrote (its marker and its death seen), the
    next driver runs batch 1 again on the clock it journaled and batch 2 after a restart; each batch's
    `current_timestamp()` is its `batchTimestampMs`, and every get is the model's."""
    from frontier_harness.spark_impl.ttl.state.store import observe_ttl_spark_state

    h = history(
        put("a", "x"),
        get("a"),
        trigger(),
        get("a"),
        trigger(crash=True),
        Action("restart", {}),
        get("a"),
        trigger(),
    )
    [obs] = observe_ttl_spark_state("total", [h])
    assert obs[(5, "killed")] == {("after_sink",)}
    assert [next(iter(obs[(s, "run")]))[0] for s in (3, 5, 8)] == [0, 1, 2]
    assert all(obs[(s, "now")] == obs[(s, "clock")] for s in (3, 5, 8))
    assert spark_state.judge(h, obs).ok, spark_state.judge(h, obs).message
    assert {spark_state.CRASH, spark_state.RESTART} <= set(spark_state.reached(h, obs))


@pytest.mark.slow  # the suite's search and its shrinking over driver restarts: minutes
@pytest.mark.spark
def test_a_processor_whose_puts_land_at_the_end_of_the_batch_is_caught_small_by_the_suites_search(
    spark_session, tmp_path
):
    """The suite's own search (the `ci` profile's screening lane, two histories drawn from seed 3, neither
    restarting nor crashing, so no driver of its own) finds a get after a put in one batch answering the
    value before it, and shrinks it to the put, the get and their batch."""
    from tests.planted_ttl_state import puts_at_the_end

    profile = attrs.evolve(PROFILES["ci"], batched_screening_histories=1000, shrink_seconds=600)
    result = run_suite(
        SuiteRequest(SUITE, puts_at_the_end(), "tests.planted_ttl_state:puts_at_the_end", profile, seed=3)
    )
    [failure] = [r.failure for r in result.results if r.failure]
    assert failure.message.startswith("get at step"), failure.message
    assert [a.name for a in failure.history.actions][:4] == ["open", "put", "get", "trigger"], failure.history
    assert len(failure.history.actions) <= 7 and failure.step == 3, failure.history
    assert write_and_replay(failure, tmp_path, "tests.planted_ttl_state:puts_at_the_end") == 1


@pytest.mark.slow  # real micro-batches spaced in real time, a driver per restart: a query per shrinking call
@pytest.mark.spark
def test_a_processor_serving_expired_copies_is_caught_small_and_replays(spark_session, tmp_path):
    from tests.planted_ttl_state import copy_kept

    profile = attrs.evolve(PROFILES["ci"], shrink_seconds=600)
    result = run_suite(SuiteRequest(SUITE, copy_kept(), "tests.planted_ttl_state:copy_kept", profile, seed=0))
    [failure] = [r.failure for r in result.results if r.failure]
    assert "get at step" in failure.message, failure.message
    assert len(failure.history.actions) <= 7, failure.history.actions
    assert write_and_replay(failure, tmp_path, "tests.planted_ttl_state:copy_kept") == 1


@pytest.mark.slow  # a driver of its own per restart, under libfaketime: a query per shrinking call
@pytest.mark.spark
def test_a_restart_on_a_clock_set_back_is_caught_small_through_the_suites_search(spark_session, tmp_path):
    """`restarts_an_hour_behind`: every driver that restarts the query runs its JVM an hour behind the first
    start's (Debian's libfaketime, `tests/ttl_clock_behind.py`). The suite's own search finds a batch whose
    `batchTimestampMs` goes back, and shrinks it; the file replays."""
    import glob

    from tests.planted_ttl_state import restarts_an_hour_behind
    from tests.ttl_clock_behind import LIBFAKETIME

    if not glob.glob(LIBFAKETIME):
        pytest.fail("Debian's faketime is missing: run ci/install-test-packages.sh")
    name = "tests.planted_ttl_state:restarts_an_hour_behind"
    profile = attrs.evolve(PROFILES["ci"], shrink_seconds=600)
    result = run_suite(SuiteRequest(SUITE, restarts_an_hour_behind(), name, profile, seed=0))
    [failure] = [r.failure for r in result.results if r.failure]
    print(len(failure.history.actions), "actions:", failure.message, failure.history.actions)
    assert failure.message.startswith("the batch clock went back"), failure.message
    assert len(failure.history.actions) <= 7, failure.history.actions
    assert write_and_replay(failure, tmp_path, name) == 1


def _batches(*batches: tuple) -> dict:
    """Written observations: per trigger step, its clock (also its `current_timestamp()`) and its gets' answers."""
    found = {}
    for at, clock, gets in batches:
        found |= {
            (at, "clock"): {(clock,)},
            (at, "now"): {(clock,)},
            (at, "run"): {(0,)},
            (at, "get"): set(gets),
        }
    return {k: frozenset(v) for k, v in found.items()}


def test_the_judge_answers_each_batchs_gets_by_the_model_after_its_puts_and_deletes():
    h = history(put("a", "x"), get("a"), trigger(), Action("delete", {"key": "a"}), get("a"), trigger())
    right = _batches((3, 1000, [(1, "a", "x")]), (6, 1500, [(1, "a", None)]))
    assert spark_state.judge(h, right).ok
    kept = _batches((3, 1000, [(1, "a", "x")]), (6, 1500, [(1, "a", "x")]))  # the delete was lost
    assert not spark_state.judge(h, kept).ok


def test_a_clock_that_goes_back_is_named_at_the_batch_that_read_it():
    h = history(put("a", "x"), trigger(), trigger(), get("a"), trigger())
    outcome = spark_state.judge(h, _batches((2, 5000, []), (3, 6000, []), (5, 4000, [(0, "a", "x")])))
    assert not outcome.ok and outcome.message.startswith("the batch clock went back") and outcome.step == 5


def test_a_put_at_exactly_its_keys_expiry_then_an_answered_get_is_a_put_over_an_expired_value():
    """The TTL is 2 s: a value put at 1 s has expired at 3 s (at or past), so the put at 3 s writes over an
    expired value; the get after it counts only once it answered."""
    h = history(put("a", "x"), trigger(), put("a", "y"), get("a"), trigger())
    answered = _batches((2, 1000, []), (5, 3000, [(1, "a", "y")]))
    assert spark_state.REWRITE in spark_state.reached(h, answered)
    assert spark_state.REWRITE not in spark_state.reached(
        h, _batches((2, 1000, []), (5, 2999, [(1, "a", "y")]))
    )
    assert spark_state.REWRITE not in spark_state.reached(h, _batches((2, 1000, []), (5, 3000, [])))


def test_a_get_after_a_delete_counts_when_it_answered_none():
    h = history(put("a", "x"), trigger(), Action("delete", {"key": "a"}), get("a"), trigger())
    assert spark_state.DELETED in spark_state.reached(h, _batches((2, 1000, []), (5, 1500, [(1, "a", None)])))
    again = history(put("a", "x"), trigger(), put("a", "y"), get("a"), trigger())
    assert spark_state.DELETED not in spark_state.reached(
        again, _batches((2, 1000, []), (5, 1500, [(1, "a", None)]))
    )
