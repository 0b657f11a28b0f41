"""A probe run once unmutated: how long it took, which lines it reached, and whether it can judge mutants.

The engine records one per probe before judging any mutant; a run reports them
with its results (`frontier_harness.properties.mutate.results.MutationRun.baseline`).
"""

from __future__ import annotations

import attrs

from frontier_harness.properties.mutate.probe import Probe
from frontier_harness.properties.mutate.reach import Reached


@attrs.frozen
class Baseline:
    """A probe run unmutated: seconds, lines reached, and why it cannot judge mutants (if it failed)."""

    probe: Probe
    seconds: float
    reached: Reached
    failure: str = ""
