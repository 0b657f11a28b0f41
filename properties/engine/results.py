"""What a run found: each property's verdict on each domain and the count it rests on (`PropertyResult`),
and a suite's, with the required hard cases it did not reach, sorted by why (`SuiteResult`)."""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Sequence

import attrs

from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.engine.suite import Suite
from frontier_harness.properties.engine.verdict import Verdict, verdict_of

HISTORIES, TRIALS = "histories", "trials"  # what a result's count counts


@attrs.frozen
class PropertyResult:
    """What one property did on one domain: its verdict rests on `examples`, the histories checked.

    `not_applicable` says why the property does not apply to the implementation; `not_run` why it did
    not run (a run cut short). A result with neither that checked no history is "not run" too. `stopped`
    says how far it had run when `--fail-fast` ended it (another lane failed first): its verdict is
    "stopped (fail-fast)", never "held", whatever `examples` it checked.
    """

    suite: str
    property: str
    domain: str
    examples: int
    seconds: float
    events: Counter[str]
    rejected: int = 0
    failure: Counterexample | None = None
    not_applicable: str | None = None
    not_run: str | None = None
    unit: str = "histories"  # what `examples` counts: `trials` when each history was a real query
    required: tuple[str, ...] = ()  # the hard cases the suite requires in this domain
    stopped: str | None = None

    @builtins.property
    def hard_cases(self) -> str:
        """The required hard cases reached, `K of N` (the count of every case reached when none is
        required).

        >>> PropertyResult("s", "p", "total", 9, 0.0, Counter(a=3, b=1), required=("a", "c")).hard_cases
        '1 of 2'
        """
        if not self.required:
            return str(len(self.events))
        return f"{len(set(self.required) & set(self.events))} of {len(self.required)}"

    @builtins.property
    def verdict(self) -> Verdict:
        return verdict_of(
            self.failure is not None, self.examples, self.not_applicable, self.not_run, self.stopped
        )

    @builtins.property  # `property` is a field here
    def passed(self) -> bool:
        """Held, or not applicable: never after zero histories."""
        return not self.verdict.fails

    @builtins.property
    def reason(self) -> str:
        """Why it has no verdict either way ("not run", "not applicable", "stopped"); empty otherwise."""
        if self.verdict is Verdict.NOT_APPLICABLE:
            return self.not_applicable or ""
        if self.verdict is Verdict.STOPPED:
            return self.stopped or ""
        if self.verdict is Verdict.NOT_RUN:
            return self.not_run or "it checked 0 histories"
        return ""


@attrs.frozen
class SuiteResult:
    """A suite's property results, and its required hard cases that were not reached, by why.

    `missing_events` fail the run: never generated in a run that ran to its end under a profile whose
    counts reach them (`Profile.judges_reach`). `not_shown_events` were not reached in a run too small to
    (a `dev` run): named, not failing. `not_run_events` belong to a run cut short (a failure, `--fail-fast`):
    not judged at all.
    """

    suite: str
    results: tuple[PropertyResult, ...]
    missing_events: tuple[str, ...]
    not_shown_events: tuple[str, ...] = ()
    not_run_events: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and not self.missing_events

    @property
    def histories(self) -> int:
        """The most histories one property checked: what a "not shown" hard case was looked for in."""
        return max((r.examples for r in self.results), default=0)


def not_run(suite: Suite, domains: Sequence[str] | None, profile: Profile, reason: str) -> SuiteResult:
    """A suite the run did not reach (`--fail-fast` stopped before it): each property and domain it would
    have run, "not run" with `reason`, and its hard cases not judged."""
    domains = tuple(domains or suite.domains)
    results = [
        PropertyResult(suite.name, p.name, d, 0, 0.0, Counter(), not_run=reason)
        for p in suite.properties
        if p.runs_in(profile.name)
        for d in domains
    ]
    return SuiteResult(suite.name, tuple(results), (), not_run_events=suite.required_in(domains))


def judged_reach(
    suite: Suite, domains: Sequence[str], results: Sequence[PropertyResult], profile: Profile
) -> SuiteResult:
    """The suite's result, its unreached hard cases sorted by why (`SuiteResult`): not judged when a
    property failed or did not run, named but not failing under a profile too small to reach them."""
    held = [r for r in results if r.verdict is Verdict.HELD]
    missing = unreached(suite, domains, held)
    if not all(r.passed for r in results):
        return SuiteResult(suite.name, tuple(results), (), not_run_events=missing)
    if not held:  # every property not applicable: no hard case to look for
        return SuiteResult(suite.name, tuple(results), ())
    if not profile.judges_reach:
        return SuiteResult(suite.name, tuple(results), (), not_shown_events=missing)
    return SuiteResult(suite.name, tuple(results), missing)


def unreached(suite: Suite, domains: Sequence[str], results: Sequence[PropertyResult]) -> tuple[str, ...]:
    """Each required hard case never generated in a domain that has it, as `case [domain]`.

    A case is required in every domain of the run its `event_domains` names (all by
    default): reached in one domain, it says nothing about another's generator.
    """
    reached = {(r.domain, e) for r in results for e in r.events}
    return tuple(
        f"{e} [{d}]"
        for e in suite.required_in(domains)
        for d in domains
        if d in suite.event_domains.get(e, domains) and (d, e) not in reached
    )
