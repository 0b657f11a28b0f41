"""The TTL store's clock: user-supplied milliseconds, wrapped so readings never go back.

The user supplies any zero-argument callable returning milliseconds. The store
reads it only through `MonotonicClock`, which raises `ClockRegression` (naming
both readings) on a reading below the previous one and never hands it out.
Equal readings are fine. On reopen the floor is seeded from persisted
timestamps (`seed_floor`); which timestamps count is the store's rule
(`frontier_harness.model.ttl.store.seed_sources`: the manifest, every replayed WAL segment and the
clock's durable high-water mark).

>>> source = ManualClock(5)
>>> clock = MonotonicClock(source, floor=seed_floor([3, 7]))
>>> clock.now()
Traceback (most recent call last):
...
frontier_harness.model.errors.ClockRegression: clock went back: reading 5 is below the previous reading 7
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from frontier_harness.model.errors import ClockRegression
from frontier_harness.model.ttl.row import check_reading

Clock = Callable[[], int]


def advance_floor(floor: int | None, reading: object) -> int:
    """The new floor after `reading`: the reading itself, if it is not below `floor`.

    `floor is None` means nothing was read or persisted yet.

    >>> advance_floor(10, 10), advance_floor(None, -4)
    (10, -4)
    """
    reading = check_reading(reading)
    if floor is not None and reading < floor:
        raise ClockRegression(floor, reading)
    return reading


def seed_floor(timestamps: Iterable[int]) -> int | None:
    """The floor a reopened store starts from: the largest persisted timestamp, None if none.

    >>> seed_floor([4, 9, 2]), seed_floor([])
    (9, None)
    """
    return max(timestamps, default=None)


@attrs.define
class MonotonicClock:
    """Wraps a user clock; `now()` returns readings that never decrease.

    Mutable on purpose: it remembers the last reading it handed out (`floor`).

    >>> c = MonotonicClock(ManualClock(3)); c.now(), c.floor
    (3, 3)
    """

    source: Clock
    floor: int | None = None

    def now(self) -> int:
        """Reads the user clock; `ClockRegression` if it is below the floor (floor unchanged).

        >>> src = ManualClock(8); c = MonotonicClock(src, floor=8); c.now()
        8
        """
        self.floor = advance_floor(self.floor, self.source())
        return self.floor


@attrs.define
class ManualClock:
    """A user clock driven by hand (tests, suites' `tick` action); it may be set backwards.

    >>> c = ManualClock(1); c.set(4); c()
    4
    """

    ms: int

    def __call__(self) -> int:
        """The current setting, in milliseconds.

        >>> ManualClock(2)()
        2
        """
        return self.ms

    def set(self, ms: int) -> None:
        """Moves the clock to `ms` (no check: the wrapper is what enforces monotonicity).

        >>> c = ManualClock(9); c.set(1); c.ms
        1
        """
        self.ms = ms
