"""How much shrinking one failure may spend: a count of implementation calls, under a wall-clock cap.

Under `ci` (`Profile.shrink_by_calls`) the budget is a count of implementation calls, the
suite's `shrink_calls`: a call is the same call on any machine, loaded or not, so the same
command shrinks to the same counterexample file everywhere. A wall-clock cap
(`Profile.shrink_seconds`) backs it up; in the other profiles it is the budget. Either
way, a cap that stops shrinking is said (`stopped`), never a silent stop.

The budget starts when a run first sees a failure (or a batch first raises: bisecting it
counts), and counts every implementation call from then on.

>>> budget = ShrinkBudget(seconds=600.0, calls=2)
>>> budget.spend(); budget.exhausted()  # nothing counts before a failure is seen
False
>>> budget.start(); budget.spend(); budget.exhausted(), budget.spend(), budget.exhausted()
(False, None, True)
>>> budget.stopped is None  # the count ran out: deterministic, nothing to say
True
"""

from __future__ import annotations

import time

import attrs

from frontier_harness.properties.engine.shrink import Tally


@attrs.define
class ShrinkBudget:
    """`calls` implementation calls (None: no count) within `seconds` of wall-clock time, from `start()`."""

    seconds: float
    calls: int | None = None
    started: float | None = None
    spent: int = 0
    stopped: str | None = None  # why the wall clock stopped shrinking before the count ran out
    tally: Tally = attrs.Factory(Tally)  # each shrink pass's candidates checked and kept

    def start(self) -> None:
        if self.started is None:
            self.started = time.monotonic()

    def spend(self) -> None:
        """One implementation call (counted once the budget has started)."""
        if self.started is not None:
            self.spent += 1

    def exhausted(self) -> bool:
        """Whether shrinking must stop; when the wall clock stops it, `stopped` says so."""
        if self.started is None:
            return False
        if self.calls is not None and self.spent >= self.calls:
            return True
        if time.monotonic() < self.started + self.seconds:
            return False
        counted = f" of {self.calls}" if self.calls is not None else ""
        self.stopped = (
            f"shrinking stopped at its wall-clock cap of {self.seconds:g} s after {self.spent}{counted} "
            "implementation calls: a faster machine may write a smaller file"
        )
        return True
