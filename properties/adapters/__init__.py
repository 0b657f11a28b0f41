"""The implementations the harness ships, and loading one from `--impl`.

`model` is the oracle itself (`frontier_harness.properties.adapters.model`), `spark` the Spark
pipeline (`frontier_harness.properties.adapters.spark`), `job:MODULE:FACTORY` and
`stateful-job:MODULE:FACTORY` Spark running a user's streaming job
(`frontier_harness.properties.adapters.job`), `upgrade-job:OLD->NEW` a stateful job's trials switched to
another job (`frontier_harness.properties.adapters.upgrade`), and `module:factory` calls `factory()`
from an importable module: a user's own pipeline, which must satisfy
`frontier_harness.properties.engine.implementation.Implementation` (subclass it for the defaults).

>>> load_implementation("model").name
'model'
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from frontier_harness.properties.engine.diagnostics import describe, own_frames
from frontier_harness.properties.engine.errors import ImplementationError
from frontier_harness.properties.engine.implementation import Implementation


def load_implementation(spec: str) -> Implementation:
    """`model`, `spark`, or `module:factory`; a typed error naming what could not be loaded."""
    if spec == "model":
        from frontier_harness.properties.adapters.model import ModelImplementation

        return ModelImplementation()
    if spec == "spark":
        from frontier_harness.properties.adapters.spark import SparkImplementation

        return SparkImplementation()
    from frontier_harness.properties.adapters.job import load_job_spec

    job = load_job_spec(spec)
    if job is not None:
        return job
    from frontier_harness.properties.adapters.upgrade import load_upgrade_spec

    upgrade = load_upgrade_spec(spec)
    if upgrade is not None:
        return upgrade
    impl = _called(spec, _factory(spec))
    if not isinstance(impl, Implementation):
        raise ImplementationError(
            f"--impl {spec!r}: {type(impl).__name__} is not an Implementation (it needs name, speed, "
            "prepare, recover and infrastructure_failure: subclass frontier_harness.properties.engine.implementation.Implementation)"
        )
    return impl


def _called(spec: str, factory: Any) -> Any:
    """`factory()`; what it raises (a `SystemExit` too) is the user's: bad input naming it, with their
    frames, never the harness's bug nor the run's exit."""
    try:
        return factory()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise ImplementationError(f"--impl {spec!r}: the factory raised {_with_frames(exc)}") from exc


def _with_frames(exc: BaseException) -> str:
    """`Type: message`, then the user's frames of its traceback, one a line (`diagnostics.own_frames`), from
    the frame below this module's that caught it."""
    below = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    frames = "".join(f"\n  at {frame}" for frame in own_frames(exc.with_traceback(below)))
    return f"{describe(exc)}{frames}"


def _factory(spec: str):
    module_name, _, factory_name = spec.partition(":")
    if not module_name or not factory_name:
        raise ImplementationError(f"--impl {spec!r}: expected model, spark or module:factory")
    if os.getcwd() not in sys.path:  # user modules are importable from where the command runs
        sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module_name), factory_name)
    except (ImportError, AttributeError) as exc:
        raise ImplementationError(
            f"--impl {spec!r}: cannot load {factory_name!r} from {module_name!r}: {exc}"
        ) from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the module raised as it was imported
        raise ImplementationError(
            f"--impl {spec!r}: importing {module_name!r} raised {_with_frames(exc)}"
        ) from exc
