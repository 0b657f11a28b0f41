"""Reclocking: a source collection in FromTime, read through a remap, as a collection in IntoTime.

A source update `(data, s, diff)` is assigned to the first IntoTime `t` of the
remap at which `s` is not beyond `R(t)` (`reclockable_at`), and appears in the
reclocked collection as `Update(data, t, diff)`. `R` is monotone, so once an
update is reclockable it stays so: every update maps to exactly one IntoTime.
Updates beyond the latest binding are not reclockable yet: they are reported as
`pending`, never dropped. Only times the remap can read (`since` on) are
candidates, so reclocking a compacted remap equals advancing the reclocked
output by the same `since`.

The one rule, `reclockable_at`, is a module-level function the others look up at
call time, so a test may replace it.

>>> from frontier_harness.model.time.domains import Total
>>> from frontier_harness.model.reclocking.remap import Remap
>>> r = Remap.minted(Total(), [(Antichain.of(Total(), [3]), 10), (Antichain.of(Total(), [6]), 20)])
>>> reclock(r, [Update("a", 1, 1), Update("b", 4, 1), Update("c", 8, 1)])
Reclocked(updates=(Update(data='a', time=10, diff=1), Update(data='b', time=20, diff=1)), pending=(Update(data='c', time=8, diff=1),))
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from frontier_harness.model.reclocking.remap import INTO, Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update, consolidate
from frontier_harness.model.time.domains import Time


def reclockable_at(frontier: Antichain, time: Time) -> bool:
    """The assignment rule: `time` is complete at `frontier` (not beyond it: no element `<= time`).

    >>> from frontier_harness.model.time.domains import Total
    >>> reclockable_at(Antichain.of(Total(), [3]), 2), reclockable_at(Antichain.of(Total(), [3]), 3)
    (True, False)
    """
    return not frontier.less_equal(time)


def first_step(steps: list[tuple[int, Antichain]], time: Time) -> int | None:
    """The first IntoTime of `steps` (`Remap.steps()`) whose frontier `time` is reclockable at; None if none.

    >>> from frontier_harness.model.time.domains import Total
    >>> first_step([(0, Antichain.of(Total(), [0])), (5, Antichain.of(Total(), [4]))], 3)
    5
    """
    return next((t for t, frontier in steps if reclockable_at(frontier, time)), None)


def assign(remap: Remap, time: Time) -> int | None:
    """The IntoTime a source update at `time` is reclocked to; None while it is pending.

    >>> from frontier_harness.model.time.domains import Total
    >>> r = Remap.minted(Total(), [(Antichain.of(Total(), [3]), 10)])
    >>> assign(r, 2), assign(r, 3)
    (10, None)
    """
    return first_step(remap.steps(), remap.domain.validate(time))


@attrs.frozen
class Reclocked:
    """The reclocked collection (IntoTime updates) and the pending source updates, both consolidated.

    >>> Reclocked((Update("a", 4, 1),), ())
    Reclocked(updates=(Update(data='a', time=4, diff=1),), pending=())
    """

    updates: tuple[Update, ...]
    pending: tuple[Update, ...]


def reclock(remap: Remap, source: Iterable[Update]) -> Reclocked:
    """Assigns every source update to its first reclockable IntoTime; the rest stay pending.

    Invariant: for every readable `t`, the reclocked contents at `t` are the source
    updates not beyond `R(t)`; `updates` plus `pending` account for every source diff.

    >>> from frontier_harness.model.time.domains import Total
    >>> reclock(Remap.initial(Total()), [Update("a", 0, 1)]).pending
    (Update(data='a', time=0, diff=1),)
    """
    steps = remap.steps()
    assigned, pending = [], []
    for u in source:
        t = first_step(steps, remap.domain.validate(u.time))
        if t is None:
            pending.append(u)
        else:
            assigned.append(Update(u.data, t, u.diff))
    return Reclocked(tuple(consolidate(INTO, assigned)), tuple(consolidate(remap.domain, pending)))
