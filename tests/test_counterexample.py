"""Counterexample files: ITF round trip, and every malformed file a typed error naming the field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.time.domains import PartitionedTime
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.counterexample import Counterexample, from_itf, to_itf
from frontier_harness.properties.engine.errors import CounterexampleFormatError
from frontier_harness.properties.engine.history import Action, History


def _example() -> Counterexample:
    history = History(
        "partitioned",
        (
            Action("update", {"data": "a", "time": PartitionedTime(0, 0, 3), "diff": 1}),
            Action("compact", {"since": (PartitionedTime(0, 5, 1),)}),
            Action("read", {"time": PartitionedTime(0, 0, 4)}),
        ),
    )
    return Counterexample("collections", "observations_match_model", history, "spark", "read differs", 2, 7)


def test_round_trip_through_a_file(tmp_path):
    cx = _example()
    path = counterexample.write(cx, tmp_path)
    back = counterexample.read(path)
    assert back.history == cx.history and back.step == 2 and back.seed == 7
    assert path.name.endswith(".itf.json") and counterexample.write(cx, tmp_path) == path


def test_a_file_whose_lane_is_the_hypothesis_lanes_old_name_reads_as_that_lane():
    """Files written before "lane" meant one thing named the Hypothesis lane "shrinking"."""
    raw = to_itf(_example())
    raw["#meta"]["lane"] = "shrinking"
    assert from_itf(raw).lane == "hypothesis"
    raw["#meta"]["lane"] = "screening"
    assert from_itf(raw).lane == "screening"


def test_the_file_is_itf():
    raw = to_itf(_example())
    assert raw["vars"] == ["step", "action", "args"]
    assert raw["states"][0]["step"] == {"#bigint": "0"}
    assert raw["#meta"]["suite"] == "collections"


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda raw: raw.pop("#meta"), "#meta"),
        (lambda raw: raw["#meta"].update(format_version=99), "#meta.format_version"),
        (lambda raw: raw["#meta"].pop("suite"), "#meta.suite"),
        (lambda raw: raw.update(states="nope"), "states"),
        (lambda raw: raw["states"][0].update(action=5), "states[0].action"),
        (lambda raw: raw["states"][0]["args"].update(time=[3, 1, 0]), "states"),
        (lambda raw: raw["#meta"].update(domain="product(x)"), "states"),
    ],
)
def test_malformed_files_name_the_field(mutate, field):
    raw = to_itf(_example())
    mutate(raw)
    with pytest.raises(CounterexampleFormatError) as info:
        from_itf(raw, "cx.itf.json")
    assert info.value.field == field and "cx.itf.json" in str(info.value)


def test_truncated_file_is_a_typed_error(tmp_path):
    path = counterexample.write(_example(), tmp_path)
    path.write_text(path.read_text()[:40])
    with pytest.raises(CounterexampleFormatError, match="not JSON"):
        counterexample.read(path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300)
@given(JSON, st.sampled_from(["#meta", "states", "root"]))
def test_fuzzed_garbage_is_always_a_typed_error(garbage, where):
    """Garbage is refused with a typed error naming the field; the one garbage that may be accepted is an
    empty list of states (a history of no action), and then it is read as exactly that."""
    raw = to_itf(_example())
    if where == "root":
        raw = garbage
    else:
        raw[where] = garbage
    try:
        cx = from_itf(json.loads(json.dumps(raw)), "fuzz")
    except CounterexampleFormatError:
        return
    assert (where, garbage) == ("states", []), f"garbage accepted at {where}: {garbage!r}"
    assert cx.history.actions == ()
