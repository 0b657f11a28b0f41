"""Stateful operators as a DAG: each operator's input watermark is the meet of its children's output watermarks.

Since Spark 3.4 (SPARK-40925, `spark.sql.streaming.statefulOperator.allowMultiple`, on by default) a query
may chain stateful operators, and each has its own watermarks, computed from the query's watermark E(N) of
`offsets/N` by `PropagateWatermarkSimulator` (`WatermarkPropagator.scala`), pinned against real queries by
`tests/test_spark_stateful_operators.py`:

- Walking the plan from its leaves, a node's *input* watermark is the least of its children's *output*
  watermarks, children without one left out (none: the node has none).
- A `withWatermark` node outputs the query's watermark, not what it saw itself (a `withWatermark` below
  another is refused). A stateless node (select, filter, union) passes its input on. A stateful node
  outputs `produceOutputWatermark(input)`: its input for an aggregation, a deduplication, a session window
  and `transformWithState` in event time; `min(its sides' state watermarks, input)` for a stream-stream join
  (`join.py`); nothing for (flat)MapGroupsWithState and `transformWithState` in processing time.
- An operator evicts state and emits in append mode with its input watermark of this batch, `E_op(N)`, and
  drops late rows with the one of the batch before, `L_op(N) = E_op(N-1)` (`getInputWatermarkForLateEvents`
  asks for batch N-1). A rule over one operator's `Watermarks` (`aggregate`, `deduplicate`, `join`,
  `sessionize`) holds per operator with that operator's own.
- A query watermark of 0 propagates nothing: every operator's watermark is 0; a negative one (a join's
  range below 0) reads as 0. Each batch propagates `offsets/N-1`'s watermark and `offsets/N`'s afresh
  (`IncrementalExecution.simulateWatermarkPropagation`), after a restart too: the operators' watermarks are a
  function of the query's.
- A batch without data runs only when some operator would evict under the moved watermark
  (`shouldRunAnotherBatch`): a join whose sides have no state watermark never asks for one (pinned by
  `test_a_join_with_a_watermark_on_one_side_only_never_evicts_either_side`); the model reads such batches
  from the offset log.

So an aggregation after a join evicts by the join's state watermarks, later than the query's watermark;
operators after an aggregation or a deduplication see the query's watermark, and what an operator emits in
batch N is not late for the next one (`L_op(N)` is the batch before's).

>>> from frontier_harness.model.event_time.join import JoinType, StreamJoin, TimeRange
>>> left, right = Node("wl", Passing.WATERMARK, (Node("l", Passing.SOURCE),)), Node("wr", Passing.WATERMARK, (Node("r", Passing.SOURCE),))
>>> joined = Node("join", Passing.JOIN, (left, right), StreamJoin(JoinType.INNER, TimeRange(0, 10_000)))
>>> counts = Node("count", Passing.STATEFUL, (Node("select", Passing.STATELESS, (joined,)),))
>>> input_watermarks(counts, 20_000)
{'join': 20000, 'count': 9999}
"""

from __future__ import annotations

import enum
from collections.abc import Iterator

import attrs

from frontier_harness.model.errors import InvalidOperatorDag
from frontier_harness.model.event_time.join import StreamJoin
from frontier_harness.model.event_time.stateful import Watermarks


class Passing(enum.StrEnum):
    """How a node of a query's plan passes the watermark on."""

    SOURCE = "source"  # a stream without withWatermark: no watermark
    WATERMARK = "watermark"  # withWatermark: the query's watermark
    STATELESS = "stateless"  # select, filter, union: the meet of its children's
    STATEFUL = "stateful"  # aggregation, deduplication, session window, transformWithState in event time
    JOIN = "join"  # stream-stream join: min(its sides' state watermarks, its input)
    OPAQUE = "opaque"  # (flat)MapGroupsWithState, transformWithState in processing time: none

    @property
    def stateful(self) -> bool:
        """Whether nodes of this kind keep state (and so have watermarks of their own)."""
        return self in (Passing.STATEFUL, Passing.JOIN, Passing.OPAQUE)


_ARITY = {Passing.SOURCE: (0, 0), Passing.JOIN: (2, 2), Passing.STATELESS: (1, None)}


@attrs.frozen
class Node:
    """A node of a query's plan: its name (unique in the DAG), how it passes the watermark on, its children
    (a join's are its left and right inputs) and, for a join, the join.

    >>> Node("j", Passing.JOIN, (Node("l", Passing.SOURCE),))
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidOperatorDag: invalid operator DAG at 'j': a join node has 2 children and a StreamJoin, not 1 and None
    """

    name: str
    passing: Passing
    children: tuple[Node, ...] = ()
    join: StreamJoin | None = None

    def __attrs_post_init__(self) -> None:
        least, most = _ARITY.get(self.passing, (1, 1))
        count = len(self.children)
        if count < least or (most is not None and count > most) or (self.join is None) == self.is_join:
            raise InvalidOperatorDag(
                self.name,
                f"a {self.passing} node has {_arity(least, most)} children"
                + (" and a StreamJoin" if self.is_join else " and no join")
                + f", not {count} and {self.join}",
            )

    @property
    def is_join(self) -> bool:
        return self.passing is Passing.JOIN

    def nodes(self) -> Iterator[Node]:
        """Every node below and including this one, children first."""
        for child in self.children:
            yield from child.nodes()
        yield self


def _arity(least: int, most: int | None) -> str:
    if most is None:
        return f"at least {least}"
    return str(least) if least == most else f"{least} to {most}"


def input_watermarks(root: Node, origin: int) -> dict[str, int]:
    """Each stateful node's input watermark in a batch whose query watermark (`offsets/N`) is `origin`.

    >>> chain = Node("second", Passing.STATEFUL, (Node("first", Passing.STATEFUL, (Node("w", Passing.WATERMARK, (Node("s", Passing.SOURCE),)),)),))
    >>> input_watermarks(chain, 15_000), input_watermarks(chain, 0)
    ({'first': 15000, 'second': 15000}, {'first': 0, 'second': 0})
    """
    names = [node.name for node in root.nodes()]
    if len(set(names)) < len(names):
        raise InvalidOperatorDag(root.name, f"node names repeat: {names}")
    inputs: dict[str, int] = {}
    if origin != 0:
        _output(root, origin, inputs)
    return {node.name: max(inputs.get(node.name, 0), 0) for node in root.nodes() if node.passing.stateful}


def _output(node: Node, origin: int, inputs: dict[str, int]) -> int | None:
    """`node`'s output watermark; records each stateful node's input watermark in `inputs` on the way."""
    seen = [w for w in (_output(child, origin, inputs) for child in node.children) if w is not None]
    below = min(seen) if seen else None
    if node.passing is Passing.WATERMARK:
        if below is not None:
            raise InvalidOperatorDag(node.name, "a watermark is defined again over one already defined")
        return origin
    if node.passing.stateful and below is not None:
        inputs[node.name] = below
    if below is None or node.passing is Passing.OPAQUE:
        return None
    if node.join is not None:
        return node.join.output_watermark(below)
    return below


def per_operator(root: Node, marks: Watermarks) -> dict[str, Watermarks]:
    """Each stateful node's own watermarks from the query's: `E_op(N)` is its input watermark under E(N), and
    `Watermarks.late` gives `L_op(N) = E_op(N-1)`.

    >>> two = Node("w", Passing.WATERMARK, (Node("s", Passing.SOURCE),))
    >>> per_operator(Node("count", Passing.STATEFUL, (two,)), Watermarks((0, 7), 9))
    {'count': Watermarks(eviction=(0, 7), next=9)}
    """
    each = [input_watermarks(root, e) for e in marks.eviction]
    after = input_watermarks(root, marks.next)
    return {name: Watermarks(tuple(e[name] for e in each), after[name]) for name in after}
