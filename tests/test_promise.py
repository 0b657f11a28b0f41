"""The lateness promise's oracle (`properties/checks/event_time/oracles/promise.py`) on written records: which
records a promise covers, where it is implied by `exactly_once`, and what it owes under a deduplication."""

from __future__ import annotations

from frontier_harness.model.event_time.stateful import Batch, Record, StatefulPlan, Watermarks, Window
from frontier_harness.properties.checks.event_time.oracles.promise import covered, implied, promises
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import Step

S = 1_000


def r(t: int, data: str, offset: int = 0) -> Record:
    return Record("a", t, data, 0, offset)


def test_a_record_is_covered_strictly_within_the_lateness_of_the_newest_before_its_batch():
    """Newest 35 s before batch 1, lateness 10 s: 25.001 s is covered, 25 s is not; a first batch's record is
    behind nothing (its own event time)."""
    plan = StatefulPlan("aggregation", (1 * S,), Window(10 * S), ("key",), "update", 10 * S)
    batches = [Batch(0, (r(35 * S, "n"),)), Batch(1, (r(25_001, "in"), r(25 * S, "out")))]
    assert covered(plan, batches, r(25_001, "in"), 1) == 35 * S
    assert covered(plan, batches, r(25 * S, "out"), 1) is None
    assert covered(plan, batches, r(35 * S, "n"), 0) == 35 * S


def test_the_promise_is_implied_within_the_least_delay_and_by_a_key_without_event_time_only_for_an_aggregation():
    """Under watermarks of 1 s and 10 s a 5-second promise is judged (the least delay drops what it covers);
    an aggregation keyed without event time drops nothing, a deduplication keyed so still does."""
    two = StatefulPlan("aggregation", (1 * S, 10 * S), Window(10 * S), ("key",), "update", 5 * S)
    assert implied(two) is None
    running = StatefulPlan("aggregation", (1 * S,), None, ("key",), "update", 5 * S)
    assert "its aggregation's key holds no event time" in (implied(running) or "")
    assert implied(StatefulPlan("dropDuplicates", (1 * S,), None, ("data",), "append", 5 * S)) is None


def test_a_deduplications_promise_owes_the_covered_late_records_of_groups_it_never_emitted():
    """x (35 s) is emitted in batch 0; in batch 2 (L = 34 s) y (29 s) is late and covered, owed; x again
    (28 s) is late but its group was emitted; w (20 s) is late and not covered."""
    plan = StatefulPlan("dropDuplicatesWithinWatermark", (1 * S,), None, ("data",), "append", 10 * S)
    batches = (
        Batch(0, (r(35 * S, "x", 0),)),
        Batch(1, ()),
        Batch(2, (r(29 * S, "y", 1), r(28 * S, "x", 2), r(20 * S, "w", 3))),
    )
    step = Step(5, batches, frozenset({0, 1, 2}), Watermarks((0, 34 * S, 34 * S), 34 * S))
    [owed] = promises(plan, step)
    assert owed.span is None and [(rec.data, batch) for rec, batch in owed.records] == [("y", 2)], owed
