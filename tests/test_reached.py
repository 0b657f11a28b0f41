"""The stateful suite's hard cases (`properties/checks/event_time/reached.py`) at their boundaries, on written
committed batches and watermarks: a case counts exactly when the observation shows it, and not a millisecond
either side (a case counted too often would make "every hard case reached" vacuous)."""

from __future__ import annotations

import pytest

from frontier_harness.model.event_time.stateful import Batch, Record, StatefulPlan, Watermarks, Window
from frontier_harness.properties.checks.event_time import reached as r

S = 1_000
SLIDING = StatefulPlan("aggregation", (5 * S,), Window(10 * S, 5 * S), ("key",), "update", 10 * S)
DEDUPLICATED = StatefulPlan("dropDuplicatesWithinWatermark", (5 * S,), None, ("data",), "append", 5 * S)
SESSIONS = StatefulPlan("aggregation", (5 * S,), None, ("key",), "append", 5 * S, gap=10 * S)


def record(t: int, data: str = "d", key: str = "a", offset: int = 9) -> Record:
    return Record(key, t, data, 0, offset)


def after_newest(plan: StatefulPlan, t: int, mark: int = 20 * S) -> set[str]:
    """The record cases of a record at `t` in batch 1, behind batch 0's 40 s (and 10 s), filtered at `mark`."""
    batches = [Batch(0, (record(40 * S, "n", offset=0), record(10 * S, "m", "b", 1))), Batch(1, (record(t),))]
    return r._record_cases(plan, batches, Watermarks((mark, mark), mark))


@pytest.mark.parametrize(
    "t,cases",
    [
        (17 * S, {r.LATE, r.LATE_AND_KEPT, r.AT_WATERMARK}),  # [10 s, 20 s) ends at L; [15 s, 25 s) does not
        (22 * S, set()),
        (30 * S, set()),  # exactly the promised lateness behind 40 s: not covered
        (30_001, {r.PROMISE}),
        (35 * S, {r.PROMISE}),  # exactly the delay behind: beyond it, covered
        (35_001, set()),
    ],
)
def test_a_records_cases_in_sliding_windows_and_under_a_promise(t, cases):
    assert after_newest(SLIDING, t) == cases


def test_a_deduplicated_record_is_at_the_watermark_only_at_it_and_a_redelivery_repeats_key_time_and_data():
    assert r.AT_WATERMARK in after_newest(DEDUPLICATED, 20 * S)
    assert not {r.AT_WATERMARK} & (after_newest(DEDUPLICATED, 19_999) | after_newest(DEDUPLICATED, 20_001))
    zero = [Batch(0, (record(0),))]
    assert r.AT_WATERMARK not in r._record_cases(DEDUPLICATED, zero, Watermarks((0,), 0))  # no watermark yet
    again = [Batch(0, (record(40 * S, "n", offset=0),)), Batch(1, (record(40 * S, "n", offset=1),))]
    assert r.REDELIVERY in r._record_cases(DEDUPLICATED, again, Watermarks((0, 0), 0))
    moved = [Batch(0, (record(40 * S, "n", offset=0),)), Batch(1, (record(40_001, "n", offset=1),))]
    assert r.REDELIVERY not in r._record_cases(DEDUPLICATED, moved, Watermarks((0, 0), 0))


@pytest.mark.parametrize(
    "t,behind",
    [(20 * S, True), (20_001, False), (10_001, True), (10 * S, False)],  # L = 20 s, gap 10 s
)
def test_a_record_is_behind_the_watermark_within_the_gap(t, behind):
    batches = [Batch(0, ()), Batch(1, (record(t),))]
    cases = r._session_cases(SESSIONS, batches, Watermarks((20 * S, 20 * S), 20 * S), {})
    assert (r.BEHIND in cases) is behind, cases


def test_two_records_exactly_the_gap_apart_share_a_session():
    apart = [Batch(0, (record(1 * S, "p", offset=0), record(11 * S, "q", offset=1)))]
    assert r.SESSION_GAP in r._session_cases(SESSIONS, apart, Watermarks((0,), 0), {})
    further = [Batch(0, (record(1 * S, "p", offset=0), record(11_001, "q", offset=1)))]
    assert r.SESSION_GAP not in r._session_cases(SESSIONS, further, Watermarks((0,), 0), {})


@pytest.mark.parametrize(
    "t,mark,duplicate",
    [
        (15 * S, 0, True),  # x 5 s after x at 10 s: within the delay, dropped
        (15_001, 0, False),  # beyond the delay: emitted again, no duplicate
        (10 * S, 0, False),  # the same event time: a redelivery, not a later duplicate
        (12 * S, 12 * S, False),  # at L: dropped as late, not as a duplicate
        (13 * S, 12 * S, True),
    ],
)
def test_a_duplicate_is_dropped_within_the_delay_of_its_groups_emitted_record(t, mark, duplicate):
    batches = [
        Batch(0, (record(10 * S, "x", offset=0),)),
        Batch(1, (record(t, "x", offset=1), record(t, "y", offset=2))),
    ]
    cases = r._deduplication_cases(DEDUPLICATED, batches, Watermarks((mark, mark), mark))
    assert (r.DUPLICATE in cases) is duplicate, cases


def test_a_record_of_another_group_within_the_delay_is_no_duplicate():
    batches = [Batch(0, (record(10 * S, "x", offset=0),)), Batch(1, (record(12 * S, "y", offset=1),))]
    assert r.DUPLICATE not in r._deduplication_cases(DEDUPLICATED, batches, Watermarks((0, 0), 0))


def test_a_duplicate_a_millisecond_past_the_late_watermark_is_dropped_as_a_duplicate():
    batches = [Batch(0, (record(10 * S, "x", offset=0),)), Batch(1, (record(12_001, "x", offset=1),))]
    assert r.DUPLICATE in r._deduplication_cases(DEDUPLICATED, batches, Watermarks((12 * S, 12 * S), 12 * S))


TUMBLING = StatefulPlan("aggregation", (5 * S,), Window(10 * S), ("key",), "update", 5 * S)


@pytest.mark.parametrize("t,late", [(9_999, True), (10 * S, False)])
def test_a_record_is_late_when_its_windows_end_is_at_or_below_the_watermark(t, late):
    batches = [Batch(0, ()), Batch(1, (record(t),))]  # L(1) = E(0) = 10 s
    cases = r._record_cases(TUMBLING, batches, Watermarks((10 * S, 10 * S), 10 * S))
    assert (r.LATE in cases) is late, cases


def test_journaled_marks_hand_on_the_newest_commits_watermark():
    obs = {
        (4, "offset_metadata"): frozenset({(0, 0, 0, ()), (1, 5 * S, 0, ())}),
        (4, "commit_metadata"): frozenset({(0, 5 * S), (1, 9 * S)}),
    }
    assert r.journaled_marks(obs, 4, 3) == Watermarks((0, 5 * S, 0), 9 * S)


def _partitions(*parts: tuple) -> list[Batch]:
    return [Batch(b, tuple(Record("a", S, f"d{b}{p}", p, b) for p in ps)) for b, ps in enumerate(parts)]


@pytest.mark.parametrize("next_mark,idle", [(10 * S, True), (5 * S, False)])
def test_an_idle_partition_counts_only_once_the_watermark_rose_after_its_batch(next_mark, idle):
    """Batch 0 read partitions 0 and 1, batch 1 only partition 0 (E(1) = 5 s): partition 1 sat idle while
    the watermark rose to E(2), and not when E(2) stayed at 5 s."""
    marks = Watermarks((0, 5 * S, next_mark), next_mark)
    assert (r.IDLE in r._idle(_partitions((0, 1), (0,), ()), marks, {}, 4)) is idle
