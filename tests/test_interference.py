"""Histories that fail only together, in one call: found, named together, written as a group file that
replays, shrunk as a group; the other half of a bisected batch still checked; one-history files unchanged.

The interfering implementation (`tests.interfering_impl`) caches by datum, not by history: before, a
`dev` run against it said "held" (a batch that raised only as a whole was dropped as unresolved).
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.batch import UNCHECKED, check_batch
from frontier_harness.properties.engine.errors import CounterexampleFormatError
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.suite import Outcome
from tests.interfering_impl import DataKeyedCache


def _updates(*data: str) -> History:
    return History("total", tuple(Action("update", {"data": d, "time": 0, "diff": 1}) for d in data))


def _check_with(check):
    return SimpleNamespace(check=check)


@pytest.mark.parametrize("profile", ["dev", "ci"])
def test_an_implementation_whose_histories_interfere_fails_with_a_group_file_that_replays(
    profile, tmp_path, capsys
):
    argv = [
        "check",
        "--suite",
        "collections",
        "--impl",
        "tests.interfering_impl:factory",
        "--domain",
        "total",
    ]
    assert main([*argv, "--profile", profile, "--out", str(tmp_path)]) == 1
    assert "fails only together with history 1 in one call: they interfere" in capsys.readouterr().out
    [path] = tmp_path.glob("*.itf.json")
    raw = json.loads(path.read_text())
    assert raw["#meta"]["format_version"] == 2 and raw["#meta"]["histories"] == [1, 1]  # shrunk as a group
    cx = counterexample.read(path)
    assert [len(h.actions) for h in cx.histories] == [1, 1]
    assert {h.actions[0].args["data"] for h in cx.histories} == {cx.history.actions[0].args["data"]}
    assert main(["replay", str(path)]) == 1  # both histories in one call: it still fails


@pytest.mark.parametrize("profile", ["dev", "ci"])
def test_a_wrong_answer_given_only_beside_another_history_is_a_group_file_that_replays(
    profile, tmp_path, capsys
):
    """`tests.interfering_impl:answers` answers a history with an earlier one's of its call: the history
    that got the wrong answer holds alone. Before, its file held one history and its replay said "holds
    now"; now the wrong answer is checked alone, and the call's histories that still give it are the group,
    in their call's order, shrunk, the one that failed named."""
    argv = [
        "check",
        "--suite",
        "collections",
        "--impl",
        "tests.interfering_impl:answers",
        "--domain",
        "total",
    ]
    assert main([*argv, "--profile", profile, "--out", str(tmp_path)]) == 1
    assert re.search(
        r"history 1 of 2 in one call: .*; alone it holds: they interfere",
        " ".join(capsys.readouterr().out.split()),
    )
    [path] = tmp_path.glob("*.itf.json")
    cx = counterexample.read(path)
    assert len(cx.histories) == 2 and cx.size <= 4, cx.histories
    first = [next(a.args["data"] for a in h.actions if a.name == "update") for h in cx.histories]
    assert first[0] == first[1], cx.histories  # both update the same datum first: the cache's key
    assert main(["replay", str(path)]) == 1  # in one call, in that order: it still fails
    assert (
        main(
            [
                "check",
                "--suite",
                "collections",
                "--impl",
                "model",
                "--domain",
                "total",
                "--profile",
                profile,
                "--out",
                str(tmp_path / "m"),
            ]
        )
        == 0
    )


def test_a_failure_kept_from_a_shared_call_is_shrunk_again_alone():
    """Shrinking's candidates share a call. Here a history updating `c` fails, and so does any history checked
    in a call that holds one (as one history's restart restarts every history of a ttl_spark_state call): from
    `[c, a]`, the candidates `[a]` and `[c]` both fail in their call, and the first, `[a]`, holds alone. The kept
    failure is checked alone, and delta-debugged again a candidate a call: `[c]`. (Before, `[a]` was kept, and
    its file's replay said it held.)"""
    from frontier_harness.properties.engine.budget import ShrinkBudget
    from frontier_harness.properties.engine.minimal import reduced

    calls: list[list[str]] = []

    def check(histories):
        data = [[a.args["data"] for a in h.actions] for h in histories]
        calls.append(data)
        crowded = any("c" in d for d in data)
        return [Outcome(ok=not crowded, message="crowded", expected={}, actual={}) for _ in histories]

    run = SimpleNamespace(
        budget=ShrinkBudget(60.0),
        suite=SimpleNamespace(shrink_batch=64),
        check=check,
        counterexample=lambda history, outcome, lane: history,
        announce=lambda *_: None,
    )
    found = _updates("c", "a")
    kept = reduced(run, found, check([found])[0], "screening")
    assert [a.args["data"] for a in kept.actions] == ["c"], calls
    assert ["a"] in calls[1] and [["a"]] in calls, calls  # `[a]` beside `[c]`, then alone
    # found in a call beside another history: `[c]` fails alone, so it is no group of that call
    beside = reduced(run, found, check([found])[0], "screening", call=(found, _updates("b")))
    assert [a.args["data"] for a in beside.actions] == ["c"], calls


def test_each_history_of_the_group_alone_holds():
    impl = DataKeyedCache()
    first, second = _updates("a"), History("total", (Action("update", {"data": "a", "time": 1, "diff": 1}),))
    assert impl.observe_collections(None, [first]) and impl.observe_collections(None, [second])
    with pytest.raises(KeyError, match="cached already"):
        impl.observe_collections(None, [first, second])


def test_the_other_half_of_a_batch_that_failed_only_together_is_still_checked():
    """Before, the half after one that failed only as a whole was marked not checked and never ran."""
    calls: list[int] = []

    def check(impl, histories):
        calls.append(len(histories))
        return impl.observe(histories)

    class Impl(DataKeyedCache):
        def observe(self, histories):
            self.observe_collections(None, histories)
            return [Outcome(ok=True) for _ in histories]

    batch = [_updates("a"), History("total", (Action("update", {"data": "a", "time": 1, "diff": 1}),))]
    batch += [_updates("b"), _updates("c")]
    outcomes = check_batch(_check_with(check), Impl(), batch)
    assert not outcomes[0].ok and outcomes[0].together == (batch[1],)
    assert outcomes[2:] == [Outcome(ok=True), Outcome(ok=True)] and UNCHECKED not in outcomes
    assert calls == [4, 2, 1, 1, 2]  # the batch, its first half, each history of it, the other half


def test_a_group_file_round_trips_and_a_malformed_one_names_the_field(tmp_path):
    cx = counterexample.Counterexample(
        "collections", "observations_match_model", _updates("a"), "m:f", "they interfere", 0,
        together=(_updates("a", "b"),),
    )  # fmt: skip
    path = counterexample.write(cx, tmp_path)
    back = counterexample.read(path)
    assert back.histories == cx.histories and back.together == cx.together
    raw = json.loads(path.read_text())
    raw["#meta"]["histories"] = [1, 1]  # three states
    with pytest.raises(CounterexampleFormatError) as info:
        counterexample.from_itf(raw, "cx")
    assert info.value.field == "#meta.histories"
    raw["#meta"]["histories"] = [2, 1]
    with pytest.raises(CounterexampleFormatError) as info:
        counterexample.from_itf(raw, "cx")
    assert info.value.field == "states[1].history"


def test_a_one_history_file_keeps_format_1_and_its_shape():
    cx = counterexample.Counterexample("collections", "observations_match_model", _updates("a"), "m:f")
    raw = counterexample.to_itf(cx)
    assert raw["#meta"]["format_version"] == 1 and "histories" not in raw["#meta"]
    assert raw["vars"] == ["step", "action", "args"] and "history" not in raw["states"][0]
