"""What happened to each mutant, and the run's score.

- `killed`: a check failed under the mutant (or the mutated module could not be
  imported). Recorded: which check, seconds from the mutant's start until a
  failure was first seen, and the size (actions) of the smallest failing history.
- `survived`: every check that reaches the mutated line held, in every lane.
- `timeout`: a check ran past its limit before anything failed.
- `infrastructure`: Spark failed under the check: never counted as a kill.
- `unreached`: no check's histories run the mutated line (equivalent-suspected:
  a finding about the generators).
- `equivalent`: survived, and named with why in an `--equivalent` file (`equivalents`).

The score is killed / (killed + survived + timeout): infrastructure, unreached
and equivalent mutants are reported, not scored.

>>> from frontier_harness.properties.mutate.mutants import Mutant
>>> m = Mutant("a.py", 1, 0, "compare", 0, "a", 0, "x < y", "x <= y", True, 1, 1)
>>> run = MutationRun("a", "ci", 0, (MutantResult(m, KILLED, 2.0), MutantResult(m, SURVIVED)), 5.0, 1)
>>> run.score, run.median_seconds_to_kill
(0.5, 2.0)
"""

from __future__ import annotations

import statistics
from collections import Counter

import attrs

from frontier_harness.properties.mutate.baseline import Baseline
from frontier_harness.properties.mutate.mutants import Mutant

KILLED, SURVIVED, TIMEOUT, INFRASTRUCTURE, UNREACHED, EQUIVALENT = (
    "killed",
    "survived",
    "timeout",
    "infrastructure",
    "unreached",
    "equivalent",
)
STATUSES = (KILLED, SURVIVED, TIMEOUT, INFRASTRUCTURE, UNREACHED, EQUIVALENT)
SCORED = (KILLED, SURVIVED, TIMEOUT)


@attrs.frozen
class MutantResult:
    """One mutant's verdict; `check` and `lane` say what killed it (or ran out of time)."""

    mutant: Mutant
    status: str
    seconds: float = 0.0
    check: str = ""
    lane: str = ""
    size: int | None = None
    message: str = ""
    total_seconds: float = 0.0


@attrs.frozen
class MutationRun:
    """Every mutant's result, with how long the run took and how many Spark sessions it started."""

    target: str
    profile: str
    seed: int
    results: tuple[MutantResult, ...]
    seconds: float
    sessions_started: int
    baseline: tuple[Baseline, ...] = ()

    def counts(self, path: str | None = None) -> Counter[str]:
        return Counter(r.status for r in self.results if path is None or r.mutant.path == path)

    @property
    def score(self) -> float | None:
        return score(self.counts())

    @property
    def median_seconds_to_kill(self) -> float | None:
        kills = [r.seconds for r in self.results if r.status == KILLED]
        return statistics.median(kills) if kills else None

    @property
    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if r.status == SURVIVED]

    @property
    def paths(self) -> list[str]:
        return sorted({r.mutant.path for r in self.results})


def score(counts: Counter) -> float | None:
    """Killed over scored mutants; None when nothing was scored."""
    scored = sum(counts[s] for s in SCORED)
    return counts[KILLED] / scored if scored else None
