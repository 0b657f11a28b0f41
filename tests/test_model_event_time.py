"""The model's micro-batch event-time contract (`model/event_time/stateful.py`) against the rules restated
here, small and obvious, and against the cases `tests/test_spark_event_time.py` pins on real queries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.event_time.stateful import (
    Batch,
    Bound,
    Policy,
    Record,
    Span,
    StatefulPlan,
    Watermarks,
    Window,
    aggregate,
    deduplicate,
    watermarks,
)

S = 1_000


def record(t: int, data: str = "x", key: str = "k", offset: int = 0) -> Record:
    return Record(key, t, data, 0, offset)


def batches(*times: tuple[int, ...]) -> list[Batch]:
    return [Batch(i, tuple(record(t, f"r{i}.{j}") for j, t in enumerate(ts))) for i, ts in enumerate(times)]


event_times = st.lists(st.lists(st.integers(0, 100_000), max_size=4), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(event_times, st.integers(0, 20_000))
def test_one_watermark_is_the_newest_before_minus_the_delay_never_below_zero(times, delay):
    """E(N) = max(0, newest event time of the batches before N - delay), whatever restarts there are."""
    drawn = batches(*map(tuple, times))
    restarted = [Batch(b.id, b.records, run_start=b.id % 2 == 1) for b in drawn]
    for marks in (watermarks(drawn, (delay,)), watermarks(restarted, (delay,))):
        for n in range(len(drawn)):
            before = [t for ts in times[:n] for t in ts]
            assert marks.eviction[n] == max(0, max(before, default=0) - delay)
            assert marks.late(n) == (marks.eviction[n - 1] if n else 0)


def test_several_inputs_meet_or_join_and_a_restart_keeps_only_the_global_watermark():
    """The pinned case: inputs of delays 10 s and 20 s see 50 s, then 30 s; a restart, then 31 s."""
    two = [Batch(0, (), inputs=((50 * S,), ())), Batch(1, (), inputs=((), (30 * S,))), Batch(2, ())]
    assert watermarks(two, (10 * S, 20 * S), Policy.MIN).eviction == (0, 0, 10 * S)
    assert watermarks(two, (10 * S, 20 * S), Policy.MAX).eviction == (0, 40 * S, 40 * S)
    again = [*two, Batch(3, (), run_start=True, inputs=((), (31 * S,)))]
    assert watermarks(again, (10 * S, 20 * S), Policy.MIN).next == 10 * S  # 50 s forgotten: min(0, 11 s)
    assert watermarks(again[:3] + [Batch(3, (), inputs=((), (31 * S,)))], (10 * S, 20 * S)).next == 11 * S


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(0, 30), st.integers(-100, 100))
def test_a_time_falls_in_every_window_of_the_grid_that_holds_it(duration, slide, start, t):
    window = Window(duration, slide, start)
    grid = [s for s in range(-400, 400) if (s - start) % slide == 0]
    assert window.containing(t) == tuple(Span(s, s + duration) for s in grid if s <= t < s + duration)


@settings(max_examples=200, deadline=None)
@given(event_times, st.integers(0, 20_000))
def test_a_record_counts_for_a_window_unless_the_window_ends_at_or_below_its_batch_L(times, delay):
    window = Window(10 * S, 5 * S)
    drawn = batches(*map(tuple, times))
    marks = watermarks(drawn, (delay,))
    agg = aggregate(window, drawn, marks)
    for b in drawn:
        for r in b.records:
            for span in window.containing(r.event_time):
                assert (r in agg.kept.get(span, ())) == (span.end > marks.late(b.id))
                assert ((r, span) in agg.late) == (span.end <= marks.late(b.id))
    for span, batch in agg.completed.items():
        assert marks.eviction[batch] >= span.end and (batch == 0 or marks.eviction[batch - 1] < span.end)


def test_window_boundaries_as_pinned():
    """A window ending exactly at L is late, one ending 1 ms later is counted; a window is emitted in the
    batch whose E equals its end."""
    late = watermarks(batches((35 * S,), (), (15 * S,)), (15 * S,))  # L(2) = 20 s: [10 s, 20 s) ends at it
    assert aggregate(Window(10 * S), batches((35 * S,), (), (15 * S,)), late).late[0][1] == Span(
        10 * S, 20 * S
    )
    kept = batches((34_999,), (), (15 * S,))
    assert Span(10 * S, 20 * S) in aggregate(Window(10 * S), kept, watermarks(kept, (15 * S,))).kept
    at_end = batches((35 * S,), ())  # E(1) = 25 s: [20 s, 30 s) is not complete, [10 s, 20 s) is
    agg = aggregate(
        Window(10 * S),
        batches((15 * S,), (35 * S,), ()),
        watermarks(batches((15 * S,), (35 * S,), ()), (15 * S,)),
    )
    assert agg.completed == {Span(10 * S, 20 * S): 2}
    assert watermarks(at_end, (10 * S,)).eviction == (0, 25 * S)


def test_a_deduplication_drops_a_record_at_L_and_keeps_one_a_millisecond_above():
    drawn = [
        Batch(0, (record(30 * S, "m"),)),
        Batch(1, ()),
        Batch(2, (record(20 * S, "at", "b"), record(20_001, "above", "c"))),
    ]
    marks = watermarks(drawn, (10 * S,))
    out = deduplicate(("key", "event_time"), Bound.EVENT_TIME, drawn, marks)
    assert [r.data for r in out.late] == ["at"]
    assert [e.candidates[0].data for e in out.emitted] == ["m", "above"]


def test_within_the_watermark_a_key_expires_once_E_reaches_its_first_time_plus_the_delay():
    """The pinned case: `a` at 10 s, delay 5 s; E reaches 15 s (or 14.999 s); a duplicate of `a` at 16 s."""
    for advance, again in ((20 * S, True), (19_999, False)):
        drawn = [
            Batch(0, (record(10 * S, "first", "a", 0),)),
            Batch(1, ()),
            Batch(2, (record(advance, "adv", "b", 1),)),
            Batch(3, ()),
            Batch(4, (record(16 * S, "dup", "a", 2),)),
        ]
        marks = watermarks(drawn, (5 * S,))
        out = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, drawn, marks, delay=5 * S)
        assert ("dup" in [e.candidates[0].data for e in out.emitted]) is again


def test_several_candidates_in_one_batch_are_a_choice_and_a_later_record_may_follow_it():
    first = Batch(0, (record(10 * S, "x", "a", 0), record(14 * S, "y", "a", 1)))
    marks = Watermarks((0, 12 * S, 12 * S), 12 * S)
    later = Batch(2, (record(13 * S, "z", "a", 2),))  # held if x (15 s) was kept... or y (19 s): both hold it
    out = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, [first, Batch(1, ()), later], marks, delay=5 * S)
    assert [(len(e.candidates), e.certain) for e in out.emitted] == [(2, True)]
    marks = Watermarks((0, 16 * S, 16 * S), 16 * S)  # x's entry expired, y's not: z may or may not be emitted
    later = Batch(2, (record(17 * S, "z", "a", 2),))
    out = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, [first, Batch(1, ()), later], marks, delay=5 * S)
    assert [(e.candidates[0].data, e.certain) for e in out.emitted] == [("x", True), ("z", False)]


def test_what_bounds_the_state():
    window = Window(10 * S)
    assert StatefulPlan("aggregation", (S,), window).bound is Bound.WINDOW_END
    assert StatefulPlan("aggregation", (S,), None, ("key",)).bound is Bound.NONE
    assert StatefulPlan("aggregation", (), window).bound is Bound.NONE
    assert StatefulPlan("dropDuplicates", (S,), None, ("key", "event_time")).bound is Bound.EVENT_TIME
    assert StatefulPlan("dropDuplicatesWithinWatermark", (S,), None, ("key",)).bound is Bound.FIRST_PLUS_DELAY
