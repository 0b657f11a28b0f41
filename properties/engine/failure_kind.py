"""How an outcome fails (`failure_kind`): a shrunk or grouped failure counts only if it fails the same way
as the one found, so shrinking never trades a wrong answer for a crash or for a wrong answer about
something else."""

from __future__ import annotations

from frontier_harness.properties.engine.suite import Outcome


def failure_kind(outcome: Outcome) -> tuple[bool, str | None, str | None]:
    """How an outcome fails: a rejection or not, the exception's type if one was raised, and the label
    of the first divergence (a wrong answer never shrinks into a crash, nor into a wrong answer about
    something else: the shrunk history shows the same discrepancy).

    The label is the first divergence's (at `step`): the one the message names, else the first in order:

    >>> model = {(1, "done"): {1}, (1, "final"): {2}, (2, "read"): {3}}
    >>> impl = {(1, "done"): {1}, (1, "final"): {9}, (2, "read"): {4}}
    >>> [failure_kind(Outcome(ok=False, message="?", expected=model, actual=impl, step=n))[2] for n in (1, 2)]
    ['final', 'read']
    >>> both = {(0, "final"): {2}, (0, "read"): {1}}
    >>> failure_kind(Outcome(ok=False, message="read at step 0", expected=both, actual={}, step=0))
    (False, None, 'read')
    >>> failure_kind(Outcome(ok=False, message="raised", error=KeyError("a"), rejected=True, expected=model))
    (True, 'KeyError', None)
    """
    error = type(outcome.error).__name__ if outcome.error is not None else None
    return outcome.rejected, error, _divergent_label(outcome)


def _divergent_label(outcome: Outcome) -> str | None:
    expected, actual = outcome.expected, outcome.actual
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        return None
    differing = sorted((k for k in set(expected) | set(actual) if expected.get(k) != actual.get(k)), key=repr)
    labels = [str(k[1]) for k in differing if isinstance(k, tuple) and len(k) == 2 and k[0] == outcome.step]
    named = [label for label in labels if outcome.message.startswith(label)]  # the one the message names
    return next(iter(named or labels), None)
