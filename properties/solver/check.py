"""Solving: each case proved, refuted, or given up on, and the verdicts gathered per obligation.

A case is TRIVIAL when its goal holds without any hypothesis (`¬goal` alone is
unsatisfiable: it says nothing about the world or the rules' inputs), PROVED when
`hypotheses ∧ ¬goal` is unsatisfiable, REFUTED by a model of it, and UNKNOWN otherwise
(a timeout or a resource limit is never reported as proved).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import z3

from frontier_harness.properties.solver import encoding
from frontier_harness.properties.solver.cases import Case
from frontier_harness.properties.solver.encoding import Opt, Rules
from frontier_harness.properties.solver.registry import NAMES, Obligation, get
from frontier_harness.properties.solver.world import World


class ProofStatus(enum.StrEnum):
    """A case's or an obligation's result, named once for `prove`, `verify` and JUnit alike.

    >>> [s.value for s in ProofStatus if s.holds]
    ['trivial', 'proved']
    """

    TRIVIAL = "trivial"  # the goal holds with no hypothesis at all: true, but no evidence about the rules
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"  # the solver gave up (its reason kept)
    ERROR = "error"
    NOT_RUN = "not run"  # an obligation with no case: nothing was asked of the solver

    @property
    def holds(self) -> bool:
        """Whether a case is true: proved, or trivially so (an obligation needs a proof: `Result.holds`)."""
        return self in (ProofStatus.TRIVIAL, ProofStatus.PROVED)


@attrs.frozen
class Verdict:
    """One case's result (a `ProofStatus`; `unknown` with the solver's reason)."""

    case: Case
    status: ProofStatus
    seconds: float
    values: dict[str, int | None] = attrs.field(factory=dict)
    reason: str = ""


def euclid(exprs: Sequence[Any]) -> tuple[list, list]:
    """`exprs` with each `x % y` by a non-constant `y` named by a fresh `m`, and the facts defining it.

    The facts are Euclid's division, `y > 0 => x == q*y + m and 0 <= m < y` (a fresh
    `q`): what `%` is for a positive divisor, as in Python. z3 gives up on `%` by a
    variable inside non-linear goals but handles the products; for `y <= 0` `m` is left
    free, which only makes a proof harder, never easier.
    """
    named: dict[str, Any] = {}
    facts: list[Any] = []

    def walk(e: Any) -> Any:
        if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_MOD and not z3.is_int_value(e.arg(1)):
            key = e.sexpr()
            if key not in named:
                x, y = walk(e.arg(0)), walk(e.arg(1))
                m, q = z3.Int(f"mod.{len(named)}"), z3.Int(f"quotient.{len(named)}")
                named[key] = m
                facts.append(z3.Implies(y > 0, z3.And(x == q * y + m, m >= 0, m < y)))
            return named[key]
        if z3.is_app(e) and e.num_args() > 0:
            return e.decl()(*[walk(c) for c in e.children()])
        return e

    return [walk(e) for e in exprs], facts


def _solver(timeout_s: float | None, rlimit: int | None) -> z3.Solver:
    solver = z3.Solver()
    if timeout_s is not None:
        solver.set("timeout", max(1, int(timeout_s * 1000)))
    if rlimit is not None:
        solver.set("rlimit", rlimit)
    return solver


def check_case(case: Case, timeout_s: float | None = None, rlimit: int | None = None) -> Verdict:
    """Proves, refutes or gives up on one case; a give-up or a solver error is never reported as proved.

    A goal that holds with no hypothesis at all is "trivial": true, but no evidence about the rules.
    """
    solver = _solver(timeout_s, rlimit)
    started = time.perf_counter()
    try:
        hypotheses, goal, facts = list(case.hypotheses), case.goal, list[Any]()
        if case.euclid:
            (*hypotheses, goal), facts = euclid([*case.hypotheses, case.goal])
        solver.add(*facts, z3.Not(goal))
        if solver.check() == z3.unsat:
            return Verdict(case, ProofStatus.TRIVIAL, time.perf_counter() - started)
        solver = _solver(timeout_s, rlimit)
        solver.add(*facts, *hypotheses, z3.Not(goal))
        result = solver.check()
        seconds = time.perf_counter() - started
        if result == z3.unsat:
            return Verdict(case, ProofStatus.PROVED, seconds)
        if result == z3.sat:
            return Verdict(case, ProofStatus.REFUTED, seconds, read_terms(case.terms, solver.model()))
        return Verdict(case, ProofStatus.UNKNOWN, seconds, reason=solver.reason_unknown() or "unknown")
    except z3.Z3Exception as exc:
        return Verdict(case, ProofStatus.ERROR, time.perf_counter() - started, reason=f"solver error: {exc}")


def read_terms(terms: Mapping[str, Any], model: z3.ModelRef) -> dict[str, int | None]:
    """The named terms' values under a model (`Opt`s as `Optional[int]`)."""
    return {
        k: encoding.concrete(v, model)
        if isinstance(v, Opt)
        else model.eval(v, model_completion=True).as_long()
        for k, v in terms.items()
    }


@attrs.frozen
class Result:
    """An obligation's verdicts: refuted if any case is, else unknown/error if any is, else proved; with no
    case at all "not run", and with only trivial ones "trivial": neither holds (`holds`), as neither says
    anything about the rules.

    >>> Result(get("lattice"), (), 0.0).status, Result(get("lattice"), (), 0.0).holds
    (<ProofStatus.NOT_RUN: 'not run'>, False)
    """

    obligation: Obligation
    verdicts: tuple[Verdict, ...]
    seconds: float

    @property
    def status(self) -> ProofStatus:
        """The worst verdict: refuted, error, unknown; else proved (trivial only when every case is)."""
        if not self.verdicts:
            return ProofStatus.NOT_RUN
        statuses = {v.status for v in self.verdicts}
        worst = (ProofStatus.REFUTED, ProofStatus.ERROR, ProofStatus.UNKNOWN, ProofStatus.PROVED)
        return next((s for s in worst if s in statuses), ProofStatus.TRIVIAL)

    @property
    def holds(self) -> bool:
        """Proved: at least one case needed the rules, and every case held."""
        return self.status is ProofStatus.PROVED

    def count(self, status: str) -> int:
        return sum(v.status == status for v in self.verdicts)


def prove(
    names: Sequence[str] | None = None,
    rules: Rules = encoding.FAITHFUL,
    skew: int = 0,
    timeout_s: float | None = None,
    rlimit: int | None = None,
) -> list[Result]:
    """Every case of the named obligations (all by default), each obligation's time measured."""
    world = World(skew)
    results = []
    for name in names or NAMES:
        obligation = get(name)
        started = time.perf_counter()
        verdicts = tuple(check_case(c, timeout_s, rlimit) for c in obligation.cases(rules, world))
        results.append(Result(obligation, verdicts, time.perf_counter() - started))
    return results
