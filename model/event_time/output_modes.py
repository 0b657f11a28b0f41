"""Which output modes Spark 4.3 runs each stateful shape in, and what each mode emits.

Spark's `UnsupportedOperationChecker` decides when the query starts; pinned by
`tests/test_spark_stateful_operators.py::test_the_output_modes_spark_runs_each_shape_in` (and, for one
aggregation or deduplication, by the stateful suite's own jobs):

- **Append** emits a row once, when it is final: an aggregation's window or a session when E reaches its end,
  a deduplication's first row at once, a join's pair when its later row comes and an outer row when its
  side's state drops it.
- **Update** emits, each batch, every group the batch changed (an aggregation), or the same rows as append
  (a deduplication; an inner join, which Spark runs in update mode although its guide says joins run in
  append mode only).
- Refused: update mode for a session window, an outer join, or an aggregation after an aggregation (the
  check for rows an operator may emit late for the next one: "possible 'correctness' issue due to global
  watermark"); an aggregation after a deduplication runs in update mode too, although the guide says no chain
  does. Complete mode is outside the model (the stateful suite refuses it).

>>> sorted(modes(Shape.INNER_JOIN)), sorted(modes(Shape.SESSION_WINDOW))
(['append', 'update'], ['append'])
"""

from __future__ import annotations

import enum

from frontier_harness.model.vocabulary.event_time import OutputMode


class Shape(enum.StrEnum):
    """A stateful shape whose output modes the model states."""

    AGGREGATION = "aggregation"
    DEDUPLICATION = "deduplication"
    SESSION_WINDOW = "session window"
    INNER_JOIN = "inner join"
    OUTER_JOIN = "outer join"
    AGGREGATION_AFTER_AGGREGATION = "aggregation after aggregation"
    AGGREGATION_AFTER_DEDUPLICATION = "aggregation after deduplication"


_BOTH = frozenset({OutputMode.APPEND, OutputMode.UPDATE})
_APPEND = frozenset({OutputMode.APPEND})
_MODES = {
    Shape.AGGREGATION: _BOTH,
    Shape.DEDUPLICATION: _BOTH,
    Shape.SESSION_WINDOW: _APPEND,
    Shape.INNER_JOIN: _BOTH,
    Shape.OUTER_JOIN: _APPEND,
    Shape.AGGREGATION_AFTER_AGGREGATION: _APPEND,
    Shape.AGGREGATION_AFTER_DEDUPLICATION: _BOTH,
}


def modes(shape: Shape) -> frozenset[OutputMode]:
    """The output modes Spark runs `shape` in (complete left out)."""
    return _MODES[shape]
