"""The exit codes of every `frontier-harness` verb, named once (DESIGN.md, "Whose fault"), and whose fault
an exception is.

>>> [int(code) for code in ExitCode]
[0, 1, 2, 3, 4]
>>> exit_code_of(KeyError("step")), exit_code_of(InfrastructureError("the JVM died"))
(<ExitCode.INTERNAL: 4>, <ExitCode.INFRASTRUCTURE: 3>)
"""

from __future__ import annotations

import enum

from frontier_harness.model.errors import ModelError
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.infrastructure import InfrastructureError


class ExitCode(enum.IntEnum):
    """What a run says: it held, a property failed, the input or the contract was bad, it could not run,
    or the harness itself failed."""

    HELD = 0  # every law checked held (over what ran)
    FAILED = 1  # a counterexample: the implementation answered wrongly, or raised on valid input
    USAGE = 2  # bad arguments, an invalid input file, a contract violation: never a counterexample
    INFRASTRUCTURE = 3  # it could not run at all (no Java, Spark died, the solver gave up)
    INTERNAL = 4  # the harness raised what it never should: a bug to report, with its traceback


def exit_code_of(exc: BaseException) -> ExitCode:
    """Whose fault `exc` is: bad input, usage or a broken contract (2), infrastructure (3), else the
    harness's own (4). An exception never maps to 1: only a counterexample fails a run."""
    if isinstance(exc, (HarnessError, ModelError)):
        return ExitCode.USAGE
    if isinstance(exc, InfrastructureError):
        return ExitCode.INFRASTRUCTURE
    return ExitCode.INTERNAL
