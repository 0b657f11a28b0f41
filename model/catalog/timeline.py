"""Timelines: what a timestamp *means*, after the seed `timelines.md`.

Times of different timelines are incomparable in meaning: a dataflow may read
from at most one timeline, and constants belong to none.

- `EpochMilliseconds`: timestamps near wall-clock now (tables, ordinary sources).
- `Counter(broker, topic)`: a Debezium consistency topic's transaction counter.
- `External(name)`: a CDC source, joinable only with itself.
- `User(name)`: any source created `WITH (timeline='name')`.

Which timeline a source gets, and the rule that a dataflow reads from at most
one, are in `frontier_harness.model.catalog.timeline_rules`; these are the values, shared with spark_impl.

>>> EpochMilliseconds() == EpochMilliseconds(), External("c") == User("c")
(True, False)
"""

from __future__ import annotations

import attrs


@attrs.frozen
class EpochMilliseconds:
    """Milliseconds since the Unix epoch: advances with wall-clock time.

    >>> EpochMilliseconds() == EpochMilliseconds()
    True
    """


@attrs.frozen
class Counter:
    """A Debezium consistency topic's counter, told apart by broker and topic.

    >>> Counter("b", "t1") == Counter("b", "t2")
    False
    """

    broker: str
    topic: str


@attrs.frozen
class External:
    """A CDC source's own timeline: only the source named `name` is in it.

    >>> External("orders")
    External(name='orders')
    """

    name: str


@attrs.frozen
class User:
    """A user-chosen timeline grouping every source declared `WITH (timeline='name')`.

    A user timeline and a CDC source's external timeline of the same name are different timelines:

    >>> User("x") == User("x") != External("x")
    True
    """

    name: str


Timeline = EpochMilliseconds | Counter | External | User
