"""The mutation run: a traced baseline, then each mutant judged by the checks that reach it.

1. Baseline: every probe's screening lane runs once, unmutated, under a line
   tracer. It records how long the probe takes (checks run cheapest first), which
   lines it reaches, and that it holds; a probe that fails unmutated cannot judge
   a mutant and is left out (and reported).
2. Each mutant: unreached if no probe reaches its line; otherwise loaded in
   memory (`loader`) and checked by the reaching probes, screening lane first
   (one batched job each), then, for a survivor, the profile's full lane. The
   first failure kills it. Every check runs under a time limit, and a check that
   has failed gets `SHRINK_BUDGET` seconds more to shrink its failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from frontier_harness.properties.adapters import load_implementation
from frontier_harness.properties.engine.diagnostics import set_up
from frontier_harness.properties.engine.infrastructure import InfrastructureError
from frontier_harness.properties.engine.profiles import Profile
from frontier_harness.properties.mutate.baseline import Baseline
from frontier_harness.properties.mutate.loader import ImportFailed, Loader
from frontier_harness.properties.mutate.mutants import Mutant, mutated_tree
from frontier_harness.properties.mutate.probe import FULL, LANES, SCREENING, Probe, Witness, check
from frontier_harness.properties.mutate.reach import LineTracer, Reached
from frontier_harness.properties.mutate.results import (
    INFRASTRUCTURE,
    KILLED,
    SURVIVED,
    TIMEOUT,
    UNREACHED,
    MutantResult,
    MutationRun,
)
from frontier_harness.properties.mutate.sources import SourceModule, dependents, target_modules
from frontier_harness.properties.mutate.watchdog import TimedOut, time_limit

# A check's time limit: generous multiples of what the probe took unmutated (seconds).
SCREENING_FLOOR, SCREENING_FACTOR = 60.0, 10.0
FULL_FLOOR, FULL_FACTOR = 120.0, 3.0
# Once a check has failed, how long it may go on shrinking (the smallest failure so far is kept).
SHRINK_BUDGET = 20.0

Progress = Callable[[str], None]


@attrs.frozen
class Plan:
    """What a run mutates and checks it with."""

    target: str
    modules: tuple[SourceModule, ...]  # the target's
    extra: tuple[SourceModule, ...]  # modules outside the target re-executed with it (an `--impl` factory's)
    probes: tuple[Probe, ...]
    profile: Profile
    seed: int


class Engine:
    """Runs a plan: `baseline()` once, then `judge(mutant)` per mutant."""

    def __init__(
        self, plan: Plan, progress: Progress | None = None, cancel: Callable[[], None] = lambda: None
    ):
        self.plan = plan
        self.progress = progress or (lambda text: None)
        self.cancel = cancel  # stops the implementation's running jobs when a check runs out of time
        self.modules = {m.name: m for m in plan.modules}
        graph = [*plan.modules, *plan.extra]
        self.dependents = {m.name: dependents(m.name, graph) for m in plan.modules}
        self.imports = {m.name: m.imports() & {g.name for g in graph} for m in graph}
        self.loader = Loader(frozenset(m.name for m in graph))
        self.baselines: list[Baseline] = []

    def run(
        self,
        mutants: Sequence[Mutant],
        sessions: Callable[[], int] = lambda: 0,
        judged: Callable[[MutationRun], None] = lambda run: None,
    ) -> MutationRun:
        """The baseline (only if there is anything to mutate), then every mutant in order.

        `sessions` counts the Spark sessions the process has started; the run reports how many it
        started. `judged` sees the run so far after each mutant (to save partial results).
        """
        started, sessions_before = time.perf_counter(), sessions()
        results: list[MutantResult] = []

        def so_far() -> MutationRun:
            return MutationRun(
                self.plan.target,
                self.plan.profile.name,
                self.plan.seed,
                tuple(results),
                time.perf_counter() - started,
                sessions() - sessions_before,
                tuple(self.baselines),
            )

        if mutants:
            self.baseline({m.module for m in mutants})
        for i, mutant in enumerate(mutants):
            self.progress(
                f"{i}/{len(mutants)} {_tally(results)} — {mutant.path}:{mutant.line} {mutant.operator}"
            )
            results.append(self.judge(mutant))
            judged(so_far())
        return so_far()

    def baseline(self, mutated: Iterable[str] | None = None) -> list[Baseline]:
        """Each probe's screening lane, unmutated and traced; the usable ones sorted cheapest first.

        Only probes whose implementation methods can import one of the `mutated` modules (all, if
        None) run: `--since` with one changed module does not wait for every suite.
        """
        files = {str(m.path) for m in self.plan.modules}
        wanted = set(self.modules if mutated is None else mutated)
        out = []
        for probe in self.plan.probes:
            impl = load_implementation(probe.impl_name)
            if not self._may_import(probe, impl, wanted):
                continue
            self.progress(f"baseline {probe.name}")
            set_up(impl, probe.impl_name)  # start Spark outside the timing
            started = time.perf_counter()
            witness = Witness(probe.prop.check, started)
            with LineTracer(files) as tracer:
                check(probe, impl, self.plan.profile, self.plan.seed, SCREENING, witness)
            failure = witness.message if witness.failed else ""
            out.append(Baseline(probe, time.perf_counter() - started, Reached.of(tracer.lines), failure))
        self.baselines = sorted(out, key=lambda b: b.seconds)
        return self.baselines

    def _may_import(self, probe: Probe, impl: Any, wanted: set[str]) -> bool:
        """Whether a module the probe's methods are defined in (or delegate to) imports one of `wanted`,
        directly or not; True when that cannot be told (a method outside the target)."""
        entries = {observer_module(impl, method) for method in probe.suite.calls}
        known = {e for e in entries if e is not None and e in self.imports}
        if not probe.suite.calls or known != entries:
            return True
        seen, todo = set(known), list(known)
        while todo:
            for name in self.imports[todo.pop()] - seen:
                seen.add(name)
                todo.append(name)
        return bool(seen & wanted)

    def judge(self, mutant: Mutant) -> MutantResult:
        """The mutant's verdict (see `frontier_harness.properties.mutate.results`)."""
        module = self.modules[mutant.module]
        reaching = [
            b for b in self.baselines if not b.failure and b.reached.reaches(mutant, str(module.path))
        ]
        if not reaching:
            return MutantResult(mutant, UNREACHED)
        started = time.perf_counter()
        try:
            with self.loader.activated(module, mutated_tree(module, mutant), self.dependents[module.name]):
                result = self._checks(mutant, reaching, started)
        except ImportFailed as exc:
            result = MutantResult(
                mutant, KILLED, time.perf_counter() - started, lane="import", message=str(exc)
            )
        return attrs.evolve(result, total_seconds=time.perf_counter() - started)

    def _checks(self, mutant: Mutant, reaching: list[Baseline], started: float) -> MutantResult:
        impls: dict[str, Any] = {}
        for lane in LANES:
            for b in reaching:
                name = b.probe.impl_name
                impl = impls[name] = impls.get(name) or load_implementation(name)
                witness = Witness(b.probe.prop.check, started)
                verdict = self._check(mutant, b, impl, lane, witness, started)
                if verdict is not None:
                    return verdict
        return MutantResult(mutant, SURVIVED, time.perf_counter() - started)

    def _check(
        self, mutant: Mutant, b: Baseline, impl: Any, lane: str, witness: Witness, started: float
    ) -> MutantResult | None:
        """One probe, one lane: the verdict if it decides the mutant, None if the probe held."""
        limit = self._limit(b, lane)
        checked = time.perf_counter() - started  # when this check began, in the witness's clock

        def seconds() -> float:
            found = witness.first_seconds
            return limit if found is None else min(limit, found - checked + SHRINK_BUDGET)

        try:
            with time_limit(seconds, self.cancel):
                check(b.probe, impl, self.plan.profile, self.plan.seed, lane, witness)
        except TimedOut:
            if not witness.failed:
                return MutantResult(mutant, TIMEOUT, time.perf_counter() - started, b.probe.name, lane)
        except InfrastructureError as exc:
            set_up(impl, b.probe.impl_name, "recover")
            return MutantResult(mutant, INFRASTRUCTURE, 0.0, b.probe.name, lane, message=str(exc)[:300])
        except Exception as exc:  # the harness itself raised under the mutant (it held unmutated)
            return MutantResult(
                mutant, KILLED, time.perf_counter() - started, b.probe.name, "raised", None, repr(exc)[:300]
            )
        if not witness.failed:
            return None
        size = len(witness.smallest.actions) if witness.smallest is not None else None
        return MutantResult(
            mutant, KILLED, witness.first_seconds or 0.0, b.probe.name, lane, size, witness.message
        )

    def _limit(self, b: Baseline, lane: str) -> float:
        if lane == SCREENING:
            return max(SCREENING_FLOOR, SCREENING_FACTOR * b.seconds)
        assert lane == FULL
        return max(FULL_FLOOR, FULL_FACTOR * self.plan.profile.batched_examples * b.seconds)

    def suites_by_module(self) -> dict[str, list[str]]:
        """Per target module, the suites whose histories run any of its lines."""
        out: dict[str, set] = {}
        for m in self.plan.modules:
            for b in self.baselines:
                if str(m.path) in b.reached.files:
                    out.setdefault(m.name, set()).add(b.probe.suite.name)
        return {name: sorted(suites) for name, suites in sorted(out.items())}


def observer_module(impl: Any, method: str) -> str | None:
    """The module an implementation method computes in: where it is defined, or (an adapter's
    delegating method) the module it names in `delegates_to`."""
    function = getattr(type(impl), method, None)
    return getattr(function, "delegates_to", None) or getattr(function, "__module__", None)


def _tally(results: Sequence[MutantResult]) -> str:
    counts = {s: sum(r.status == s for r in results) for s in (KILLED, SURVIVED, UNREACHED, TIMEOUT)}
    return " · ".join(f"{n} {s}" for s, n in counts.items() if n)


def plan_modules(target: str, impl: str | None) -> tuple[list[SourceModule], list[SourceModule]]:
    """The target's modules (pinned ones left out) and, if `impl` is `module:factory` outside the
    target, that module (re-executed with each mutant so the factory builds on it)."""
    modules = [m for m in target_modules(target) if not m.pinned]
    factory_module = impl.partition(":")[0] if impl and ":" in impl else None
    if factory_module is None or any(m.name == factory_module for m in modules):
        return modules, []
    return modules, [m for m in target_modules(factory_module, "--impl") if m.name == factory_module]
