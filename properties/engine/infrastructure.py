"""Infrastructure failures: the implementation could not run, which is never a counterexample.

An implementation classifies its own exceptions (`Implementation.infrastructure_failure`);
the runner retries such a failure once after `recover()` and then raises
`InfrastructureError`, which the CLI reports in one line with exit code 3.

>>> str(InfrastructureError("Spark is unavailable"))
'Spark is unavailable'
"""

from __future__ import annotations


class InfrastructureError(RuntimeError):
    """The implementation could not run (Java missing, the JVM died, the server is gone)."""
