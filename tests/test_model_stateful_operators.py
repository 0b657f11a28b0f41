"""The model per stateful operator (`model/event_time/`: `dag`, `join`, `session`, `chain`) against its rules
restated here, small and obvious (closed forms where the model simulates batch by batch), and against the
cases `tests/test_spark_stateful_operators.py` pins on real queries."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.errors import InvalidOperatorDag, UndecidedChoice
from frontier_harness.model.event_time.chain import carried, paired, passed_on
from frontier_harness.model.event_time.dag import Node, Passing, input_watermarks, per_operator
from frontier_harness.model.event_time.join import JoinType, Side, StreamJoin, TimeRange, join
from frontier_harness.model.event_time.session import sessionize
from frontier_harness.model.event_time.stateful import (
    Batch,
    Bound,
    Record,
    Span,
    Watermarks,
    Window,
    aggregate,
    deduplicate,
)

S = 1_000


def rec(key: str, t: int, data: str, offset: int = 0) -> Record:
    return Record(key, t, data, 0, offset)


@st.composite
def evictions(draw, batches: int) -> Watermarks:
    """Any watermarks a query may journal: E(N) never goes back."""
    steps = draw(st.lists(st.integers(0, 8), min_size=batches + 1, max_size=batches + 1))
    marks = [sum(steps[: i + 1]) for i in range(batches + 1)]
    return Watermarks(tuple(marks[:-1]), marks[-1])


@st.composite
def timed(draw, batches: int, prefix: str) -> list[Batch]:
    """`batches` batches of records with keys a or b at small event times (one unit: 1 ms)."""
    out = []
    for n in range(batches):
        drawn = draw(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 40)), max_size=3))
        out.append(Batch(n, tuple(rec(k, t, f"{prefix}{n}.{i}", i) for i, (k, t) in enumerate(drawn))))
    return out


# --- joins -------------------------------------------------------------------------------------------


def _state_watermark(spec: StreamJoin, side: Side, e: int) -> int | None:
    """Spark's state watermark, restated: the other side's watermark through the condition solved for this
    side's time, 1 ms less for an inclusive bound; only when both sides are watermarked."""
    if not (spec.left_watermarked and spec.right_watermarked):
        return None
    lower, upper = spec.range.lower, spec.range.upper
    if side is Side.LEFT:  # left >= right + lower, right > E  =>  left > E + lower
        return None if lower is None else e + lower - (not spec.range.strict_lower)
    return None if upper is None else e - upper - (not spec.range.strict_upper)  # right >= left - upper


def _within(spec: StreamJoin, lt: int, rt: int) -> bool:
    r = spec.range
    return (r.lower is None or (lt - rt > r.lower if r.strict_lower else lt - rt >= r.lower)) and (
        r.upper is None or (lt - rt < r.upper if r.strict_upper else lt - rt <= r.upper)
    )


def _arrivals(batches: list[Batch]) -> dict[Record, int]:
    return {r: b.id for b in batches for r in b.records}


def _evicted(spec: StreamJoin, side: Side, record: Record, arrived: int, marks: Watermarks) -> int | None:
    """The batch at whose end `record` leaves its side's state: the first from its arrival whose state
    watermark is at or above its time."""
    for n in range(arrived, len(marks.eviction)):
        wm = _state_watermark(spec, side, marks.eviction[n])
        if wm is not None and record.event_time <= wm:
            return n
    return None


joins = st.builds(
    StreamJoin,
    st.sampled_from(list(JoinType)),
    st.builds(
        TimeRange,
        st.none() | st.integers(-10, 5),
        st.none() | st.integers(0, 12),
        st.booleans(),
        st.booleans(),
    ),
    st.just(("key",)),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(st.data(), joins, st.integers(1, 5))
def test_a_pair_joins_when_the_earlier_row_was_still_stored_when_the_later_came(data, spec, batches):
    """A pair joins iff keys are equal, the range holds, neither row is late (`t <= L` on a watermarked side)
    and each arrived no later than the batch the other left the state in; it is emitted in the later
    arrival's batch. An outer side's row that joined nothing is emitted in the batch it leaves the state."""
    left, right = data.draw(timed(batches, "l")), data.draw(timed(batches, "r"))
    marks = data.draw(evictions(batches))
    out = join(spec, left, right, marks)
    arrived = {Side.LEFT: _arrivals(left), Side.RIGHT: _arrivals(right)}
    live = {
        side: {
            r: n
            for r, n in arrived[side].items()
            if not (spec.watermarked(side) and r.event_time <= marks.late(n))
        }
        for side in Side
    }
    gone = {side: {r: _evicted(spec, side, r, n, marks) for r, n in live[side].items()} for side in Side}

    def met(lr: Record, r: Record) -> bool:
        a, b = live[Side.LEFT][lr], live[Side.RIGHT][r]
        el, er = gone[Side.LEFT][lr], gone[Side.RIGHT][r]
        return (el is None or b <= el) and (er is None or a <= er)

    expected = {
        (lr, r, max(live[Side.LEFT][lr], live[Side.RIGHT][r]))
        for lr in live[Side.LEFT]
        for r in live[Side.RIGHT]
        if lr.key == r.key and _within(spec, lr.event_time, r.event_time) and met(lr, r)
    }
    assert {(p.left, p.right, p.batch) for p in out.matched} == expected
    assert len(out.matched) == len(expected)
    joined = {side: {p.left if side is Side.LEFT else p.right for p in out.matched} for side in Side}
    outer = spec.how.outer
    lone = set() if outer is None else {(r, gone[outer][r]) for r in live[outer] if r not in joined[outer]}
    assert {(u.record, u.batch) for u in out.unmatched} == {(r, n) for r, n in lone if n is not None}
    assert {(s, r) for s, r in out.late} == {(s, r) for s in Side for r in arrived[s] if r not in live[s]}
    for side in Side:
        assert set(out.state[side]) == {r for r, n in gone[side].items() if n is None}
        assert (side in out.unbounded) == (_state_watermark(spec, side, 0) is None)


def test_join_boundaries_as_pinned():
    """`right <= left <= right + 10 s`: a left row at 20 s leaves at E = 20.001 s, not 20 s; a right row at
    25 s stays at E = 35 s and one at 24.999 s leaves; a row at L is late on its side only if watermarked."""
    spec = StreamJoin(JoinType.LEFT_OUTER, TimeRange(0, 10 * S))
    ls = [Batch(0, (rec("a", 20 * S, "l1"),)), Batch(1, ()), Batch(2, ())]
    rs = [Batch(0, (rec("z", 24_999, "gone"), rec("y", 25 * S, "stays"))), Batch(1, ()), Batch(2, ())]
    out = join(spec, ls, rs, Watermarks((0, 20 * S, 35 * S), 35 * S))
    assert [(u.record.data, u.batch) for u in out.unmatched] == [("l1", 2)]
    assert [r.data for r in out.state[Side.RIGHT]] == ["stays"]
    at_late = [Batch(0, ()), Batch(1, (rec("a", 20 * S, "at"), rec("b", 20_001, "above")))]
    for marked, late in ((True, ["at"]), (False, [])):
        spec = StreamJoin(JoinType.INNER, TimeRange(0, 10 * S), left_watermarked=marked)
        out = join(spec, at_late, [Batch(0, ()), Batch(1, ())], Watermarks((20 * S, 20 * S), 20 * S))
        assert [r.data for _, r in out.late] == late


def test_one_watermarked_side_evicts_neither():
    one = StreamJoin(JoinType.LEFT_OUTER, TimeRange(0, 10 * S), left_watermarked=False)
    assert one.state_watermark(Side.LEFT, 10**9) is None and one.state_watermark(Side.RIGHT, 10**9) is None
    assert one.output_watermark(50 * S) == 50 * S


# --- sessions ------------------------------------------------------------------------------------------


def _components(records: list[Record], gap: int) -> list[tuple[int, int, list[Record]]]:
    """The sessions of one group's records: their spans `[t, t + gap)` swept in order of start, one session
    while each next start is at or before the end so far."""
    out: list[tuple[int, int, list[Record]]] = []
    for r in sorted(records, key=lambda r: r.event_time):
        if out and r.event_time <= out[-1][1]:
            start, end, members = out[-1]
            out[-1] = (start, max(end, r.event_time + gap), [*members, r])
        else:
            out.append((r.event_time, r.event_time + gap, [r]))
    return out


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(1, 6), st.integers(1, 12))
def test_sessions_are_the_touching_spans_of_what_is_not_yet_emitted(data, batches, gap):
    """After each batch a group's sessions are the components of the spans of its records that are not late
    (`t + gap <= L`) and not yet emitted; each whose end is at or below E is emitted in that batch."""
    drawn, marks = data.draw(timed(batches, "s")), data.draw(evictions(batches))
    out = sessionize(gap, drawn, marks)
    pending: dict[str, list[Record]] = {}
    emitted, late = set(), []
    for b in drawn:
        for r in b.records:
            if r.event_time + gap <= marks.late(b.id):
                late.append(r)
            else:
                pending.setdefault(r.key, []).append(r)
        for key, records in pending.items():
            done = [c for c in _components(records, gap) if c[1] <= marks.eviction[b.id]]
            emitted |= {(key, s, e, frozenset(m), b.id) for s, e, m in done}
            pending[key] = [r for r in records if not any(r in m for _, _, m in done)]
    model = {(s.group[0], s.span.start, s.span.end, frozenset(s.records), s.batch) for s in out.emitted}
    assert model == emitted and list(out.late) == late
    still = {(k, s, e, frozenset(m)) for k, rs in pending.items() for s, e, m in _components(rs, gap)}
    assert {(s.group[0], s.span.start, s.span.end, frozenset(s.records)) for s in out.open} == still


def test_session_boundaries_as_pinned():
    """Gap 10 s: 0 s and 10 s share a session, 10.001 s opens another; 9 s bridges [0, 10) and [18, 28); with
    L = 130 s a record at 120 s is late and one at 120.001 s is not; E = 130 s emits [120, 130) only."""
    first = Batch(0, (rec("b", 0, "b0"), rec("b", 10 * S, "b10"), rec("c", 0, "c0"), rec("c", 10_001, "c1")))
    bridge = Batch(1, (rec("d", 0, "d0"), rec("d", 18 * S, "d18"), rec("d", 9 * S, "d9")))
    out = sessionize(10 * S, [first, bridge, Batch(2, ())], Watermarks((0, 0, 100 * S), 100 * S))
    assert sorted((s.group[0], s.span.start, s.span.end) for s in out.emitted) == [
        ("b", 0, 20 * S),
        ("c", 0, 10 * S),
        ("c", 10_001, 20_001),
        ("d", 0, 28 * S),
    ]
    late = Batch(1, (rec("g", 120 * S, "g"), rec("h", 120_001, "h"), rec("e", 120 * S, "e")))
    out = sessionize(10 * S, [Batch(0, ()), late], Watermarks((130 * S, 130 * S), 130 * S))
    assert [r.data for r in out.late] == ["g", "e"] and [s.group for s in out.open] == [("h",)]
    ends = [Batch(0, (rec("e", 120 * S, "e"), rec("f", 120_001, "f"))), Batch(1, ())]
    out = sessionize(10 * S, ends, Watermarks((0, 130 * S), 130 * S))
    assert [(s.group, s.batch) for s in out.emitted] == [(("e",), 1)]


# --- the DAG -------------------------------------------------------------------------------------------


def _watermarked(name: str) -> Node:
    return Node(f"w{name}", Passing.WATERMARK, (Node(name, Passing.SOURCE),))


BETWEEN = StreamJoin(JoinType.INNER, TimeRange(0, 10 * S))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6))
def test_an_operators_input_watermark_is_the_least_of_its_childrens_outputs(origin):
    """Restated per node: a watermark node outputs the query's watermark; an aggregation or deduplication
    passes its input on; a join passes on `min(E + lower - 1, E - upper - 1, E)`; a union the least of its
    children's; a source without a watermark and a flatMapGroupsWithState nothing; a watermark of 0 gives 0
    everywhere, and below 0 reads as 0."""
    joined = Node("join", Passing.JOIN, (_watermarked("l"), _watermarked("r")), BETWEEN)
    union = Node("union", Passing.STATELESS, (joined, _watermarked("x"), Node("plain", Passing.SOURCE)))
    counted = Node("count", Passing.STATEFUL, (union,))
    opaque = Node("groups", Passing.OPAQUE, (counted,))
    after = Node("after", Passing.STATEFUL, (opaque,))
    expected_join = min(origin - 1, origin - 10 * S - 1, origin) if origin else 0
    assert input_watermarks(after, origin) == {
        "join": origin,
        "count": max(0, min(expected_join, origin)),
        "groups": max(0, min(expected_join, origin)),
        "after": 0,
    }


def test_each_operator_gets_its_own_watermarks():
    chain = Node("second", Passing.STATEFUL, (Node("first", Passing.STATEFUL, (_watermarked("s"),)),))
    joined = Node(
        "count",
        Passing.STATEFUL,
        (Node("join", Passing.JOIN, (_watermarked("l"), _watermarked("r")), BETWEEN),),
    )
    marks = Watermarks((0, 20 * S, 20_001), 30 * S)
    assert per_operator(chain, marks) == {"first": marks, "second": marks}
    own = per_operator(joined, marks)
    assert own["join"] == marks and own["count"] == Watermarks((0, 9_999, 10 * S), 30 * S - 10_001)
    assert own["count"].late(2) == 9_999  # L_op(N) = E_op(N-1)


def test_a_dag_spark_refuses_or_the_model_cannot_state_is_refused():
    with pytest.raises(InvalidOperatorDag, match="defined again"):
        input_watermarks(Node("again", Passing.WATERMARK, (_watermarked("s"),)), 5)
    with pytest.raises(InvalidOperatorDag, match="names repeat"):
        input_watermarks(Node("u", Passing.STATELESS, (_watermarked("s"), _watermarked("s"))), 5)
    with pytest.raises(InvalidOperatorDag, match="2 children and a StreamJoin"):
        Node("j", Passing.JOIN, (_watermarked("s"),), BETWEEN)
    with pytest.raises(InvalidOperatorDag, match="no join"):
        Node("c", Passing.STATEFUL, (_watermarked("s"),), BETWEEN)


# --- chains --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.data(), st.integers(1, 6))
def test_a_window_emitted_upstream_is_never_late_downstream_and_lands_in_the_window_holding_its_end(
    data, batches
):
    """Under the same watermarks (an aggregation passes its input on), every window the first aggregation
    emits is counted by the second, in the window that holds its end less a moment (`window_time`)."""
    drawn, marks = data.draw(timed(batches, "c")), data.draw(evictions(batches))
    first = aggregate(Window(4), drawn, marks)
    second = aggregate(Window(12, 6), carried(first, drawn), marks)
    assert second.late == ()
    for span, batch in first.completed.items():
        holding = {s for s in second.kept if s.start < span.end <= s.end}
        assert holding == {
            s for s, rows in second.kept.items() if any(r.data == f"{span.start}:{span.end}" for r in rows)
        }
        assert len(holding) == 2 and all(
            r.event_time + 1 == span.end for s in holding for r in second.kept[s] if r.offset == span.start
        )
        assert any(r.data == f"{span.start}:{span.end}" for r in carried(first, drawn)[batch].records)


def test_a_deduplication_passes_on_what_it_emits_and_refuses_to_guess_a_choice():
    batches = [Batch(0, (rec("x", 9_999, "first"),)), Batch(1, (rec("x", 12 * S, "dup"),)), Batch(2, ())]
    marks = Watermarks((0, 4_999, 7 * S), 7 * S)
    kept = deduplicate(("key",), Bound.FIRST_PLUS_DELAY, batches, marks, delay=5 * S)
    assert [[r.data for r in b.records] for b in passed_on(kept, batches)] == [["first"], [], []]
    two = [Batch(0, (rec("x", 1, "p"), rec("x", 1, "q")))]
    with pytest.raises(UndecidedChoice, match="'p', 'q'"):
        passed_on(deduplicate(("key",), Bound.FIRST_PLUS_DELAY, two, Watermarks((0,), 0), delay=5), two)
    same = [
        Batch(0, (rec("x", 1, "p", 0), rec("x", 1, "p", 1)))
    ]  # a redelivery: any choice passes on the same
    assert (
        len(
            passed_on(
                deduplicate(("key",), Bound.FIRST_PLUS_DELAY, same, Watermarks((0,), 0), delay=5), same
            )[0].records
        )
        == 1
    )


def test_a_join_passes_on_the_kept_sides_time():
    ls = [Batch(0, (rec("a", 5 * S, "l1"), rec("b", 7 * S, "l2"))), Batch(1, ())]
    rs = [Batch(0, (rec("a", 1 * S, "r1"),)), Batch(1, ())]
    out = join(StreamJoin(JoinType.LEFT_OUTER, TimeRange(0, 10 * S)), ls, rs, Watermarks((0, 8 * S), 8 * S))
    rows = paired(out, ls, Side.LEFT)
    assert [(r.data, r.event_time) for r in rows[0].records] == [("l1|r1", 5 * S)]
    assert [(r.data, r.event_time) for r in rows[1].records] == [("l2", 7 * S)]
    assert [(r.data, r.event_time) for b in paired(out, ls, Side.RIGHT) for r in b.records] == [
        ("l1|r1", 1 * S)
    ]
    assert Span(0, 10 * S) in aggregate(Window(10 * S), rows, Watermarks((0, 8 * S), 8 * S)).kept
