"""Shrinking a failing screened history through its recorded choices, each pass in one batched call.

A screened history was drawn from a `RecordingSource`; its choices are small
non-negative numbers, and `ReplaySource` draws a valid history from any
sequence of them. Shrinking works on the sequence, as Hypothesis's shrinker
does: delete blocks, zero blocks, lower single numbers; a candidate replaces
the current one when it still fails the same way and is smaller in shortlex
order (shorter first, then lexicographically). When several candidates of a
call that keep the length fail, the next call also tries them merged (each
number the least any of them gave it; the first 2, 4, ... and all of them), so
a history whose numbers lower independently does not take one call per number.
Passes are checked together, at least `MIN_BATCH` candidates in ONE call to the
implementation (one Spark job), so each step of a shrink costs one job, not one
per candidate or per pass. When `stop()` says the budget is spent
(`frontier_harness.properties.engine.budget`), the smallest failing sequence so far
is the answer: a found failure is never lost to the budget.

Each pass is named, and counted as Hypothesis's shrinker counts its passes (`Tally`: the candidates
of each pass checked, and how many of them were kept as the new smallest), so `--verbose` can say where
a shrink's calls went.

>>> fails = lambda batch: [any(n >= 5 for n in c) for c in batch]
>>> tally = Tally()
>>> shrink_choices([3, 9, 0, 4, 1], fails, tally=tally)
[5]
>>> tally.kept
{'delete while lowering': 3, 'lower one number': 2}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import attrs

Choices = list[int]
StillFails = Callable[[Sequence[Choices]], list[bool]]
BLOCKS = (8, 4, 2, 1)
# long deletions, at every other position: a screened history is ~100 numbers
LONG_BLOCKS, LONG_STEP = (64, 32, 16), 2
MIN_BATCH = 64  # candidates per call: more makes each Spark job longer (an expiration shrink: 52 s at 256, 38 s at 64)
PAIRED_LIMIT = 64  # the longest sequence the delete-while-lowering pass tries (~6 n^2 candidates)
MERGED = "merge the last call's failures"


@attrs.define
class Tally:
    """Each shrink pass by name: candidates checked (`tried`) and kept as the new smallest (`kept`)."""

    tried: dict[str, int] = attrs.Factory(dict)
    kept: dict[str, int] = attrs.Factory(dict)

    def checked(self, names: Iterable[str], kept: str | None) -> None:
        for name in names:
            self.tried[name] = self.tried.get(name, 0) + 1
        if kept is not None:
            self.kept[kept] = self.kept.get(kept, 0) + 1

    def lines(self) -> list[str]:
        """One line per pass that ran, in the order they first ran: `name: kept of tried`.

        >>> t = Tally(); t.checked(["zero 2", "zero 2", "lower one number"], "zero 2"); t.lines()
        ['zero 2: 1 of 2 kept', 'lower one number: 0 of 1 kept']
        """
        return [f"{name}: {self.kept.get(name, 0)} of {n} kept" for name, n in self.tried.items()]


def shrink_choices(
    choices: Choices,
    still_fails: StillFails,
    stop: Callable[[], bool] = lambda: False,
    improved: Callable[[Choices], None] | None = None,
    batch: int = MIN_BATCH,
    tally: Tally | None = None,
) -> Choices:
    """The smallest sequence (shortlex) the passes reach that still fails; `choices` must fail.

    Passes are checked together until a call holds at least `batch` candidates (a
    batched implementation's job costs the same for one history or hundreds), and
    the smallest failing candidate of the call wins. `improved` is told each
    smaller failing sequence as it is found, `tally` of each pass's candidates checked and kept.
    """
    best, together = list(choices), list[Choices]()
    tally = tally if tally is not None else Tally()
    progress = True
    while progress and not stop():
        progress = False
        for named in _calls(best, batch, together):
            candidates = list(named)
            # Smallest first: a batch that raises is searched left to right (`batch.check_batch`).
            verdicts = still_fails([list(c) for c in candidates])
            failing = [c for c, bad in zip(candidates, verdicts) if bad]
            smallest = min(failing, key=_shortlex) if failing else None
            tally.checked(named.values(), named[smallest] if smallest is not None else None)
            if smallest is not None:
                best, progress = list(smallest), True
                together = _merged(best, failing)
                if improved is not None:
                    improved(best)
                break
            if stop():
                break
    return best


def _calls(
    best: Choices, batch: int, together: Sequence[Choices] = ()
) -> Iterator[dict[tuple[int, ...], str]]:
    """The passes' candidates smaller than `best`, deduplicated, smallest first, each with the name of
    the pass that made it, in calls of at least `batch` (the last may hold fewer); each call holds whole
    passes, most aggressive first, and the first call also `together` (the last call's failures merged:
    `_merged`).

    >>> [len(c) for c in _calls([3, 9, 0, 4, 1], batch=1)]  # a pass a call (no repeated number)
    [2, 4, 5, 2, 4, 4, 14, 59]
    >>> [len(c) for c in _calls([3, 9, 0, 4, 1], batch=10)]  # deletions, then zeros and lowerings
    [11, 18, 59]
    """
    call = {tuple(c): MERGED for c in together if _shortlex(c) < _shortlex(best)}
    for name, candidates in _passes(best):
        for c in map(tuple, candidates):
            if _shortlex(c) < _shortlex(best):
                call.setdefault(c, name)
        if len(call) >= batch:
            yield {c: call[c] for c in sorted(call, key=_shortlex)}
            call = {}
    if call:
        yield {c: call[c] for c in sorted(call, key=_shortlex)}


def _merged(best: Choices, failing: Sequence[tuple[int, ...]]) -> list[Choices]:
    """The failing candidates of `best`'s length merged, the first 2, 4, ... and all of them (each number
    the least any of them or `best` gives it): numbers that lower independently lower together in one
    call, and when not all of them do, the first few still may.

    >>> _merged([2, 3, 2, 4], [(0, 3, 2, 4), (2, 1, 2, 4), (2, 3, 0, 4), (5,)])
    [[0, 1, 2, 4], [0, 1, 0, 4]]
    """
    same = [c for c in failing if len(c) == len(best)]
    merged = {tuple(min(column) for column in zip(best, *same[:j])): None for j in doubling(len(same))}
    return [list(m) for m in merged if list(m) != best and m not in same]


def doubling(n: int) -> list[int]:
    """How many of `n` failing candidates each merge joins: the first 2, 4, 8, ..., then all `n`.

    >>> doubling(1), doubling(4), doubling(5)
    ([], [2, 4], [2, 4, 5])
    """
    return [2**i for i in range(1, n.bit_length()) if 2**i < n] + ([n] if n > 1 else [])


def _shortlex(choices: Iterable[int]) -> tuple[int, tuple[int, ...]]:
    as_tuple = tuple(choices)
    return len(as_tuple), as_tuple


def _passes(best: Choices) -> Iterator[tuple[str, list[Choices]]]:
    """Candidate batches, each with its pass's name, most aggressive first: delete blocks, zero blocks,
    lower each number, lower repeated numbers together, and last, delete one or two numbers while
    lowering another."""
    n = len(best)
    for k in LONG_BLOCKS:
        if k < n:
            yield f"delete {k}", [best[:i] + best[i + k :] for i in range(0, n - k + 1, LONG_STEP)]
    for k in BLOCKS:
        if k <= n:
            yield f"delete {k}", [best[:i] + best[i + k :] for i in range(n - k + 1)]
    for k in BLOCKS:
        if k <= n:
            zeroed = [best[:i] + [0] * k + best[i + k :] for i in range(n - k + 1) if any(best[i : i + k])]
            yield f"zero {k}", zeroed
    yield (
        "lower one number",
        [best[:i] + [lower] + best[i + 1 :] for i, v in enumerate(best) for lower in _targets(v)],
    )
    yield (
        "lower repeated numbers",
        [[lower if c == v else c for c in best] for v in _repeated(best) for lower in _targets(v)],
    )
    if n <= PAIRED_LIMIT:  # quadratic in n: only near the end of a shrink, where n is small
        paired = [c for k in (1, 2) for i in range(n - k + 1) for c in _lowered(best[:i] + best[i + k :])]
        yield "delete while lowering", paired


def _lowered(choices: Choices) -> list[Choices]:
    """`choices` with one number lowered, each way: after a deletion, what a count or a size that
    described the deleted part needs (a transaction of three records, one of them deleted).

    >>> _lowered([2, 0])
    [[0, 0], [1, 0]]
    """
    return [choices[:i] + [lower] + choices[i + 1 :] for i, v in enumerate(choices) for lower in _lower(v)]


def _repeated(choices: Choices) -> list[int]:
    """Values above zero that occur more than once: lowered together, as a failure that needs two equal
    times needs (Hypothesis's shrinker has the same pass).

    >>> _repeated([8, 1, 8, 0, 0])
    [8]
    """
    counts: dict[int, int] = {}
    for c in choices:
        counts[c] = counts.get(c, 0) + 1
    return sorted(v for v, n in counts.items() if v > 0 and n > 1)


def _targets(value: int) -> list[int]:
    """Smaller values to try for one number on its own: the least four, and a quarter, half and one less.
    A call checks them all, so a number that can fall far falls in one call, not one halving a call (the
    merge of the next call lowers every number that fell on its own at once).

    >>> _targets(40), _targets(3), _targets(0)
    ([0, 1, 2, 3, 10, 20, 39], [0, 1, 2], [])
    """
    return sorted(v for v in {0, 1, 2, 3, value // 4, value // 2, value - 1} if 0 <= v < value)


def _lower(value: int) -> list[int]:
    """Smaller values to try for one number while deleting others (`_lowered`): the least, half, one less;
    three, not `_targets`' seven, as that pass is already quadratic in the sequence's length."""
    return sorted({0, value // 2, value - 1} - {value}) if value > 0 else []
