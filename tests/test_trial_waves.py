"""A trial suite's check runs its histories in waves doubling from one (`trials.wave_sizes`): a batch that
raises after a wave that failed is blamed on that failure, never on a history that held, and a retry after
an infrastructure failure hears each trial once."""

from __future__ import annotations

from types import SimpleNamespace

from frontier_harness.properties.engine.batch import check_batch
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.suite import Outcome
from frontier_harness.properties.engine.trials import UNCHECKED, in_waves


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


def _checked(impl: Trials, histories: list[History], heard=None) -> list[Outcome]:
    prop = SimpleNamespace(check=lambda impl, hs: in_waves(hs, 2, impl.wave))  # waves of 1, then 2
    return check_batch(prop, impl, histories, heard=heard)


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
