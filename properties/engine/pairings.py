"""Which implementations a run judges each suite against: its pairings.

The default run (no `--impl`) judges every implementation a suite supports,
the model included. A suite runs against its default implementation (a batched
engine for most suites) and, when some of its properties compare with a
reference independent of the model (`frontier_harness.properties.engine.suite.Reference`: an oracle,
laws, an intrinsic property), against the model in process as well: those
properties judge the model. A property whose reference is the model's own
answer judges every other implementation and never the model, so the model's
pairing names it as the reference and claims no verdict. `--impl X` narrows the
run to X.

>>> from frontier_harness.properties.checks.registry import get_suite
>>> [(pairing.impl_name, pairing.reference_only) for pairing in pairings(get_suite("collections"), None, _stub)]
[('model', ('observations_match_model',)), ('spark', ())]
>>> [p.name for p in pairings(get_suite("ttl"), "model", _stub)[0].suite.properties]
['reads_match_store_without_compaction']
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

import attrs

from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.results import SuiteResult
from frontier_harness.properties.engine.suite import Property, Reference, Suite

MODEL = "model"  # the `--impl` spec of the model itself (a subclass that breaks a rule is not the reference)
Load = Callable[[str], Implementation]
NO_ORACLE = "reference (no independent oracle)"  # what a pairing shows for a property it is the reference of


def reference_of(suite: Suite, prop: Property) -> Reference:
    """What `prop` compares with: its own declaration, else its suite's."""
    return prop.reference or suite.reference


@attrs.frozen
class Pairing:
    """One suite against one implementation: the properties it judges, and those it only shows.

    `suite` keeps only the judged properties; `reference_only` names the ones whose
    reference is this implementation itself (the model's answer, in the model's pairing).
    """

    suite: Suite
    impl_name: str
    impl: Implementation
    reference_only: tuple[str, ...] = ()

    @property
    def judges(self) -> bool:
        return bool(self.suite.properties)


@attrs.frozen
class PairingResult:
    """What one pairing did: the suite's results against `impl`, and the properties it showed as the reference."""

    impl: str
    result: SuiteResult
    reference_only: tuple[str, ...] = ()

    @builtins.property
    def suite(self) -> str:
        return self.result.suite

    @builtins.property
    def passed(self) -> bool:
        return self.result.passed


def pairings(suite: Suite, impl: str | None, load: Load) -> list[Pairing]:
    """`suite`'s pairings: against `impl` alone when given, else the model (when it is judged) and the default.

    Support is not checked here (`unsupported`): a pairing may name an
    implementation the suite cannot run against.
    """
    specs = [impl] if impl else _default_specs(suite)
    return [_pairing(suite, spec, load(spec)) for spec in specs]


def _default_specs(suite: Suite) -> list[str]:
    """The model first (in process: its verdicts come in seconds), then the suite's default."""
    return [MODEL] if suite.default_impl == MODEL else [MODEL, suite.default_impl]


def _pairing(suite: Suite, spec: str, impl: Implementation) -> Pairing:
    if spec != MODEL:
        return Pairing(suite, spec, impl)
    judged = tuple(p for p in suite.properties if reference_of(suite, p).independent)
    shown = tuple(p.name for p in suite.properties if not reference_of(suite, p).independent)
    return Pairing(attrs.evolve(suite, properties=judged), spec, impl, shown)


def runs_against(suite: Suite, prop: Property, model: Implementation) -> str:
    """The implementations the default run judges `prop` with, and the model when it is only the reference.

    >>> from frontier_harness.properties.adapters.model import ModelImplementation
    >>> from frontier_harness.properties.checks.registry import get_suite
    >>> ttl, cols = get_suite("ttl"), get_suite("collections")
    >>> model = ModelImplementation()
    >>> runs_against(ttl, ttl.properties[0], model), runs_against(cols, cols.properties[0], model)
    ('model, spark', 'spark (model: reference)')
    """
    independent = reference_of(suite, prop).independent
    model_runs = independent and suite.unsupported(model, MODEL) is None
    judged = [spec for spec in _default_specs(suite) if spec != MODEL or model_runs]
    return ", ".join(judged) + ("" if independent else " (model: reference)")


def _stub(spec: str) -> Implementation:
    """A loader for the doctests: an implementation object with no methods."""

    class Stub(Implementation):
        name = spec

    return Stub()
