"""A trial suite's check runs its histories in waves doubling from one (`trials.wave_sizes`): a batch that
raises after a wave that failed is blamed on that failure, never on a history that held; a candidate refused
unrun stops no wave and hides no history that raised; a retry after an infrastructure failure hears each
trial once; and a lane counts only the trials that ran."""

from __future__ import annotations

from types import SimpleNamespace

import attrs

from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.engine.batch import check_batch
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.run import FOUND, Run
from frontier_harness.properties.engine.search import hypothesis_lane
from frontier_harness.properties.engine.suite import Outcome, Property, Suite
from frontier_harness.properties.engine.trials import UNCHECKED, in_waves, unless_refused
from tests.helpers import QUICK


def _named(*names: str) -> list[History]:
    return [History("total", (Action("update", {"data": n, "time": 0, "diff": 1}),)) for n in names]


def _name(history: History) -> str:
    return history.actions[0].args["data"]


class Trials:
    """Trials judged by name: `fails` fail, a wave holding one of `raises` raises (as a query's failure on
    the driver raises the whole wave), `drops` raises `ConnectionError` once (infrastructure)."""

    name = "trials"

    def __init__(self, fails=(), raises=(), drops=()):
        self.fails, self.raises, self.drops = set(fails), set(raises), set(drops)

    def infrastructure_failure(self, exc: Exception) -> str | None:
        return "dropped" if isinstance(exc, ConnectionError) else None

    def recover(self) -> None:
        pass

    def wave(self, histories):
        names = [_name(h) for h in histories]
        if self.raises & set(names):
            raise KeyError(sorted(self.raises & set(names))[0])
        if self.drops & set(names):
            self.drops.clear()
            raise ConnectionError("the server went away")
        return [Outcome(ok=n not in self.fails, message=f"{n} failed") for n in names]


def _checked(impl: Trials, histories: list[History], heard=None, size=2, refuses=()) -> list[Outcome]:
    """Checked as a trial suite checks them: in waves of 1, 2, .. `size`, each wave's histories named in
    `refuses` refused unrun (`unless_refused`, as a shrink's candidate no trial can hold)."""

    def refused(history: History) -> Outcome | None:
        if _name(history) not in refuses:
            return None
        return Outcome(ok=False, rejected=True, disagreement=True, message=f"{_name(history)} refused")

    def check(impl, hs):
        return in_waves(hs, size, lambda wave: unless_refused(wave, refused, impl.wave))

    return check_batch(SimpleNamespace(check=check), impl, histories, heard=heard)


def test_a_batch_that_raises_after_a_failing_wave_reports_that_failure_not_an_interference():
    """`[a, b, c]`: `b` fails and `c` raises, in the wave `[b, c]`. Searched, the half `[b, c]` stops at `b`'s
    failure before reaching `c`: `b` is the failure, `c` unchecked, and `a` (which held) is never blamed
    as failing "only together" with the others."""
    outcomes = _checked(Trials(fails={"b"}, raises={"c"}), _named("a", "b", "c"))
    assert outcomes[0].ok and outcomes[1].message == "b failed" and outcomes[2] is UNCHECKED, outcomes
    assert not any("interfere" in o.message for o in outcomes)


def test_the_retry_after_an_infrastructure_failure_hears_each_trial_once():
    """The wave `[b, c]` loses its connection after `a` was heard: the retry runs every trial again, and
    hears only `b` and `c` (a trial heard twice was announced against the next history's number)."""
    heard: list[str] = []
    outcomes = _checked(Trials(drops={"b"}), _named("a", "b", "c"), heard=lambda o: heard.append(o.message))
    assert [o.ok for o in outcomes] == [True, True, True]
    assert len(heard) == 3, heard


def test_a_half_that_failed_deeper_in_the_search_ends_it_there():
    """`[a .. h]`: `b` fails and `c` raises (the wave `[b, c]`). The half `[a .. d]` raises; its half `[a, b]`
    fails on its own at `b`: the search ends there, and the histories after it, `[e .. h]` too, are not
    checked (the lane reports `b`, the first failure)."""
    outcomes = _checked(Trials(fails={"b"}, raises={"c"}), _named(*"abcdefgh"))
    assert outcomes[1].message == "b failed" and outcomes[2:] == [UNCHECKED] * 6, outcomes


def test_a_candidate_refused_unrun_does_not_hide_the_history_that_raised():
    """A shrink's call `[a, b, c, d]` (one wave): `b` is refused unrun, `d` raises. The half `[a, b]` holds
    but for `b`'s refusal, which is no failure of the implementation: the half `[c, d]` is still searched
    and `d` found raising alone (it used to be left unchecked, and the shrink lost the smaller failure)."""
    outcomes = _checked(Trials(raises={"d"}), _named(*"abcd"), size=4, refuses={"b"})
    assert [o.ok for o in outcomes] == [True, False, True, False], outcomes
    assert outcomes[1].message == "b refused" and outcomes[3].message == "implementation raised KeyError: 'd'"


def test_a_refusal_stops_no_wave_so_the_raise_after_it_in_a_call_of_waves_is_found():
    """A shrink's call holds whole passes, often more candidates than a wave: `[a .. p]` runs in waves of 1,
    2, 4, 4, 4, 1, and the wave `[h .. k]` raises at `j` (`i` refused, unrun). The refusal stops no wave, nor
    the search: the half `[i .. p]` (waves of 1, 2, 4, 1) reaches `j`, found raising alone; the candidates
    after it are not checked (the lane reports `j`)."""
    outcomes = _checked(Trials(raises={"j"}), _named(*"abcdefghijklmnop"), size=4, refuses={"i"})
    assert all(o.ok for o in outcomes[:8]) and outcomes[8].message == "i refused", outcomes
    assert outcomes[9].message == "implementation raised KeyError: 'j'", outcomes[9]
    assert outcomes[10:] == [UNCHECKED] * 6, outcomes


def test_the_candidates_after_a_refused_one_still_run():
    """`[a .. h]` in waves of 1, 2, 4, 1: `b` is refused in the second wave, `f` fails in the third. A
    refusal is no failure of the implementation: the waves after it run, and `f` is found (`h`, in the wave
    after `f`'s, is not run)."""
    outcomes = _checked(Trials(fails={"f"}), _named(*"abcdefgh"), size=4, refuses={"b"})
    assert outcomes[1].message == "b refused" and outcomes[5].message == "f failed", outcomes
    assert [o.ok for o in outcomes[:7]] == [True, False, True, True, True, False, True], outcomes
    assert outcomes[7] is UNCHECKED


def test_the_hypothesis_lane_counts_only_the_trials_that_ran():
    """A lane's count is what its verdict rests on: the trials a wave left `UNCHECKED` after a failure are
    not among its histories (the screening lane already counted so; this lane counted its whole batch)."""
    ran: list[int] = []

    def wave(histories):  # every trial after the run's first fails
        ran.extend(range(len(ran), len(ran) + len(histories)))
        return [Outcome(ok=n == 0, message=f"trial {n} failed") for n in ran[-len(histories) :]]

    prop = Property("p", "", draw_collection_history, lambda impl, hs: in_waves(hs, 2, wave))
    suite = Suite("trials", "", (prop,), "model", domains=("total",))
    at_found: list[int] = []
    found = lambda cx, event: at_found.append(len(ran)) if event == FOUND else None  # noqa: E731
    profile = attrs.evolve(QUICK, screening_histories=0, shrink_seconds=0)
    result = hypothesis_lane(Run(suite, prop, Trials(), "trials", "total", profile, 0, found=found))
    assert result.failure is not None and at_found, result
    assert result.examples == at_found[0], (result.examples, at_found)
