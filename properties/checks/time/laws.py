"""The *laws* suite: the time algebra obeys its own laws (no Spark; thousands of examples a second).

The implementation under test provides `time_domain(name)`, `antichain(domain,
times)` and `advance_by(time, frontier)`; by default it is the model. Each law
draws three times and three frontiers and returns what broke, or None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations, product
from typing import Any

from frontier_harness.model.time.domains import Domain
from frontier_harness.properties.checks.time.strategies.times import draw_frontier, draw_time
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source
from frontier_harness.properties.engine.suite import Outcome, Property, Reference, Suite

Law = Callable[[Any, Domain, list, list], str | None]


def draw_inputs(source: Source, domain_name: str) -> History:
    """Three times `a, b, c` and three frontiers `F, G, H`, as a history of plain data."""
    from frontier_harness.model.time.domains import parse_domain

    domain = parse_domain(domain_name)
    times = [Action("time", {"time": draw_time(source, domain)}) for _ in range(3)]
    fronts = [
        Action("frontier", {"frontier": tuple(draw_frontier(source, domain).sorted())}) for _ in range(3)
    ]
    return History(domain_name, tuple(times + fronts))


def _inputs(history: History) -> tuple[list, list]:
    times = [a.args["time"] for a in history.actions if a.name == "time"]
    fronts = [a.args["frontier"] for a in history.actions if a.name == "frontier"]
    return times, fronts


def le_is_partial_order(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    for a, b, c in product(ts, repeat=3):
        if not d.le(a, a):
            return f"not reflexive: {a!r}"
        if d.le(a, b) and d.le(b, a) and a != b:
            return f"not antisymmetric: {a!r} <= {b!r} <= {a!r}"
        if d.le(a, b) and d.le(b, c) and not d.le(a, c):
            return f"not transitive: {a!r} <= {b!r} <= {c!r}"
    return None


def join_is_least_upper_bound(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    for a, b, c in permutations(ts, 3):
        j = d.join(a, b)
        bounded = d.le(a, c) and d.le(b, c)
        if j is None and bounded:
            return f"join({a!r}, {b!r}) undefined but {c!r} is an upper bound"
        if j is not None and not (d.le(a, j) and d.le(b, j)):
            return f"join({a!r}, {b!r}) = {j!r} is not an upper bound"
        if j is not None and bounded and not d.le(j, c):
            return f"join({a!r}, {b!r}) = {j!r} is not <= upper bound {c!r}"
    return None


def meet_is_greatest_lower_bound(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    for a, b, c in permutations(ts, 3):
        m = d.meet(a, b)
        if not (d.le(m, a) and d.le(m, b)):
            return f"meet({a!r}, {b!r}) = {m!r} is not a lower bound"
        if d.le(c, a) and d.le(c, b) and not d.le(c, m):
            return f"meet({a!r}, {b!r}) = {m!r} is not >= lower bound {c!r}"
    return None


def lattice_identities(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    for a, b in product(ts, repeat=2):
        if d.meet(a, b) != d.meet(b, a) or d.join(a, b) != d.join(b, a):
            return f"join/meet of {a!r}, {b!r} not commutative"
        if d.meet(a, a) != a or d.join(a, a) != a:
            return f"join/meet of {a!r} with itself not idempotent"
        if d.le(a, b) != (d.meet(a, b) == a) or d.le(a, b) != (d.join(a, b) == b):
            return f"le({a!r}, {b!r}) = {d.le(a, b)} disagrees with meet/join"
        if d.lt(a, b) != (d.le(a, b) and a != b):
            return f"lt({a!r}, {b!r}) disagrees with le"
        j = d.join(a, b)
        if j is not None and d.meet(a, j) != a:
            return f"absorption fails: meet({a!r}, join({a!r}, {b!r})) != {a!r}"
    return None


def antichain_is_minimal(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    frontier = impl.antichain(d, ts)
    elems = list(frontier)
    for x, y in permutations(elems, 2):
        if d.le(x, y):
            return f"antichain {frontier!r} of {ts!r} keeps {x!r} <= {y!r}"
    for t in ts:
        if not frontier.less_equal(t):
            return f"{t!r} was inserted but is not beyond {frontier!r}"
    for t in ts:
        if impl.antichain(d, elems).insert(t):
            return f"insert({t!r}) into {frontier!r}, where it is already beyond, reported a change"
    if not impl.antichain(d, []).insert(ts[0]):
        return f"insert({ts[0]!r}) into the empty antichain reported no change"
    return None


def frontier_order_is_partial_order(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    F, G, H = (impl.antichain(d, f) for f in fs)
    empty = impl.antichain(d, [])
    if not F.le(F) or not F.le(empty):
        return f"{F!r} <= {F!r} and {F!r} <= {{}} (the closed frontier is the top) must hold"
    if F.le(G) and G.le(F) and F != G:
        return f"not antisymmetric: {F!r} <= {G!r} <= {F!r}"
    if F.le(G) and G.le(H) and not F.le(H):
        return f"not transitive: {F!r} <= {G!r} <= {H!r}"
    if empty.le(F) and not F.is_empty():
        return f"the closed frontier {{}} is <= {F!r}"
    return None


def frontier_meet_join_are_bounds(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    F, G, H = (impl.antichain(d, f) for f in fs)
    m, j = F.meet(G), F.join(G)
    if not (m.le(F) and m.le(G)) or (H.le(F) and H.le(G) and not H.le(m)):
        return f"meet({F!r}, {G!r}) = {m!r} is not the greatest lower bound (H = {H!r})"
    if not (F.le(j) and G.le(j)) or (F.le(H) and G.le(H) and not j.le(H)):
        return f"join({F!r}, {G!r}) = {j!r} is not the least upper bound (H = {H!r})"
    return None


def advance_by_is_sound(impl: Any, d: Domain, ts: list, fs: list) -> str | None:
    frontier = impl.antichain(d, fs[0])
    for t in ts:
        advanced = impl.advance_by(t, frontier)
        for probe in _probes_beyond(d, frontier, ts):
            if d.le(t, probe) != d.le(advanced, probe):
                return (
                    f"advance_by({t!r}, {frontier!r}) = {advanced!r}, but for {probe!r} beyond the frontier "
                    f"{t!r} <= it is {d.le(t, probe)} and {advanced!r} <= it is {d.le(advanced, probe)}"
                )
    return None


def _probes_beyond(d: Domain, frontier: Any, ts: list) -> list:
    """Times beyond the frontier to test against: the drawn ones and their joins with its elements."""
    joins = [d.join(f, x) for f in frontier for x in ts]
    return [p for p in [*ts, *joins] if p is not None and frontier.less_equal(p)]


def events(history: History) -> list[str]:
    from frontier_harness.model.time.antichain import Antichain, advance_by

    d, (ts, fs) = history.time_domain, _inputs(history)
    found = set()
    if any(not d.le(a, b) and not d.le(b, a) for a, b in permutations(ts, 2)):
        found.add("incomparable times")
    if any(d.join(a, b) is None for a, b in permutations(ts, 2)):
        found.add("times with no join")
    if any(len(f) == 0 for f in fs):
        found.add("empty frontier")
    if any(len(f) > 1 for f in fs):
        found.add("frontier with several elements")
    frontier = Antichain.of(d, fs[0]) if fs else Antichain(d)
    if any(advance_by(t, frontier) != t and _probes_beyond(d, frontier, ts) for t in ts):
        found.add("advance_by moves a time with a probe beyond the frontier")
    return sorted(found)


def law(fn: Law) -> Property:
    """A law as a batched property over drawn inputs."""

    def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
        outcomes = []
        for history in histories:
            ts, fs = _inputs(history)
            if len(ts) < 3 or len(fs) < 3:
                outcomes.append(
                    Outcome(
                        ok=False,
                        rejected=True,
                        message="not a laws history: it needs three times and three frontiers",
                    )
                )
                continue
            broken = fn(impl, impl.time_domain(history.domain), ts, fs)
            outcomes.append(
                Outcome(ok=broken is None, message=broken or "", step=None if broken is None else 0)
            )
        return outcomes

    return Property(
        name=fn.__name__,
        doc=(fn.__doc__ or fn.__name__.replace("_", " ")),
        draw=draw_inputs,
        check=check,
        events=events,
    )


SUITE = Suite(
    name="laws",
    doc="The model's time algebra obeys its laws: partial orders, lattices, antichains, advance_by.",
    properties=tuple(
        law(fn)
        for fn in (
            le_is_partial_order,
            join_is_least_upper_bound,
            meet_is_greatest_lower_bound,
            lattice_identities,
            antichain_is_minimal,
            frontier_order_is_partial_order,
            frontier_meet_join_are_bounds,
            advance_by_is_sound,
        )
    ),
    default_impl="model",
    reference=Reference.LAWS,
    calls=("time_domain", "antichain", "advance_by"),
    required_events=(
        "incomparable times",
        "times with no join",
        "empty frontier",
        "frontier with several elements",
        "advance_by moves a time with a probe beyond the frontier",
    ),
    event_domains={
        "incomparable times": ("product(total,total)", "partitioned"),
        "times with no join": ("partitioned",),
        "frontier with several elements": ("product(total,total)", "partitioned"),
    },
)
