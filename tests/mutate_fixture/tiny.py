"""The module tests/test_mutate.py mutates; its twelve mutants and their verdicts are known.

`latest_before` is what the tiny suite checks. `earliest` only ever meets
`latest` in `max(latest, earliest)`, so turning its `min` into `max` changes
nothing: the equivalent mutant, which survives. `unchecked` is never called:
its mutant is unreached.
"""

from __future__ import annotations


def latest_before(times: list, bound: int) -> int | None:
    """The latest of `times` at or before `bound`; None when there is none.

    >>> latest_before([1, 4, 2], 3)
    2
    """
    kept = [t for t in times if t <= bound]
    if not kept:
        return None
    latest, earliest = max(kept), min(kept)
    return max(latest, earliest)


def unchecked(n: int) -> bool:
    """Called by nothing: no history reaches it."""
    return n < 3
