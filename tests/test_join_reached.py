"""A stream-stream join's hard cases (`properties/checks/event_time/join.py: reached`) on written observations
of `PAIRED`'s trial: each counts exactly when the observation shows it, and not a millisecond either side."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.model.event_time.join import TimeRange
from frontier_harness.properties.checks.event_time import join
from tests.test_suite_join import INNER, MARKS, ONE_SIDED, OUTER, PAIRED, Impl, S, step

FINAL = len(PAIRED.actions)  # the step the joined state is read at
PAIRED_ROWS = [(("l0", "r1"), 1)]  # l0 at 20 s and r1 at 15 s: 5 s apart


def cases(plan, marks=MARKS, rows=PAIRED_ROWS, state=(), earlier=None) -> list[str]:
    obs = step(8, [2, 4, 5], [0, 1, 2], marks, rows) | {(FINAL, "join_state"): frozenset(state)}
    return join.reached(plan, PAIRED, obs | (earlier or {}))


def ranged(lower: int, upper: int):
    return attrs.evolve(INNER, join=attrs.evolve(INNER.join, range=TimeRange(lower, upper)))


@pytest.mark.parametrize(
    "lower,upper,boundary",
    [(0, 5 * S, True), (5 * S, 10 * S, True), (0, 5_001, False), (4_999, 10 * S, False)],
)
def test_a_pair_counts_at_a_bound_of_the_range_only_exactly_there(lower, upper, boundary):
    assert (join.BOUNDARY in cases(ranged(lower, upper))) is boundary


@pytest.mark.parametrize("mark,late", [(8 * S, True), (10 * S, True), (7_999, False)])
def test_a_record_is_late_on_its_side_at_or_below_the_watermark_of_the_batch_before_its_own(mark, late):
    """l4 (8 s) arrives in batch 2: late when E(1) is at or above 8 s and no row holds it."""
    assert (join.LATE_SIDE in cases(INNER, marks=[0, mark, 40 * S])) is late


def test_a_late_record_a_row_holds_or_on_a_side_no_watermark_bounds_is_not_dropped():
    assert join.LATE_SIDE not in cases(INNER, rows=[*PAIRED_ROWS, (("l4", "r1"), 1)])
    assert join.LATE_SIDE not in cases(ONE_SIDED)


def test_the_state_is_read_after_every_committed_batch_and_a_row_gone_later_was_evicted():
    read = [(b, side, None, None) for b in (0, 1, 2) for side in ("left", "right")]
    assert join.STATE_READ in cases(INNER, state=read)
    assert join.STATE_READ not in cases(INNER, state=read[:4])  # batch 2's never read
    held = [(0, "left", "l0", 20000)]
    assert join.EVICTED in cases(INNER, state=[*read, *held])
    assert join.EVICTED not in cases(
        INNER, state=[*read, *held, (1, "left", "l0", 20000), (2, "left", "l0", 20000)]
    )
    only_right_later = [(0, "left", None, None), *[(b, "right", None, None) for b in (1, 2)], *held]
    assert join.EVICTED not in cases(INNER, state=only_right_later)


def test_an_outer_row_counts_when_an_earlier_up_step_after_its_batch_lacked_it():
    """l2 (b, 50 s) never matches; its batch 1 committed at step 6, whose rows lack its outer row."""
    rows = [*PAIRED_ROWS, (("l2", None), 1)]
    before = step(6, [2, 4], [0, 1], MARKS[:2], PAIRED_ROWS)
    assert join.OUTER in cases(OUTER, rows=rows, earlier=before)
    already = step(6, [2, 4], [0, 1], MARKS[:2], rows)
    assert join.OUTER not in cases(OUTER, rows=rows, earlier=already)


def test_a_join_reaches_only_the_crashes_of_the_streaming_suites_cases():
    assert not [c for c in cases(INNER) if "trigger" in c]  # the query's settings are no case of a join


def test_only_the_read_markers_say_a_sides_state_was_read_and_reads_alone_evict_nothing():
    read = [(b, side, None, None) for b in (0, 1, 2) for side in ("left", "right")]
    assert join.EVICTED not in cases(INNER, state=read)
    assert join.STATE_READ not in cases(INNER, state=[*read[:4], (2, "left", "l2", 50000)])
    rows_alone = [(0, "left", "l0", 20000), (2, "left", "l2", 50000)]  # no marker: no read shows l0 gone
    assert join.EVICTED not in cases(INNER, state=rows_alone)


def test_an_outer_row_held_since_its_batch_committed_is_no_later_emission():
    """An up step before batch 1 committed lacks l2's outer row: it was not owed yet."""
    rows = [*PAIRED_ROWS, (("l2", None), 1)]
    owed_later = step(3, [2], [0], MARKS[:1], PAIRED_ROWS) | step(6, [2, 4], [0, 1], MARKS[:2], rows)
    assert join.OUTER not in cases(OUTER, rows=rows, earlier=owed_later)


@pytest.mark.parametrize("lower,stale", [(-19_999, True), (-20 * S, False)])
def test_a_row_is_stale_once_its_sides_state_watermark_reaches_its_event_time(lower, stale):
    """The left side's state watermark after batch 2 is E(2) = 40 s plus the range's lower bound, less 1 ms:
    20 s with a lower bound of -19.999 s, where l0 (20 s) is stale; a millisecond lower, it is not."""
    read = {(b, s, None, None) for b in range(3) for s in ("left", "right")}
    held = step(FINAL, [2, 4, 5], [0, 1, 2], MARKS, [], join_state=read | {(2, "left", "l0", 20000)})
    assert (not join.state_bounded(Impl(ranged(lower, 10 * S)), [PAIRED], [held])[0].ok) is stale


def test_a_pair_no_record_explains_is_unexpected_and_named_once_unless_repeated():
    once = step(8, [2, 4, 5], [0, 1, 2], MARKS, [*PAIRED_ROWS, (("l2", "r3"), 1)])
    [outcome] = join.EXACTLY_ONCE(Impl(INNER), [PAIRED], [once])
    assert ": unexpected [(l2 " in outcome.message and " x1" not in outcome.message, outcome.message
    twice = step(8, [2, 4, 5], [0, 1, 2], MARKS, [*PAIRED_ROWS, (("l2", "r3"), 2)])
    assert join.EXACTLY_ONCE(Impl(INNER), [PAIRED], [twice])[0].message.endswith(" x2]")


def test_a_joins_first_batch_is_its_first_trigger_and_a_trial_it_could_not_read_is_that_failure():
    assert join._first_batch(PAIRED) == 3
    uncommitted = step(FINAL, [2, 4, 5], [0, 1], MARKS, [])  # batch 2 logged, never committed, at the end
    [outcome] = join.state_bounded(Impl(INNER), [PAIRED], [uncommitted])
    assert not outcome.ok and "records never processed" in outcome.message, outcome.message


def test_a_join_has_its_own_judges_and_the_stateful_suites_laws_once_each():
    assert [p.name for p in join.properties(INNER)] == [
        "exactly_once",
        "lateness_kept",
        "state_bounded",
        "offset_log_is_remap",
        "bounded_input_reliance",
        "laws_under_sigkill",
    ]


def test_all_laws_of_a_join_fails_a_trial_with_the_first_judge_that_fails_it():
    """The pair is right and the offset log a remap, but no state of the join was read: `state_bounded` says so."""
    rows = step(8, [2, 4, 5], [0, 1, 2], MARKS, PAIRED_ROWS) | step(
        FINAL, [2, 4, 5], [0, 1, 2], MARKS, PAIRED_ROWS
    )
    [outcome] = join.all_laws(Impl(INNER), [PAIRED], [rows])
    assert not outcome.ok and outcome.message.startswith(
        "no state of the join's left side was read after batch 0"
    )
