"""What a streaming trial committed, read from written observations: the steps observed, the steps a suite
judges, and what a failing outcome shows (`properties/checks/streaming/committed.py`)."""

from __future__ import annotations

from frontier_harness.properties.checks.streaming.committed import failed_at, observed_steps, up_steps

OFFSETS = frozenset({(0, ())})


def test_the_observed_steps_are_those_with_an_offset_log_read():
    obs = {
        (1, "offsets"): OFFSETS,
        (1, "commits"): frozenset({0}),
        (2, "crash"): frozenset({("after_sink",)}),
    }
    assert observed_steps(obs) == [1]


def test_a_step_the_query_was_down_after_is_not_judged_unless_it_failed():
    obs = {(s, "offsets"): OFFSETS for s in (1, 2, 3)}
    obs[(2, "down")] = obs[(3, "down")] = frozenset({("down",)})
    obs[(3, "error")] = frozenset({("StreamingQueryException", "boom")})
    assert up_steps(obs) == [1, 3]


def test_a_failure_shows_the_label_it_is_about_with_the_crashes_and_errors_up_to_its_step():
    crash, error = frozenset({("after_sink",)}), frozenset({("StreamingQueryException", "boom")})
    obs = {
        (1, "offsets"): OFFSETS,
        (1, "commits"): frozenset({0}),
        (1, "crash"): crash,
        (2, "commits"): frozenset({0, 1}),
        (2, "error"): error,
        (3, "commits"): frozenset({0, 1, 2}),
    }
    outcome = failed_at(2, "lost", obs, "commits")
    assert (outcome.ok, outcome.step, outcome.message) == (False, 2, "lost")
    assert outcome.actual == {
        (1, "commits"): frozenset({0}),
        (1, "crash"): crash,
        (2, "commits"): frozenset({0, 1}),
        (2, "error"): error,
    }
