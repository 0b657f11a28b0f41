"""When a user's processor's timer fires, in Spark's micro-batches: by each batch's eviction watermark E(N) in
event-time mode, by its timestamp T(N) in processing-time mode.

Spark 4.3's `transformWithState...` in event-time mode hands each batch its input rows first, then the
timers its eviction watermark has reached, and deletes each timer after its handler ran. Pinned against real
queries by `tests/test_spark_stateful_operators.py`
(`test_an_event_time_timer_fires_in_the_first_batch_whose_eviction_watermark_reaches_it`,
`test_a_timer_set_at_or_below_the_watermark_fires_in_its_own_batch_from_a_row_and_in_the_next_from_a_timer`):

- **A timer at `t` has expired in batch N when `t <= E(N)`**, batch N's eviction watermark: a timer exactly
  at the watermark fires, one a millisecond past it waits.
- **A timer set while batch N handles its rows fires once, in the first batch from N on whose E reaches it**:
  in batch N itself when it is already at or below E(N) (the timers are read after the rows). Spark runs a
  batch without data when the watermark moves past a timer, so the batch that fires it may hold no record.
- **A timer set while batch N's timers fire (`handleExpiredTimer`) waits for batch N+1**, even at or below
  E(N): the timers a batch fires are the ones registered before they began to fire. Spark plans no batch for
  it, so it stays registered, expired, until the next batch runs (new data, or the watermark moving).

A processing-time timer (`timeMode` "ProcessingTime") follows the same rules with the batch's timestamp T(N)
(`batchTimestampMs`, journaled in `offsets/N`, and handed to the processor as `getCurrentProcessingTimeInMs`)
in place of E(N), pinned by `tests/test_spark_processing_time.py`
(`test_a_processing_time_timer_at_the_batch_timestamp_fires_in_its_batch_one_a_millisecond_later_after_it`,
`test_a_batch_run_again_after_a_crash_runs_at_the_batch_timestamp_it_journaled`):

- **A timer at `t` has expired in batch N when `t <= T(N)`**: one a handler sets at T(N) itself fires in batch
  N, one a millisecond later in the first later batch whose T reaches it. Spark runs a batch on every
  trigger for a processing-time processor, data or none, so that batch may hold no record (and such a
  query never has nothing left to do: `processAllAvailable` does not return, nor does an `availableNow`
  start end; a `trigger(once=True)` start runs one batch and ends, none when nothing is new).
- **A batch Spark runs again after a crash runs at the T(N) it journaled**, not at the clock of the restart:
  the timers that fired in its first run fire in the re-run, and no other.

A group's event-time timeout (`applyInPandasWithState`, `(flat)MapGroupsWithState`:
`FlatMapGroupsWithStateExec`) follows other rules, pinned by
`test_a_group_state_timeout_fires_only_once_the_eviction_watermark_is_past_it`:

- **A group's timeout at `t` times out in batch N when `t < E(N)`**: the watermark must be past it, so a timeout
  exactly at E waits (Spark's `timeoutTimestamp < watermark`).
- **Spark clears a group's timeout whenever it calls the function**, and a function may set it no earlier
  than the watermark it is handed (`INVALID_TIMEOUT_TIMESTAMP`), E(N): a timeout set in batch N times out in
  the first batch after N whose E is past it, unless a call for the group's data sets it again first. A
  group called with data in a batch is never timed out in it.

A group's processing-time timeout (`GroupStateTimeout.ProcessingTimeTimeout`, set by `setTimeoutDuration(d)`
at T(N) + d, d at least a millisecond) follows the same rules with T(N) in place of E(N), pinned by
`tests/test_spark_processing_time.py`
(`test_a_groups_processing_time_timeout_times_out_in_the_first_batch_whose_timestamp_is_past_it`): it times out
in the first later batch whose T is past it, strictly. Spark runs a batch on every trigger for such a query, as
for a processing-time processor, and a `trigger(once=True)` start with nothing new runs none.

>>> expired(20_000, 20_000), expired(20_000, 19_999)
(True, False)
>>> fires_in(20_000, {0: 0, 1: 7_000, 2: 19_999, 3: 20_000, 4: 25_000}, registered_in=0)
3
>>> fires_in(20_000, {0: 0, 1: 25_000, 2: 25_000}, registered_in=2), fires_in(21_000, {2: 25_000, 3: 25_000}, registered_in=2, by_timer=True)
(2, 3)
>>> times_out_in(20_000, {0: 0, 1: 20_000, 2: 20_001}, set_in=0)
2

A group's processing-time timeout set in batch 0 at T(0) + 1 ms = 1001 ms, by each batch's T:

>>> times_out_in(1_001, {0: 1_000, 1: 1_001, 2: 1_002}, set_in=0)
2

A processing-time timer set in batch 0 a millisecond after T(0) = 1000 ms, by each batch's T:

>>> fires_in(1_001, {0: 1_000, 1: 1_000, 2: 1_101}, registered_in=0)
2
"""

from __future__ import annotations

from collections.abc import Mapping


def expired(timer_ms: int, clock_ms: int) -> bool:
    """Whether a timer at `timer_ms` has expired at a batch's clock `clock_ms` (E(N) or T(N): at or past it)."""
    return timer_ms <= clock_ms


def fires_in(
    timer_ms: int, clock: Mapping[int, int], registered_in: int, by_timer: bool = False
) -> int | None:
    """The batch a timer set in batch `registered_in` fires in, from each batch's clock (`clock` by batch:
    E(N) for an event-time timer, T(N) for a processing-time one): the first from `registered_in` on (after
    it, when the timer was set `by_timer`, while that batch's timers fired) whose clock reaches it; None when
    none does.

    >>> fires_in(20_000, {0: 0, 1: 20_000}, registered_in=0, by_timer=True), fires_in(20_000, {0: 0}, registered_in=0)
    (1, None)
    """
    first = registered_in + 1 if by_timer else registered_in
    return next((b for b, now in sorted(clock.items()) if b >= first and expired(timer_ms, now)), None)


def timed_out(timeout_ms: int, eviction_ms: int) -> bool:
    """Whether a group's timeout at `timeout_ms` has timed out at a batch's clock `eviction_ms` (its eviction
    watermark E(N) for an event-time timeout, its timestamp T(N) for a processing-time one): past it, strictly.

    >>> timed_out(20_000, 20_000), timed_out(20_000, 20_001)
    (False, True)
    """
    return timeout_ms < eviction_ms


def times_out_in(timeout_ms: int, eviction: Mapping[int, int], set_in: int) -> int | None:
    """The batch a group's timeout set in batch `set_in` (and not set again) times out in: the first after
    `set_in` whose clock (`eviction`, by batch: E, or T for a processing-time timeout) is past it; None when
    none is.

    >>> times_out_in(20_000, {0: 25_000, 1: 25_000}, set_in=0), times_out_in(20_000, {3: 20_000}, set_in=2)
    (1, None)
    """
    return next(
        (b for b, mark in sorted(eviction.items()) if b > set_in and timed_out(timeout_ms, mark)), None
    )
