"""One property on one domain against one implementation (`Run`): what every search lane and every
shrink takes, and what it tells the progress (`Tick`) and the counterexample files (`Found`).

A failure is handed to the run's `found` hook the moment it is found and each time it shrinks, so the
CLI writes the file at once and rewrites it in place; a check that hands its outcomes over one by one
(`frontier_harness.properties.engine.trials.Trials`, a trial suite's real queries) has each reach the
progress as it comes, and its first failure announced before the rest of its batch runs.

Under `--fail-fast` a run carries the run's `Stop` (`frontier_harness.properties.engine.stop`): its first
failure sets it, and every other run ends (`Stopped`) before its next batch and after each trial. A trial
suite's run also judges each trial that held by its `peers`, the suite's other properties drawing the same
histories (their observation is shared: judging costs no query), so a trial that breaks any property stops
the run at that trial, not after every trial of the property judged first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.properties.engine.batch import check_batch
from frontier_harness.properties.engine.budget import ShrinkBudget
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.stop import Stop, Stopped
from frontier_harness.properties.engine.suite import Outcome, Property, Suite
from frontier_harness.properties.engine.verdict import Verdict


@attrs.frozen
class Tick:
    """Where one property on one domain is: `done` histories of `total`, the last `n` of them in `lane`
    (`hypothesis`, the shrinking lane, or `screening`).

    `total` is the profile's count: while the Hypothesis lane runs it is an upper bound (an example is
    a batch of 1 to `batch_size` histories), once the lane ends it is exact. `place` is this property
    and domain's number, of how many the suite runs. `trial` is one history's verdict, when a suite
    reports its histories one by one (the streaming suite: each a real query); `shrinking` when the
    history was checked after a failure was seen (its number may pass the total).
    """

    suite: str
    property: str
    domain: str
    lane: str
    done: int
    total: int
    n: int = 0
    place: tuple[int, int] = (1, 1)
    trial: str | None = None
    shrinking: bool = False


Progress = Callable[[Tick], None]
# Called with a counterexample the moment a lane finds it (FOUND), and each time shrinking makes it
# smaller (SHRUNK), so a file can be written at once and rewritten in place.
Found = Callable[["Counterexample", str], None]
FOUND, SHRUNK = "found", "shrunk"


@attrs.define
class Tally:
    """Histories one run has checked so far, of its expected `total`, and the lane running."""

    done: int = 0
    total: int = 0
    lane: str = "hypothesis"
    found: bool = False  # a failing trial was announced before its batch ended (`Run.check`)
    trials: bool = False  # the check handed its outcomes over one by one: each history is a trial
    trial: int = 0  # the number of the last trial handed over (its batch may not have ended)

    @property
    def checked(self) -> int:
        """Histories checked so far, a batch's trials handed over before it ended included."""
        return max(self.done, self.trial)


def shrink_budget(run: Run) -> ShrinkBudget:
    """A run's shrink budget: the suite's `shrink_calls` under a profile that shrinks by calls (`ci`),
    within the profile's wall-clock `shrink_seconds` (its whole budget in the other profiles)."""
    calls = run.suite.shrink_calls if run.profile.shrink_by_calls else None
    return ShrinkBudget(run.profile.shrink_seconds, calls)


@attrs.frozen
class Run:
    """One property on one domain against one implementation, with the profile and seed: what a lane takes."""

    suite: Suite
    prop: Property
    impl: Implementation
    impl_name: str
    domain: str
    profile: Profile
    seed: int
    progress: Progress | None = None
    budget: ShrinkBudget = attrs.field(default=attrs.Factory(lambda run: shrink_budget(run), takes_self=True))
    found: Found | None = None
    place: tuple[int, int] = (1, 1)
    tally: Tally = attrs.Factory(Tally)
    stop: Stop | None = None
    peers: tuple[Property, ...] = ()  # judge each trial too, under `stop` (see the module)

    @property
    def label(self) -> str:
        return f"{self.suite.name}.{self.prop.name}[{self.domain}]"

    @property
    def key(self) -> str:
        """What names this run in its `Stop`: its label and implementation."""
        return f"{self.label} against {self.impl_name}"

    def halt(self) -> None:
        """Ends the run (`Stopped`) when another run's failure set the stop."""
        if self.stop is not None and self.stop.stops(self.key):
            raise Stopped(self.key)

    def check(self, histories: Sequence[History]) -> list[Outcome]:
        """`check_batch`; each outcome a check hands over as its trial ends (`Trials`) reaches the progress,
        and the run's first failing one is announced (`FOUND`) at once, before the rest of its batch is
        checked (a streaming batch is minutes of real queries); under a `stop`, `halt` before the batch and
        after each trial."""
        self.halt()
        trials = iter(enumerate(histories, self.tally.done + 1))

        def trial(outcome: Outcome) -> None:
            number, history = next(trials, (0, None))
            self._trial(number, history, outcome)

        return check_batch(
            self.prop, self.impl, histories, self.suite, self.budget.start, self.budget.spend, trial
        )

    def _trial(self, number: int, history: History | None, outcome: Outcome) -> None:
        self.tally.trials = True
        self.tally.trial = max(self.tally.trial, number)
        self.tick(0, number, outcome)
        if history is None or outcome.unresolved or self.budget.started or self.tally.found:
            return
        if outcome.ok:
            self._judged_by_peers(history)
        else:
            self.announce(history, outcome, self.tally.lane, FOUND)
        self.halt()

    def _judged_by_peers(self, history: History) -> None:
        """Under a `stop`, the trial judged by each peer (its shared observation): the first that fails
        sets the stop in the peer's name, which then runs (and finds it) while this run ends."""
        if self.stop is None or self.stop.is_set:
            return
        for peer in self.peers:
            (outcome,) = check_batch(peer, self.impl, [history], self.suite)
            if not outcome.ok and not outcome.unresolved:
                self.stop.set(f"{self.suite.name}.{peer.name}[{self.domain}] against {self.impl_name}")
                return

    def draw(self, source: Any) -> History:
        return self.prop.draw(source, self.domain)

    def report(self, histories: int) -> None:
        self.tally.done += histories
        self.tick(histories)

    def tick(self, n: int = 0, number: int = 0, trial: Outcome | None = None) -> None:
        """Hands the progress a `Tick`: `n` more histories checked, or the verdict of history `number`."""
        if self.progress is None:
            return
        verdict = None if trial is None else Verdict.HELD if trial.ok else f"failed: {trial.message}"
        done = number or self.tally.done
        shrinking = self.budget.started is not None
        self.progress(
            Tick(self.suite.name, self.prop.name, self.domain, self.tally.lane, done, self.tally.total, n,
                 self.place, verdict, shrinking)
        )  # fmt: skip

    def announce(self, history: History, outcome: Outcome, lane: str, event: str) -> Counterexample:
        """The counterexample of `history`, handed to the `found` hook (`FOUND` or `SHRUNK`) first; the first
        one found sets the run's `stop`."""
        if event == FOUND:
            self.tally.found = True
            if self.stop is not None:
                self.stop.set(self.key)
        cx = self.counterexample(history, outcome, lane)
        if self.found is not None:
            self.found(cx, event)
        return cx

    def counterexample(self, history: History, outcome: Outcome, lane: str) -> Counterexample:
        return Counterexample(
            suite=self.suite.name,
            property=self.prop.name,
            history=history,
            impl=self.impl_name,
            message=outcome.message,
            step=outcome.step,
            seed=self.seed,
            lane=lane,
            model_said=outcome.expected,
            impl_said=outcome.actual,
            trace=outcome.trace,
            job=getattr(self.impl, "streaming_job", None),  # the user's `--job`, which `replay` runs again
            together=outcome.together,
            stopped=self.budget.stopped,
            shrink_passes=tuple(self.budget.tally.lines()),
        )
