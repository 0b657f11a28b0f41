"""Implementations under test, and how to load one from `--impl`.

An implementation is any object with the methods the suites call:

- `observe_<capability>(domain, histories) -> list[Observation]` for each
  differential suite (e.g. `observe_collections`): a batch of histories of one
  time domain in, one observation per history out, in order. An observation is a
  dict keyed by `(step, label)` whose values are frozensets of plain tuples; see
  each suite's `observe` for the model's.
- `time_domain(name)`, `antichain(domain, times)`, `advance_by(time, frontier)`
  for the laws suite.

An optional `prepare()` is called once before a suite runs (Spark starts there).

`--impl model` is the oracle itself, `--impl spark` the Spark pipeline, and
`--impl module:factory` calls `factory()` from an importable module.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from typing import Any

from model.antichain import Antichain, advance_by
from model.domains import Domain, parse_domain
from properties.errors import ImplementationError


class ModelImplementation:
    """The model as an implementation: the suites' own observers, and the model's algebra."""

    name = "model"

    def time_domain(self, name: str) -> Domain:
        return parse_domain(name)

    def antichain(self, domain: Domain, times: Iterable[Any]) -> Antichain:
        return Antichain.of(domain, times)

    def advance_by(self, time: Any, frontier: Antichain) -> Any:
        return advance_by(time, frontier)

    def __getattr__(self, method: str) -> Any:
        from properties.suites import OBSERVERS

        capability = method.removeprefix("observe_")
        if method.startswith("observe_") and capability in OBSERVERS:
            return lambda domain, histories: [OBSERVERS[capability](h) for h in histories]
        raise AttributeError(method)


def load_implementation(spec: str) -> Any:
    """`model`, `spark`, or `module:factory`; a typed error naming what could not be loaded."""
    if spec == "model":
        return ModelImplementation()
    if spec == "spark":
        from spark_impl.implementation import SparkImplementation

        return SparkImplementation()
    module_name, _, factory_name = spec.partition(":")
    if not module_name or not factory_name:
        raise ImplementationError(f"--impl {spec!r}: expected model, spark or module:factory")
    if os.getcwd() not in sys.path:  # user modules are importable from where the command runs
        sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(module_name), factory_name)
    except (ImportError, AttributeError) as exc:
        raise ImplementationError(
            f"--impl {spec!r}: cannot load {factory_name!r} from {module_name!r}: {exc}"
        ) from exc
    return factory()
