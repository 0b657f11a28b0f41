"""frontier-harness: what a user writes against, imported from here and nowhere deeper.

The package holds the specification (`model`), the Spark pipeline (`spark_impl`),
the harness (`properties`) and two worked examples (`pandas_impl`,
`streaming_job_example`); this module is its public API, `__all__`. An
implementation or a streaming job imports only these names; everything under the
subpackages is the harness's own and may change.

Names resolve on first use (PEP 562), so `import frontier_harness` loads nothing
else: Spark's Python workers import `frontier_harness.spark_impl` modules through
this package, and must not pay for Hypothesis, rich or z3.

>>> from frontier_harness import Action, History, PartitionedTime, model_observation
>>> h = History("partitioned", (Action("update", {"data": "a", "time": PartitionedTime(0, 0, 5), "diff": 1}),))
>>> sorted(model_observation("collections", h).items())
[((1, 'final'), frozenset({('a', [0,0]@5, 1)}))]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and readers
    from frontier_harness.model import vocabulary as vocabulary
    from frontier_harness.model.errors import ModelError as ModelError
    from frontier_harness.model.time.domains import Domain as Domain
    from frontier_harness.model.time.partitioned_time import PARTITION_MAX as PARTITION_MAX
    from frontier_harness.model.time.partitioned_time import PartitionedTime as PartitionedTime
    from frontier_harness.model.vocabulary import ActionLike as ActionLike
    from frontier_harness.model.vocabulary import Arg as Arg
    from frontier_harness.model.vocabulary import HistoryLike as HistoryLike
    from frontier_harness.properties.checks.streaming.job import JobFactory as JobFactory
    from frontier_harness.properties.checks.streaming.job import StatefulJob as StatefulJob
    from frontier_harness.properties.checks.streaming.job import StatefulJobFactory as StatefulJobFactory
    from frontier_harness.properties.checks.streaming.job import StatefulJoinJob as StatefulJoinJob
    from frontier_harness.properties.checks.streaming.job import (
        StatefulJoinJobFactory as StatefulJoinJobFactory,
    )
    from frontier_harness.properties.checks.streaming.job import StreamingJob as StreamingJob
    from frontier_harness.properties.checks.streaming.job import TransformingJob as TransformingJob
    from frontier_harness.properties.cli.check import check as check
    from frontier_harness.properties.cli.run import model_observation as model_observation
    from frontier_harness.properties.engine.counterexample import Counterexample as Counterexample
    from frontier_harness.properties.engine.errors import ContractViolation as ContractViolation
    from frontier_harness.properties.engine.errors import HarnessError as HarnessError
    from frontier_harness.properties.engine.history import Action as Action
    from frontier_harness.properties.engine.history import History as History
    from frontier_harness.properties.engine.implementation import Implementation as Implementation
    from frontier_harness.properties.engine.implementation import Observation as Observation
    from frontier_harness.properties.engine.implementation import Speed as Speed
    from frontier_harness.properties.engine.infrastructure import InfrastructureError as InfrastructureError
    from frontier_harness.properties.engine.results import PropertyResult as PropertyResult
    from frontier_harness.properties.engine.results import SuiteResult as SuiteResult

# Each public name and the module that defines it.
_HOMES = {
    # an implementation: the protocol (subclass it for the defaults), its speed, what it returns
    "Implementation": "frontier_harness.properties.engine.implementation",
    "Speed": "frontier_harness.properties.engine.implementation",
    "Observation": "frontier_harness.properties.engine.implementation",
    # what it is handed: histories, their actions, the time domain and the time values
    "History": "frontier_harness.properties.engine.history",
    "Action": "frontier_harness.properties.engine.history",
    "HistoryLike": "frontier_harness.model.vocabulary",
    "ActionLike": "frontier_harness.model.vocabulary",
    "Domain": "frontier_harness.model.time.domains",
    "PartitionedTime": "frontier_harness.model.time.partitioned_time",
    "PARTITION_MAX": "frontier_harness.model.time.partitioned_time",
    # the words of histories and observations: the shared argument keys, and each capability's words
    "Arg": "frontier_harness.model.vocabulary",
    "vocabulary": "frontier_harness.model.vocabulary",
    # errors: raised by an implementation, or by the harness
    "InfrastructureError": "frontier_harness.properties.engine.infrastructure",
    "ModelError": "frontier_harness.model.errors",
    "HarnessError": "frontier_harness.properties.engine.errors",
    "ContractViolation": "frontier_harness.properties.engine.errors",
    # a streaming job (`--job`), stateless or stateful
    "StreamingJob": "frontier_harness.properties.checks.streaming.job",
    "TransformingJob": "frontier_harness.properties.checks.streaming.job",
    "JobFactory": "frontier_harness.properties.checks.streaming.job",
    "StatefulJob": "frontier_harness.properties.checks.streaming.job",
    "StatefulJobFactory": "frontier_harness.properties.checks.streaming.job",
    "StatefulJoinJob": "frontier_harness.properties.checks.streaming.job",
    "StatefulJoinJobFactory": "frontier_harness.properties.checks.streaming.job",
    # running the suites from Python, and what a run returns
    "check": "frontier_harness.properties.cli.check",
    "model_observation": "frontier_harness.properties.cli.run",
    "SuiteResult": "frontier_harness.properties.engine.results",
    "PropertyResult": "frontier_harness.properties.engine.results",
    "Counterexample": "frontier_harness.properties.engine.counterexample",
}
_CAPABILITIES = (
    "time",
    "reclocking",
    "ingestion",
    "streaming",
    "event_time",
    "catalog",
    "ttl",
    "upgrade",
)  # `vocabulary.<capability>`

__all__ = list(_HOMES)


def __getattr__(name: str) -> Any:
    """A public name, imported from its home on first use and kept."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = importlib.import_module(_HOMES[name])
    if name == "vocabulary":
        for capability in _CAPABILITIES:
            importlib.import_module(f"{home.__name__}.{capability}")
        value: Any = home
    else:
        value = getattr(home, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
