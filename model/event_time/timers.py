"""When a user's processor's event-time timer fires, in Spark's micro-batches.

Spark 4.3's `transformWithState...` in event-time mode (`TransformWithStateExec`: each batch handles its input
rows, then the timers the eviction watermark has reached; pinned against a real query by
`tests/test_spark_stateful_operators.py::test_an_event_time_timer_fires_in_the_first_batch_whose_eviction_watermark_reaches_it`):

- **A timer at `t` has expired in batch N when `t <= E(N)`**, batch N's eviction watermark: a timer exactly
  at the watermark fires, one a millisecond past it waits.
- **It fires once, in the first batch after the one that registered it whose E(N) reaches it** (a timer
  registered past its batch's watermark, as a processor registers one). Spark runs a batch without data when
  the watermark moves past a timer, so the batch that fires it may hold no record.

>>> expired(20_000, 20_000), expired(20_000, 19_999)
(True, False)
>>> fires_in(20_000, {0: 0, 1: 7_000, 2: 19_999, 3: 20_000, 4: 25_000}, registered_in=0)
3
"""

from __future__ import annotations

from collections.abc import Mapping


def expired(timer_ms: int, eviction_ms: int) -> bool:
    """Whether a timer at `timer_ms` has expired at the eviction watermark `eviction_ms` (at or past it)."""
    return timer_ms <= eviction_ms


def fires_in(timer_ms: int, eviction: Mapping[int, int], registered_in: int) -> int | None:
    """The batch a timer registered in batch `registered_in` fires in, from each batch's eviction watermark
    (`eviction`: E(N) by batch); None when no batch after its registration reaches it.

    >>> fires_in(20_000, {0: 0, 1: 20_000}, registered_in=1) is None
    True
    """
    return next(
        (b for b, mark in sorted(eviction.items()) if b > registered_in and expired(timer_ms, mark)), None
    )
