"""A join trial as the model reads it (`properties/checks/event_time/oracles/join_rows.py: read_join_step`), on
written observations of `PAIRED`'s trial: each side's batches, the committed ones, and the query's watermarks
from the watermarked sides only."""

from __future__ import annotations

from frontier_harness.model.event_time.join import Side
from frontier_harness.model.event_time.stateful import Watermarks
from frontier_harness.properties.checks.event_time.oracles.join_rows import JoinStep, read_join_step
from tests.test_suite_join import INNER, MARKS, ONE_SIDED, PAIRED, S, step


def _read(plan, commits: list[int]) -> JoinStep:
    trial = read_join_step(PAIRED, step(6, [2, 4], commits, MARKS[:2], []), 6, plan)
    assert isinstance(trial, JoinStep), trial
    return trial


def test_a_sides_done_batches_are_its_committed_ones_and_the_last_is_the_newest():
    """At step 6 batch 1 is logged; committed, it is the last; uncommitted, only batch 0 is done."""
    logged = _read(INNER, [0])
    assert [b.id for b in logged.done(Side.LEFT)] == [0] and logged.last == 0
    assert [r.data for r in logged.left[1].records] == ["l2"] and [
        r.data for r in logged.right[1].records
    ] == ["r3"]
    both = _read(INNER, [0, 1])
    assert [b.id for b in both.done(Side.RIGHT)] == [0, 1] and both.last == 1


def test_the_query_watermark_follows_only_the_sides_with_one():
    """The left side unwatermarked: the query's watermark follows the right side's records alone, 5 s behind
    (15 s, then 45 s), never the left's (20 s, 50 s)."""
    assert _read(ONE_SIDED, [0, 1]).marks == Watermarks((0, 10 * S), 40 * S)
