"""One check a mutant can fail: a property of a suite on one domain, and the single call into the runner.

`check` runs one lane of the runner for a probe: `screening` (the profile's
screening histories in large batches, a failure reduced by delta debugging) or
`full` (the profile's Hypothesis lane, a failure shrunk). When the runner grows
its screen-first lane, only `check` changes.

The property's check is wrapped in a `Witness`: it notes the first failing
history (when it was seen, so *time to kill* is detection, not shrinking) and the
smallest one since, so a check cut off by its time limit while shrinking still
counts as a kill; and an implementation that raises on valid input ends the
check at once (`Crashed`) instead of being retried history by history.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.properties.engine import runner, search
from frontier_harness.properties.engine.diagnostics import infrastructure_reason
from frontier_harness.properties.engine.errors import UnsupportedImplementation
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.pairings import pairings
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.run import Run
from frontier_harness.properties.engine.suite import Outcome, Property, Suite

SCREENING, FULL = "screening", "full"
LANES = (SCREENING, FULL)


@attrs.frozen
class Probe:
    """A property of a suite on one domain, run against the implementation `impl_name`."""

    suite: Suite
    prop: Property
    domain: str
    impl_name: str

    @property
    def name(self) -> str:
        return f"{self.suite.name}.{self.prop.name}[{self.domain}]"


def probes_of(suites: Sequence[Suite], impl: str | None, named: bool) -> list[Probe]:
    """Every (property, domain) of `suites` in every pairing `check` runs them in: against `impl`, or
    else the default run's pairings (the model on the properties it is judged by, and the suite's
    default implementation; `frontier_harness.properties.engine.pairings`). A suite that cannot run
    against an implementation is left out, or refused (exit 2) if it was `named` on the command line."""
    from frontier_harness.properties.adapters import load_implementation

    probes = []
    for suite in suites:
        for pairing in pairings(suite, impl, load_implementation):
            reason = suite.unsupported(pairing.impl, pairing.impl_name)
            if reason is None:
                probes += [
                    Probe(pairing.suite, prop, domain, pairing.impl_name)
                    for prop in pairing.suite.properties
                    for domain in suite.domains
                ]
            elif named:
                raise UnsupportedImplementation(f"{reason}: it cannot run against --impl {pairing.impl_name}")
    if not probes:
        raise UnsupportedImplementation(f"no suite can run against --impl {impl}")
    return probes


def may_reach(probe: Probe, target: str) -> bool:
    """Whether the probe's implementation can run the target's code at all: the model
    implementation is `model/` plus the suites' own observers, so it reaches no other package.

    >>> may_reach(Probe(None, None, "total", "model"), "frontier_harness.spark_impl")
    False
    """
    return probe.impl_name != "model" or target.removeprefix("frontier_harness.").split(".")[0] in (
        "model",
        "properties",
    )


class Crashed(BaseException):
    """The implementation raised on valid input: a failure, without blaming history by history."""


class Witness:
    """Wraps a property's check: notes failing histories (first seen, smallest) and crashes."""

    def __init__(self, check: Callable[[Any, Sequence[History]], Sequence[Outcome]], started: float):
        self.check, self.started = check, started
        self.first_seconds: float | None = None
        self.smallest: History | None = None
        self.message = ""

    def __call__(self, impl: Implementation, histories: Sequence[History]) -> list[Outcome]:
        try:
            outcomes = list(self.check(impl, histories))  # a trial suite's `Trials` run here, caught
        except Exception as exc:
            if infrastructure_reason(impl, impl.name, exc) is not None:
                raise
            self._seen()
            if (
                len(histories) == 1
            ):  # in a batch, which history crashed is not known (the runner tries each alone)
                self._saw(histories[0], f"raised {type(exc).__name__}: {exc}")
            raise Crashed(exc) from exc
        for history, outcome in zip(histories, outcomes):
            if not outcome.ok:
                self._saw(history, outcome.message)
        return outcomes

    def _seen(self) -> None:
        if self.first_seconds is None:
            self.first_seconds = time.perf_counter() - self.started

    def _saw(self, history: History, message: str) -> None:
        self._seen()
        if self.smallest is None or len(history.actions) < len(self.smallest.actions):
            self.smallest, self.message = history, message[:300]

    @property
    def failed(self) -> bool:
        return self.first_seconds is not None

    def confirm_crash(self, impl: Implementation) -> None:
        """After a crash on a batch: keeps the smallest history only if it crashes (or fails) alone."""
        if self.smallest is None:
            return
        try:
            alone = self.check(impl, [self.smallest])
        except Exception as exc:
            if infrastructure_reason(impl, impl.name, exc) is not None:
                raise
            return
        if alone[0].ok:
            self.smallest = None


def check(
    probe: Probe, impl: Implementation, profile: Profile, seed: int, lane: str, witness: Witness
) -> None:
    """Runs `lane` of the runner for `probe`; what failed (or crashed) is in `witness` afterwards."""
    prop = attrs.evolve(probe.prop, check=witness)
    profile = runner.scaled(profile, probe.suite, impl)
    run = Run(probe.suite, prop, impl, probe.impl_name, probe.domain, profile, seed)
    try:
        (search.screening_lane if lane == SCREENING else search.hypothesis_lane)(run)
    except Crashed:
        witness.confirm_crash(impl)
