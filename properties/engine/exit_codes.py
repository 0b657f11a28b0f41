"""The exit codes of every `frontier-harness` verb, named once (DESIGN.md, "Whose fault").

>>> [int(code) for code in ExitCode]
[0, 1, 2, 3]
>>> ExitCode.USAGE == 2
True
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """What a run says: it held, a property failed, the input or the contract was bad, or it could not run."""

    HELD = 0  # every law checked held (over what ran)
    FAILED = 1  # a counterexample: the implementation answered wrongly, or raised on valid input
    USAGE = 2  # bad arguments, an invalid input file, a contract violation: never a counterexample
    INFRASTRUCTURE = 3  # it could not run at all (no Java, Spark died, the solver gave up)
