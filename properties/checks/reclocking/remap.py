"""The *remap* suite: the model's remap and reclocking obey their laws (no Spark; fast).

Histories are reclock histories (`frontier_harness.properties.checks.reclocking.strategies.reclocking`). Each law
checks the model against definitions written here, not against the rules it
replaces in tests: `R(t)` read with `Antichain.less_equal`, contents with
`frontier_harness.model.time.collection.at`, compaction with `advance_collection`, validity with `audit`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import attrs

from frontier_harness.model.errors import ModelError, SinceRegression
from frontier_harness.model.reclocking.reclock import assign, reclock
from frontier_harness.model.reclocking.remap import INTO, Binding, Remap, audit
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import advance_collection, at
from frontier_harness.properties.checks.reclocking import reclock as reclock_suite
from frontier_harness.properties.checks.reclocking.strategies.reclocking import draw_reclock_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Outcome, Property, Reference, Suite

Law = Callable[[Remap, list], str | None]


def _ticks(remap: Remap) -> list[int]:
    """Readable IntoTimes to probe: since, every step and the tick after it, the last readable tick."""
    start = next(iter(remap.since))
    end = next(iter(remap.upper), None)
    steps = [t for t, _ in remap.steps()]
    probes = {start, *steps, *(t + 1 for t in steps)} | ({end - 1} if end is not None else set())
    return sorted(t for t in probes if remap.readable(t))


def minted_remaps_pass_and_mutants_fail(remap: Remap, updates: list) -> str | None:
    """Every minted remap passes `audit`; one with a regressing, a duplicated or a repeated binding
    does not; its violations name each binding planted, and no binding of another element
    (`audit` names the offending bindings)."""
    found = audit(remap)
    if found:
        return f"minted remap fails the validator: {[str(v) for v in found]}"
    for name, mutant, planted in _mutants(remap):
        violations = audit(mutant)
        if not violations:
            return f"mutant ({name}) passes the validator: {mutant.bindings}"
        named = {b for v in violations for b in v.bindings}
        unnamed = [b for b in planted if b not in named]
        if unnamed:
            return f"mutant ({name}): no violation names {unnamed}: {[str(v) for v in violations]}"
        elements = {b.from_time for b in planted}
        if planted and any(b.from_time not in elements for b in named):
            return f"mutant ({name}): a violation names a binding of another element: {[str(v) for v in violations]}"
    return None


def _mutants(remap: Remap) -> list[tuple[str, Remap, tuple[Binding, ...]]]:
    """Invalid remaps built from `remap`, each with the bindings planted that a violation must name."""
    latest, tick = remap.latest(), next(iter(remap.upper), None)
    if tick is None or latest.is_empty():
        return []
    upper = Antichain.of(INTO, [tick + 1])
    element = latest.sorted()[0]
    extra = Binding(element, tick, 1)  # a second count of `element`, exactly at the new tick
    duplicated = attrs.evolve(remap, bindings=remap.bindings + (extra,), upper=upper)
    mutants: list[tuple[str, Remap, tuple[Binding, ...]]] = [("duplicated element", duplicated, (extra,))]
    last = remap.bindings[-1]  # split into three bindings with its (from, into): counts unchanged
    split = (Binding(last.from_time, last.into_time, 1), Binding(last.from_time, last.into_time, -1))
    mutants.append(("repeated binding", attrs.evolve(remap, bindings=remap.bindings + split), (last, *split)))
    minimum = remap.domain.minimum
    if set(latest) != {minimum}:
        regress = tuple(Binding(f, tick, -1) for f in latest.sorted()) + (Binding(minimum, tick, 1),)
        mutants.append(
            ("regressing binding", attrs.evolve(remap, bindings=remap.bindings + regress, upper=upper), ())
        )
    return mutants


def reclocked_iff_not_beyond(remap: Remap, updates: list) -> str | None:
    """At every readable `t` the reclocked contents are the updates not beyond `R(t)`; all diffs accounted once."""
    result = reclock(remap, updates)
    domain = remap.domain
    for t in _ticks(remap):
        frontier = remap.at(t)
        counts = Counter[object]()
        for u in updates:
            if not frontier.less_equal(u.time):
                counts[u.data] += u.diff
        expected = {d: n for d, n in counts.items() if n}
        got = at(INTO, result.updates, t)
        if got != expected:
            return f"reclocked contents at {t} are {got}, but the updates not beyond R({t}) = {frontier!r} sum to {expected}"
    total, accounted = Counter[object](), Counter[object]()
    for u in updates:
        total[u.data] += u.diff
    for u in (*result.updates, *result.pending):
        accounted[u.data] += u.diff
    if +total != +accounted or -total != -accounted:
        return f"source diffs {dict(total)} but reclocked + pending hold {dict(accounted)}"
    if domain.name == "partitioned":
        return _only_own_partition(remap, updates)
    return None


def _only_own_partition(remap: Remap, updates: list) -> str | None:
    """A single-partition update's IntoTime depends only on the elements of `R` covering its partition."""
    for u in updates:
        if u.time.lo != u.time.hi:
            continue
        own = next(
            (
                t
                for t, f in remap.steps()
                if all(e.offset > u.time.offset for e in f if e.lo <= u.time.lo <= e.hi)
            ),
            None,
        )
        if own != assign(remap, u.time):
            return (
                f"{u.time!r} assigned to {assign(remap, u.time)}, but its own partition completes it at {own}"
            )
    return None


def compaction_commutes(remap: Remap, updates: list) -> str | None:
    """Reclocking a compacted remap = advancing the reclocked output; compaction stays valid; since never goes back."""
    start = next(iter(remap.since))
    if start > 0:
        try:
            remap.compact(Antichain.of(INTO, [start - 1]))
            return f"compacting since {remap.since!r} back to {{{start - 1}}} was accepted"
        except SinceRegression:
            pass
    base = reclock(remap, updates)
    for to in _ticks(remap):
        since = Antichain.of(INTO, [to])
        compacted = remap.compact(since)
        problems = audit(compacted)
        if problems:
            return f"compacted to {since!r}, the remap fails the validator: {[str(v) for v in problems]}"
        got = reclock(compacted, updates)
        advanced = tuple(advance_collection(INTO, base.updates, since))
        if got.updates != advanced or got.pending != base.pending:
            return f"compacted to {since!r}: reclocked {got.updates} != advanced {advanced}"
    return None


def inversion_bounds_later_updates(remap: Remap, updates: list) -> str | None:
    """Every update reclocked at or after `t` (or pending) is beyond `source_upper_at({t})`; earlier ones are not."""
    start = Antichain.of(INTO, [next(iter(remap.since))])
    frontiers = [Antichain.of(INTO, [t]) for t in _ticks(remap) + [_ticks(remap)[-1] + 1]]
    if remap.upper.is_empty():
        frontiers.append(Antichain(INTO))
    for frontier in frontiers:
        if not remap.upper.is_empty() and not frontier.le(remap.upper):
            continue
        inverted, tight = remap.source_upper_at(frontier), not frontier.le(start)
        for u in updates:
            t = assign(remap, u.time)
            later = t is None or frontier.less_equal(t)
            if later and not inverted.less_equal(u.time):
                return (
                    f"{u.time!r} reclocked to {t} but not beyond source_upper_at({frontier!r}) = {inverted!r}"
                )
            if not later and tight and inverted.less_equal(u.time):
                return f"{u.time!r} reclocked to {t}, before {frontier!r}, but beyond source_upper_at = {inverted!r}"
    return None


def events(history: History) -> list[str]:
    """The reclock suite's hard cases, plus an inversion at a binding time with an update assigned there."""
    try:
        remap, updates = reclock_suite.final_state(history)
    except ModelError:
        return []
    found = set(reclock_suite.events(history))
    binding_times = {b.into_time for b in remap.bindings if b.into_time > next(iter(remap.since))}
    if binding_times & {assign(remap, u.time) for u in updates}:
        found.add("inversion at a binding time that has updates")
    return sorted(found)


def law(fn: Law) -> Property:
    """A law over the final remap and source updates of each drawn history."""

    def check(impl, histories: Sequence[History]) -> list[Outcome]:
        outcomes = []
        for history in histories:
            try:
                remap, updates = reclock_suite.final_state(history)
            except ModelError as error:
                outcomes.append(Outcome.model_rejected(error))
                continue
            broken = fn(remap, updates)
            outcomes.append(
                Outcome(
                    ok=broken is None,
                    message=broken or "",
                    step=None if broken is None else len(history.actions),
                )
            )
        return outcomes

    return Property(
        name=fn.__name__, doc=fn.__doc__ or fn.__name__, draw=draw_reclock_history, check=check, events=events
    )


SUITE = Suite(
    name="remap",
    doc="The model's remap laws: validity, reclocking iff not beyond R(t), compaction commutes, inversion bounds.",
    properties=tuple(
        law(fn)
        for fn in (
            minted_remaps_pass_and_mutants_fail,
            reclocked_iff_not_beyond,
            compaction_commutes,
            inversion_bounds_later_updates,
        )
    ),
    default_impl="model",
    reference=Reference.LAWS,
    calls=(),
    required_events=(*reclock_suite.SUITE.required_events, "inversion at a binding time that has updates"),
    event_domains=reclock_suite.EVENT_DOMAINS,
)
