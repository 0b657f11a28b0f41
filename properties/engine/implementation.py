"""What the harness needs of an implementation under test: the `Implementation` protocol.

The runner, the lanes and the CLI depend on this protocol only; they never ask
which implementation they hold. An implementation is any object with

- `name`: what reports and counterexample files call it;
- `speed`: `Speed.IN_PROCESS` (thousands of histories a second: the model, or a
  model with one rule broken) or `Speed.BATCHED` (each call is a job, e.g. a
  Spark job: fewer, larger calls);
- `prepare()`: called once before a suite runs (Spark starts there, so a missing
  Java is reported before any example);
- `recover()`: called after an infrastructure failure, before the one retry;
- `infrastructure_failure(exc)`: why `exc` means the implementation could not
  run (the JVM died, the server is gone), or None when it is an answer (a bug);
- one method per capability it implements, `observe_<capability>(domain,
  histories) -> list[Observation]`: a batch of histories of one time domain in,
  one observation per history out, in order. Each suite names the method it
  calls (`Suite.observer`); `Observer` is its type. The laws suite instead calls
  the time algebra (`TimeAlgebra`).

Subclass `Implementation` to inherit the defaults (in-process speed, nothing to
prepare or recover, only `InfrastructureError` and connection errors are
infrastructure). `pandas_impl/` is a worked example:

>>> from pandas_impl import factory
>>> impl = factory()
>>> isinstance(impl, Implementation), callable(impl.observe_collections)
(True, True)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from frontier_harness.model.time.domains import Domain
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.infrastructure import InfrastructureError

# What an implementation shows at each step of one history, keyed by `(step, label)`.
Observation = dict[tuple[int, str], Any]


class Speed(enum.Enum):
    """How an implementation's calls cost: it chooses the example counts a run uses."""

    IN_PROCESS = "in-process"
    BATCHED = "batched"


@runtime_checkable
class Implementation(Protocol):
    """The runner's view of any implementation (see the module docstring)."""

    name: str
    speed: Speed = Speed.IN_PROCESS

    def prepare(self) -> None:
        """Called once before a suite runs; raises `InfrastructureError` if it cannot run at all."""
        return None

    def recover(self) -> None:
        """Called after an infrastructure failure, before the runner's one retry."""
        return None

    def infrastructure_failure(self, exc: Exception) -> str | None:
        """Why `exc` means the implementation could not run, or None when it is an answer."""
        if isinstance(exc, (InfrastructureError, ConnectionError, EOFError, MemoryError)):
            return f"{type(exc).__name__}: {exc}"
        return None


class Observer(Protocol):
    """An `observe_<capability>` method: one observation per history of one domain, in order."""

    def __call__(self, domain: Domain, histories: Sequence[History]) -> list[Observation]: ...


@runtime_checkable
class TimeAlgebra(Protocol):
    """What the laws suite calls: a domain's order, antichains of it, and `advance_by`."""

    def time_domain(self, name: str) -> Domain: ...

    def antichain(self, domain: Domain, times: Iterable[Any]) -> Any: ...

    def advance_by(self, time: Any, frontier: Any) -> Any: ...
