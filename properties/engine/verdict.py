"""What a run may say about one property on one domain: held, failed, stopped, not run, or not applicable.

"Held" rests on a count of histories that is never zero: a property that checked none
is "not run" (with the reason), never held; one that `--fail-fast` ended while it ran, because another
lane failed first, is "stopped (fail-fast)" (`frontier_harness.properties.engine.stop`), never held. A property that does not apply to the
implementation under test (`frontier_harness.properties.engine.suite.Property.applies`:
a window law to an update-mode job) is "not applicable", named with its reason; it
neither fails nor counts as held.

>>> verdict_of(failed=False, examples=0, not_applicable=None)
<Verdict.NOT_RUN: 'not run'>
>>> verdict_of(failed=False, examples=12, not_applicable=None).holds
True
>>> verdict_of(failed=False, examples=0, not_applicable="update mode").holds
False
>>> verdict_of(failed=False, examples=12, not_applicable=None, stopped="after 12 of 75 trials")
<Verdict.STOPPED: 'stopped (fail-fast)'>
"""

from __future__ import annotations

import enum


class Verdict(enum.StrEnum):
    """One property on one domain, as the results table, JUnit and the exit code read it."""

    HELD = "held"  # it ran over a count of histories that is not zero, and none failed
    FAILED = "failed"  # a counterexample
    NOT_RUN = "not run"  # zero histories (or a run cut short before it): no verdict, never held
    STOPPED = "stopped (fail-fast)"  # ended while it ran: another lane failed first; never held
    NOT_APPLICABLE = "not applicable"  # does not apply to this implementation: named, neither way

    @property
    def holds(self) -> bool:
        return self is Verdict.HELD

    @property
    def fails(self) -> bool:
        """Whether the run cannot say "held" because of it: a failure, or nothing ran."""
        return self in (Verdict.FAILED, Verdict.NOT_RUN, Verdict.STOPPED)


def verdict_of(
    failed: bool,
    examples: int,
    not_applicable: str | None,
    not_run: str | None = None,
    stopped: str | None = None,
) -> Verdict:
    """The verdict a result's fields give: a failure first, then not applicable, then stopped (`--fail-fast`
    ended it), then a count of zero."""
    if failed:
        return Verdict.FAILED
    if not_applicable is not None:
        return Verdict.NOT_APPLICABLE
    if stopped is not None:
        return Verdict.STOPPED
    if not_run is not None or examples == 0:
        return Verdict.NOT_RUN
    return Verdict.HELD
