"""The remap collection `R`: bindings `(from_time, into_time, diff)` from a source gauge to IntoTime.

`R(t)` is the accumulation of the bindings with `into_time <= t`: the source
frontier (a FromTime antichain) recorded at IntoTime `t`. FromTime is any domain;
IntoTime is `Total` (epoch milliseconds). A remap is a value
`Remap(domain, bindings, since, upper)`: `bindings` consolidated, in canonical
order `(into_time, from_time)`; `since` and `upper` one-element (or, for upper,
empty) Total antichains. Bindings lie in `[since, upper)`; `R(t)` is final and
readable for `since <= t < upper`.

Laws (checked by `audit`, enforced by `Remap.build`): every `R(t)` is an antichain
with each element's multiplicity exactly 1; `t1 <= t2 => R(t1) <= R(t2)`; an
uncompacted remap starts with `(FromTime.minimum, 0, +1)`; `R(t)` is empty (the
source closed) exactly when the remap is closed (upper empty).

Each rule lives in one small module-level function that the methods look up at
call time, so a test may replace it: `retractions` and `insertions` (minting),
`check_since`, `advance_bindings` and `consolidate_bindings` (compaction),
`binding_before` (the strict `<` of inversion).

>>> from frontier_harness.model.time.domains import Total
>>> r = Remap.initial(Total()).mint(Antichain.of(Total(), [5]), 10)
>>> r.at(9), r.at(10), r.upper
({0}, {5}, {11})
>>> r.source_upper_at(Antichain.of(INTO, [10])), r.source_upper_at(Antichain.of(INTO, [11]))
({0}, {5})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import attrs

from frontier_harness.model.errors import (
    InvalidRemap,
    InvalidTime,
    InversionBeyondUpper,
    ReadNotValid,
    SinceBeyondUpper,
    SinceRegression,
    SourceUpperRegression,
)
from frontier_harness.model.time.antichain import Antichain, advance_by
from frontier_harness.model.time.domains import Domain, Time, Total

INTO = Total()


@attrs.frozen
class Binding:
    """`diff` copies of source frontier element `from_time` in `R` from IntoTime `into_time` on.

    >>> Binding(5, 3, -1)
    Binding(from_time=5, into_time=3, diff=-1)
    """

    from_time: Time
    into_time: int
    diff: int


@attrs.frozen
class Violation:
    """One broken remap law: its `kind`, what is wrong, and the offending bindings.

    >>> print(Violation("multiplicity", "5 has count 2 at 3", (Binding(5, 3, 2),)))
    multiplicity: 5 has count 2 at 3; bindings [Binding(from_time=5, into_time=3, diff=2)]
    """

    kind: str
    detail: str
    bindings: tuple[Binding, ...] = ()

    def __str__(self) -> str:
        named = f"; bindings {list(self.bindings)}" if self.bindings else ""
        return f"{self.kind}: {self.detail}{named}"


def _only(frontier: Antichain) -> int | None:
    """The element of a Total frontier, None when it is empty (closed)."""
    return next(iter(frontier), None)


def _support(domain: Domain, counts: Counter[Time]) -> Antichain:
    """The elements with a positive count, as given (no minimisation, so violations stay visible)."""
    return Antichain(domain, [f for f, c in counts.items() if c > 0])


def _accumulate(bindings: Iterable[Binding]) -> Counter[Time]:
    counts: Counter[Time] = Counter()
    for b in bindings:
        counts[b.from_time] += b.diff
    return counts


def _order(domain: Domain):
    return lambda b: (b.into_time, domain.key(b.from_time))


@attrs.frozen
class Remap:
    """The remap collection as a value; methods return new remaps.

    Construct with `initial`, `build` (validated) or `minted`. The plain constructor
    does not validate, so a test can hand `audit` a mutated remap.

    >>> Remap.initial(Total())
    Remap(domain=Total(), bindings=(Binding(from_time=0, into_time=0, diff=1),), since={0}, upper={1})
    """

    domain: Domain
    bindings: tuple[Binding, ...]
    since: Antichain
    upper: Antichain

    @classmethod
    def initial(cls, domain: Domain) -> Remap:
        """The remap before any tick: `R(0) = {minimum}`, since `{0}`, upper `{1}`.

        >>> from frontier_harness.model.time.domains import Partitioned
        >>> Remap.initial(Partitioned()).at(0)
        {[0,MAX]@0}
        """
        start = (Binding(domain.minimum, INTO.minimum, 1),)
        return cls(domain, start, Antichain.of(INTO, [0]), Antichain.of(INTO, [1]))

    @classmethod
    def build(
        cls, domain: Domain, bindings: Iterable[Binding], upper: Antichain, since: Antichain | None = None
    ) -> Remap:
        """A remap from raw bindings (consolidated first); `InvalidRemap` naming every violation.

        >>> Remap.build(Total(), [Binding(0, 0, 1), Binding(0, 2, -1), Binding(3, 2, 1)], Antichain.of(INTO, [3])).at(2)
        {3}
        >>> Remap.build(Total(), [Binding(0, 0, 1), Binding(0, 0, 1)], Antichain.of(INTO, [1]))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidRemap: invalid remap (1 violations): multiplicity: 0 has count 2 at 0; bindings [Binding(from_time=0, into_time=0, diff=2)]
        """
        since = Antichain.of(INTO, [0]) if since is None else since
        raw = cls(domain, tuple(bindings), since, upper)
        found = _malformed(raw)
        if not found:
            raw = attrs.evolve(raw, bindings=_canonical(domain, raw.bindings))
            found = audit(raw)
        if found:
            raise InvalidRemap(found)
        return raw

    @classmethod
    def minted(cls, domain: Domain, observations: Iterable[tuple[Antichain, int]]) -> Remap:
        """`initial` then `mint` for each `(source_upper, tick)` observation in order.

        >>> Remap.minted(Total(), [(Antichain.of(Total(), [2]), 1), (Antichain.of(Total(), []), 4)]).upper
        {}
        """
        remap = cls.initial(domain)
        for source_upper, tick in observations:
            remap = remap.mint(source_upper, tick)
        return remap

    def readable(self, time: int) -> bool:
        """Whether `R(time)` is final and known: `since <= time` and `time` not beyond `upper`.

        >>> Remap.initial(Total()).readable(0), Remap.initial(Total()).readable(1)
        (True, False)
        """
        return self.since.less_equal(time) and not self.upper.less_equal(time)

    def at(self, time: int) -> Antichain:
        """`R(time)`: the accumulation of bindings with `into_time <= time`; typed error unless readable.

        >>> Remap.initial(Total()).at(1)
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.ReadNotValid: cannot read at 1: readable times are beyond since {0} and not beyond upper {1}
        """
        if not self.readable(INTO.validate(time)):
            raise ReadNotValid(time, self.since, self.upper)
        return _support(self.domain, _accumulate(b for b in self.bindings if b.into_time <= time))

    def latest(self) -> Antichain:
        """The source upper recorded by the latest binding: the accumulation of every binding.

        >>> Remap.initial(Total()).mint(Antichain.of(Total(), [4]), 3).latest()
        {4}
        """
        return _support(self.domain, _accumulate(self.bindings))

    def steps(self) -> list[tuple[int, Antichain]]:
        """`(t, R(t))` at `since` and at every binding's IntoTime, in order: where `R` may change.

        >>> Remap.minted(Total(), [(Antichain.of(Total(), [2]), 3)]).steps()
        [(0, {0}), (3, {2})]
        """
        counts: Counter[Time] = Counter()
        start = _only(self.since)
        times = sorted({b.into_time for b in self.bindings} | ({start} if start is not None else set()))
        pending, result = iter(sorted(self.bindings, key=lambda b: b.into_time)), []
        upcoming = next(pending, None)
        for t in times:
            while upcoming is not None and upcoming.into_time <= t:
                counts[upcoming.from_time] += upcoming.diff
                upcoming = next(pending, None)
            result.append((t, _support(self.domain, counts)))
        return result

    def mint(self, source_upper: Antichain, tick: int) -> Remap:
        """Records `source_upper` at IntoTime `tick`: retracts the old elements, inserts the new.

        A tick not beyond the remap's upper does not advance and is skipped (the
        remap is returned unchanged; a closed remap skips every tick). Otherwise
        the upper becomes `{tick + 1}`, or closed if `source_upper` is closed. A
        source upper that goes back is a typed error naming both.

        >>> r = Remap.initial(Total()).mint(Antichain.of(Total(), [5]), 2)
        >>> r.mint(Antichain.of(Total(), [9]), 1) == r
        True
        >>> r.mint(Antichain.of(Total(), [3]), 4)
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.SourceUpperRegression: source upper may not go back: {3} is not >= current {5}
        """
        if not self.upper.less_equal(INTO.validate(tick)):
            return self
        new = Antichain.checked(self.domain, source_upper)
        old = self.latest()
        if not old.le(new):
            raise SourceUpperRegression(old, new)
        added = sorted(retractions(old, new, tick) + insertions(old, new, tick), key=_order(self.domain))
        upper = Antichain(INTO) if new.is_empty() else Antichain.of(INTO, [tick + 1])
        return attrs.evolve(self, bindings=self.bindings + tuple(added), upper=upper)

    def compact(self, since: Antichain) -> Remap:
        """Advances every binding's IntoTime by `since` and consolidates; `R(t)` unchanged for `t >= since`.

        `since` never goes back (`SinceRegression` naming both) and must be a time
        strictly before the upper (`SinceBeyondUpper`), so `R(since)` stays readable.

        >>> r = Remap.minted(Total(), [(Antichain.of(Total(), [2]), 1), (Antichain.of(Total(), [7]), 3)])
        >>> r.compact(Antichain.of(INTO, [2])).bindings
        (Binding(from_time=2, into_time=2, diff=1), Binding(from_time=2, into_time=3, diff=-1), Binding(from_time=7, into_time=3, diff=1))
        """
        check_since(self.since, since)
        start = _only(since)
        if start is None or self.upper.less_equal(INTO.validate(start)):
            raise SinceBeyondUpper(since, self.upper)
        moved = advance_bindings(self.bindings, since)
        return attrs.evolve(self, bindings=consolidate_bindings(self.domain, moved), since=since)

    def source_upper_at(self, frontier: Antichain) -> Antichain:
        """Inversion: the FromTime frontier complete at every IntoTime before `frontier`.

        The accumulation of bindings strictly before `frontier` (`binding_before`):
        every source update reclocked to a time at or beyond `frontier` lies beyond
        it. At or below `since` it is `{minimum}` (earlier bindings were compacted
        away); at `upper` it is the latest binding; the empty frontier gives the
        (empty) upper of a closed remap; a frontier beyond `upper` is a typed error.

        >>> r = Remap.minted(Total(), [(Antichain.of(Total(), [4]), 2)])
        >>> r.source_upper_at(Antichain.of(INTO, [2])), r.source_upper_at(Antichain.of(INTO, [3]))
        ({0}, {4})
        >>> r.source_upper_at(Antichain.of(INTO, [4]))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InversionBeyondUpper: cannot invert the remap at {4}: it is beyond the remap's upper {3}
        """
        for t in frontier:
            INTO.validate(t)
        if self.upper.le(frontier) and self.upper != frontier:
            raise InversionBeyondUpper(frontier, self.upper)
        if frontier.le(self.since):
            return Antichain.of(self.domain, [self.domain.minimum])
        before = (b for b in self.bindings if binding_before(b.into_time, frontier))
        return _support(self.domain, _accumulate(before))


def retractions(old: Antichain, new: Antichain, tick: int) -> list[Binding]:
    """Minting rule: a `-1` at `tick` for each element of the old source upper not in the new one.

    >>> retractions(Antichain.of(Total(), [3]), Antichain.of(Total(), [5]), 7)
    [Binding(from_time=3, into_time=7, diff=-1)]
    """
    kept = set(new)
    return [Binding(f, tick, -1) for f in old if f not in kept]


def insertions(old: Antichain, new: Antichain, tick: int) -> list[Binding]:
    """Minting rule: a `+1` at `tick` for each element of the new source upper not in the old one.

    >>> insertions(Antichain.of(Total(), [3]), Antichain.of(Total(), [5]), 7)
    [Binding(from_time=5, into_time=7, diff=1)]
    """
    had = set(old)
    return [Binding(f, tick, 1) for f in new if f not in had]


def check_since(current: Antichain, requested: Antichain) -> None:
    """Compaction rule: `since` never goes back; `SinceRegression` names both frontiers.

    >>> check_since(Antichain.of(INTO, [4]), Antichain.of(INTO, [2]))
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.SinceRegression: since may not go back: {2} is not >= current {4}
    """
    if not current.le(requested):
        raise SinceRegression(current, requested)


def advance_bindings(bindings: Iterable[Binding], since: Antichain) -> list[Binding]:
    """Compaction rule: each binding's IntoTime advanced by `since` (`advance_by`).

    >>> advance_bindings([Binding(0, 1, 1)], Antichain.of(INTO, [3]))
    [Binding(from_time=0, into_time=3, diff=1)]
    """
    return [Binding(b.from_time, advance_by(b.into_time, since), b.diff) for b in bindings]


def consolidate_bindings(domain: Domain, bindings: Iterable[Binding]) -> tuple[Binding, ...]:
    """Compaction rule: merges equal `(from_time, into_time)`, drops zero diffs, canonical order.

    >>> consolidate_bindings(Total(), [Binding(0, 3, 1), Binding(0, 3, -1), Binding(2, 3, 1)])
    (Binding(from_time=2, into_time=3, diff=1),)
    """
    return _canonical(domain, bindings)


def _canonical(domain: Domain, bindings: Iterable[Binding]) -> tuple[Binding, ...]:
    """Consolidated bindings in canonical order; `audit` and `build` use it directly, not the rule."""
    sums: Counter[tuple[Time, int]] = Counter()
    for b in bindings:
        sums[(b.from_time, b.into_time)] += b.diff
    merged = [Binding(f, t, d) for (f, t), d in sums.items() if d != 0]
    return tuple(sorted(merged, key=_order(domain)))


def binding_before(into_time: int, frontier: Antichain) -> bool:
    """Inversion rule: a binding counts when its IntoTime is strictly before `frontier` (not beyond it).

    >>> binding_before(3, Antichain.of(INTO, [3])), binding_before(2, Antichain.of(INTO, [3]))
    (False, True)
    """
    return not frontier.less_equal(into_time)


def audit(remap: Remap) -> list[Violation]:
    """Every broken law of `remap`, each naming its offending bindings; `[]` for a valid remap.

    >>> r = Remap.minted(Total(), [(Antichain.of(Total(), [5]), 1)])
    >>> audit(r)
    []
    >>> bad = attrs.evolve(r, bindings=r.bindings + (Binding(2, 2, 1), Binding(5, 2, -1)), upper=Antichain.of(INTO, [3]))
    >>> [str(v) for v in audit(bad)]
    ['regression: R(2) has 2, not beyond earlier {5}; bindings [Binding(from_time=5, into_time=1, diff=1), Binding(from_time=2, into_time=2, diff=1)]']
    """
    malformed = _malformed(remap)
    if malformed:
        return malformed
    return [
        *_unconsolidated(remap),
        *_outside(remap),
        *_start(remap),
        *_accumulation(remap),
        *_closure(remap),
    ]


def _malformed(remap: Remap) -> list[Violation]:
    """Frontiers and binding fields that are not values of their domains."""
    found = []
    since, upper = list(remap.since), list(remap.upper)
    if len(since) != 1 or len(upper) > 1:
        found.append(
            Violation(
                "frontiers", f"since {remap.since!r} must have one time, upper {remap.upper!r} at most one"
            )
        )
    elif remap.upper.less_equal(since[0]):
        found.append(
            Violation("frontiers", f"since {remap.since!r} is not strictly before upper {remap.upper!r}")
        )
    for b in remap.bindings:
        reason = _binding_error(remap.domain, b)
        if reason:
            found.append(Violation("malformed", reason, (b,)))
    return found


def _binding_error(domain: Domain, b: object) -> str | None:
    if not isinstance(b, Binding):
        return f"{b!r} is not a Binding"
    try:
        domain.validate(b.from_time)
        INTO.validate(b.into_time)
    except InvalidTime as err:
        return str(err)
    if not isinstance(b.diff, int) or isinstance(b.diff, bool) or b.diff == 0:
        return f"diff {b.diff!r} is not a non-zero integer"
    return None


def _unconsolidated(remap: Remap) -> list[Violation]:
    """Bindings not in consolidated canonical form (repeated `(from, into)`, wrong order)."""
    if _canonical(remap.domain, remap.bindings) == tuple(remap.bindings):
        return []
    seen: Counter[tuple[Time, int]] = Counter((b.from_time, b.into_time) for b in remap.bindings)
    repeated = tuple(b for b in remap.bindings if seen[(b.from_time, b.into_time)] > 1)
    return [Violation("unconsolidated", "bindings are not consolidated in (into, from) order", repeated)]


def _outside(remap: Remap) -> list[Violation]:
    """Bindings whose IntoTime is not in `[since, upper)`."""
    outside = tuple(b for b in remap.bindings if not remap.readable(b.into_time))
    if not outside:
        return []
    return [Violation("outside", f"IntoTime not in [{remap.since!r}, {remap.upper!r})", outside)]


def _start(remap: Remap) -> list[Violation]:
    """An uncompacted remap (since `{0}`) starts with `R(0) = {minimum}`."""
    if _only(remap.since) != INTO.minimum:
        return []
    first = tuple(b for b in remap.bindings if b.into_time == INTO.minimum)
    if set(_support(remap.domain, _accumulate(first))) == {remap.domain.minimum}:
        return []
    return [Violation("start", f"R(0) must be {{{remap.domain.minimum!r}}}", first)]


def _accumulation(remap: Remap) -> list[Violation]:
    """Multiplicity, antichain and monotonicity of `R(t)` at each binding IntoTime."""
    found: list[Violation] = []
    counts: Counter[Time] = Counter()
    inserted: dict[Time, Binding] = {}
    previous: Antichain | None = None
    by_time: dict[int, list[Binding]] = {}
    for b in remap.bindings:
        by_time.setdefault(b.into_time, []).append(b)
    for t, here in sorted(by_time.items()):
        for b in here:
            counts[b.from_time] += b.diff
            if b.diff > 0:
                inserted[b.from_time] = b
        touched = {b.from_time for b in here}
        current = _support(remap.domain, counts)
        found += _multiplicity(remap, counts, touched, t)
        found += _comparable(remap.domain, current, touched, inserted, t)
        if previous is not None:
            found += _regression(remap.domain, previous, current, inserted, t)
        previous = current
    return found


def _multiplicity(remap: Remap, counts: Counter[Time], touched: set[Time], t: int) -> list[Violation]:
    found = []
    for f in sorted(touched, key=remap.domain.key):
        if counts[f] not in (0, 1):
            named = tuple(b for b in remap.bindings if b.from_time == f and b.into_time <= t)
            found.append(Violation("multiplicity", f"{f!r} has count {counts[f]} at {t}", named))
    return found


def _comparable(
    domain: Domain, current: Antichain, touched: set[Time], inserted: dict[Time, Binding], t: int
) -> list[Violation]:
    found = []
    elements = current.sorted()
    for i, a in enumerate(elements):
        for b in elements[i + 1 :]:
            if (a in touched or b in touched) and (domain.le(a, b) or domain.le(b, a)):
                small, large = (a, b) if domain.le(a, b) else (b, a)
                named = (inserted[small], inserted[large])
                found.append(Violation("comparable", f"R({t}) has {small!r} <= {large!r}", named))
    return found


def _regression(
    domain: Domain, previous: Antichain, current: Antichain, inserted: dict[Time, Binding], t: int
) -> list[Violation]:
    """Elements of `R(t)` not beyond the previous `R`: named with a previous element they fall behind."""
    found = []
    for e in current.sorted():
        if previous.less_equal(e):
            continue
        behind = [f for f in previous.sorted() if domain.le(e, f)] or previous.sorted()
        named = (inserted[behind[0]], inserted[e])
        found.append(Violation("regression", f"R({t}) has {e!r}, not beyond earlier {previous!r}", named))
    return found


def _closure(remap: Remap) -> list[Violation]:
    """The source closes (`R` empty) exactly when the remap closes (upper empty)."""
    latest = remap.latest()
    if remap.upper.is_empty() and not latest.is_empty():
        last = tuple(b for b in remap.bindings if b.from_time in set(latest) and b.diff > 0)
        return [Violation("closure", f"closed remap but the source upper is still {latest!r}", last)]
    empty = next((t for t, f in remap.steps() if f.is_empty()), None)
    if empty is None or remap.upper.is_empty():
        return []
    named = tuple(b for b in remap.bindings if b.into_time == empty)
    return [
        Violation(
            "closure", f"R({empty}) is empty (source closed) but the remap's upper is {remap.upper!r}", named
        )
    ]
