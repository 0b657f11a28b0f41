"""The stateful oracle's parts (`properties/checks/event_time/oracles/stateful_rows.py`) on written records: which
batches count, which windows append mode holds, and how emissions and sessions are packed into frames (a
frame, run as a batch job, must hold a group at most once)."""

from __future__ import annotations

import pytest

from frontier_harness.model.event_time.stateful import Batch, Record, StatefulPlan, Watermarks, Window
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import (
    Part,
    Pick,
    Step,
    expected_parts,
    frames_of,
)

S = 1_000


def r(key: str, t: int, data: str, offset: int) -> Record:
    return Record(key, t, data, 0, offset)


def test_only_committed_batches_count_and_append_mode_holds_a_window_once_e_reaches_its_end():
    """Batch 1 is logged, not committed: its record counts nowhere. Window [10 s, 20 s) is held once E of the
    last committed batch is 20 s, not at 19.999 s."""
    plan = StatefulPlan("aggregation", (5 * S,), Window(10 * S), ("key",), "append", 5 * S)
    batches = (Batch(0, (r("a", 12 * S, "x", 0),)), Batch(1, (r("a", 15 * S, "y", 1),)))
    assert [b.id for b in Step(3, batches, frozenset({0}), Watermarks((0, 20 * S), 20 * S)).done] == [0]
    for mark, held in ((20 * S, True), (19_999, False)):
        step = Step(3, batches[:1], frozenset({0}), Watermarks((mark,), mark))
        parts = expected_parts(plan, step)
        assert bool(parts) is held and all(p.picks[0].frame == (("a", 12 * S, "x", 0, 0),) for p in parts)


def test_a_group_emitted_again_goes_to_a_frame_of_its_own_and_a_choice_is_a_part_of_its_own():
    """Within the watermark on `key`: a (3 s) expires at 8 s, before a (9.5 s) comes (L = 9 s), so a is
    emitted twice, each in a frame of its own. b's two records in one batch are Spark's choice: one part whose
    picks are either; c is emitted once."""
    plan = StatefulPlan("dropDuplicatesWithinWatermark", (5 * S,), None, ("key",), "append", 5 * S)
    batches = (
        Batch(0, (r("a", 3 * S, "x", 0), r("b", 4 * S, "p", 1), r("b", 4 * S, "q", 2))),
        Batch(1, ()),
        Batch(2, (r("a", 9_500, "y", 3), r("c", 9_500, "z", 4))),
    )
    step = Step(5, batches, frozenset({0, 1, 2}), Watermarks((0, 9 * S, 9 * S), 9 * S))
    parts = expected_parts(plan, step)
    once = [p for p in parts if p.what == "the records emitted once each"]
    assert sorted(len(p.picks[0].frame) for p in once) == [1, 2], once  # {a: x, c: z} and {a: y}
    [choice] = [p for p in parts if p not in once]
    assert [pick.frame[0][2] for pick in choice.picks] == ["p", "q"], choice


def test_two_sessions_of_one_group_are_in_frames_of_their_own():
    """a's sessions [1 s, 11 s) and [30 s, 40 s), both closed at E = 45 s: run together as a batch job they
    would be one group's two sessions in one frame, so each has its own."""
    plan = StatefulPlan("aggregation", (5 * S,), None, ("key",), "append", 5 * S, gap=10 * S)
    batches = (Batch(0, (r("a", 1 * S, "p", 0), r("a", 30 * S, "q", 1))), Batch(1, ()))
    parts = expected_parts(plan, Step(3, batches, frozenset({0, 1}), Watermarks((0, 45 * S), 45 * S)))
    assert sorted(p.picks[0].frame[0][2] for p in parts) == ["p", "q"], parts
    assert len({p.picks[0].frame for p in parts}) == 2, parts


def test_an_unjudged_part_reads_no_frame():
    judged, unjudged = (("a", 1, "x", 0, 0),), (("a", 2, "y", 0, 1),)
    parts = [Part((Pick(judged),), "judged"), Part((Pick(unjudged),), "not judged", unjudged=True)]
    assert frames_of(parts) == [judged]


def test_a_chain_enumerates_up_to_256_choices_among_duplicates_and_names_the_first_undecided_group_beyond():
    """Each group of two records with one `data` and different event times in one batch: Spark passes on
    either. Eight groups make 256 inputs to judge; nine, 512, are more than the suite enumerates, and the
    first group with a choice is named (x0 has one record: no choice)."""
    from frontier_harness.model.errors import UndecidedChoice
    from frontier_harness.model.event_time.stateful import Deduplication
    from frontier_harness.properties.checks.event_time.oracles.stateful_rows import Step, inputs

    plan = StatefulPlan(
        "aggregation",
        (5,),
        Window(10),
        (),
        "append",
        None,
        Deduplication("dropDuplicatesWithinWatermark", ("data",)),
    )

    def groups(n: int) -> Step:
        records = [
            Record("a", t, f"x{g}", 0, 2 * g + t - 3) for g in range(n + 1) for t in (3, 4) if g or t == 3
        ]
        return Step(1, (Batch(0, tuple(records)),), frozenset({0}), Watermarks((0,), 0))

    assert len(inputs(plan, groups(8))) == 256
    with pytest.raises(UndecidedChoice) as raised:
        inputs(plan, groups(9))
    assert (raised.value.group, raised.value.candidates) == (("x1",), ["x1", "x1"])
