"""Dataflow expiration, after the seed `dataflow-expiration.md` and what production learned.

A replica started at `start` with `expiration_offset > 0` expires at
`start + offset` and must be restarted once wall-clock time passes it. Each
object has a *time dependence*: a bound on its upper at a wall-clock time. A
maintained dataflow (MV, index, subscribe) whose bound at the replica expiration
is `b` gets the expiration `b + 1` (one tick past the latest legitimate upper),
its `until` is met with it, and the diffs its temporal filters produce at or
after the `until` are dropped. Reads are identical to a replica without expiration.

Inputs may run ahead of or behind the wall clock (a skew, model/catalog/catalog.py
`skewed_upper`; a reclocked source runs one tick ahead). The replica renders its
dataflows when it starts and sees its inputs' uppers then (`Seen`). The seed's
branch `inputs_upper > expiration: dataflow_expiration := inputs_upper` keeps an
input that runs ahead: its upper at render, carried to the point of expiration
(inputs tick with the wall clock), bounds it when that is beyond the replica
expiration. Choice: the branch is applied per input leaf, before each kind's
step; for a plain meet of inputs that is the seed's meet-then-compare (`max` and
`+ c` commute with `min`). An input that gets further ahead after the render is
beyond what the branch handles: its dataflow's frontier reaches the expiration and
the frontier check (`check_not_expired`) refuses every read from it (the seed's
panic), so expiration never serves wrong data.

Three layers, kept apart so a solver can evaluate the first and a planted bug
can replace one rule:
1. arithmetic over `Optional[int]` (`None`: no bound, i.e. the empty frontier);
2. catalog walking (`time_dependence`, `render`), per object kind;
3. the replica (`Replica`, `serve`), reading the world from model/catalog/catalog.py.

>>> from frontier_harness.model.catalog.catalog import Catalog, Table, MaterializedView
>>> from frontier_harness.model.catalog.plan import Get
>>> c = Catalog().add(Table("t")).add(MaterializedView("m", Get("t")))
>>> render(c, "m", replica_expiration(100, 21))
Dataflow(name='m', until=122, expiration=122)
>>> render(c, "m", replica_expiration(100, 21), Seen(100, {"t": 103}))
Dataflow(name='m', until=125, expiration=125)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import reduce
from typing import Any

import attrs

from frontier_harness.model.catalog.catalog import (
    Catalog,
    Feed,
    Index,
    MaterializedView,
    RefreshAt,
    RefreshEvery,
    Source,
    Subscribe,
    Table,
    follows_wall_clock,
    next_refresh,
    output_updates,
    upper_at,
)
from frontier_harness.model.catalog.timeline_rules import is_epoch
from frontier_harness.model.errors import DataflowExpired, InvalidReplica, ReplicaExpired, ReplicaNotRunning
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import at
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary.catalog import CatalogArg, SourceKind

TIME = Total()
EXPIRING = (MaterializedView, Index, Subscribe)

# ---------------------------------------------------------------- 1. arithmetic


def replica_expiration(start: int, offset: int) -> int | None:
    """`start + offset`, fixed for the replica's life; `None` when `offset == 0` (disabled).

    >>> replica_expiration(100, 21), replica_expiration(100, 0)
    (121, None)
    """
    return None if offset == 0 else start + offset


def frontier_meet(a: int | None, b: int | None) -> int | None:
    """The meet of Total frontiers `{a}` and `{b}`, `None` being the empty frontier (the top).

    >>> frontier_meet(3, 5), frontier_meet(None, 5), frontier_meet(None, None)
    (3, 5, None)
    """
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def meet_bounds(a: int | None, b: int | None) -> int | None:
    """Combines two time dependences: `None` is *no bound*, so any bound bounds the result.

    >>> meet_bounds(None, 7), meet_bounds(4, 7)
    (7, 4)
    """
    return frontier_meet(a, b)


def meet_inputs(bounds: Iterable[int | None]) -> int | None:
    """An object's bound from its inputs' (its upper is their meet); `None` iff every input has none.

    >>> meet_inputs([None, 9, 4]), meet_inputs([None]), meet_inputs([])
    (4, None, None)
    """
    return reduce(meet_bounds, bounds, None)


def source_bound(kind: str, epoch: bool, wall: int) -> int | None:
    """A source's bound at wall-clock time `wall`: `wall` in the epoch timeline, `None` for load generators.

    Load generators may jump ahead; non-epoch timelines are not comparable to wall time.

    >>> kinds = (("kafka", True), ("load_generator", True), ("cdc", False))
    >>> [source_bound(kind, epoch, 50) for kind, epoch in kinds]
    [50, None, None]
    """
    return wall if epoch and kind != SourceKind.LOAD_GENERATOR else None


def carried_to(upper: int, render: int, expiration: int) -> int:
    """Where an input at `upper` when rendered at `render` is at `expiration`: it ticks with the clock.

    >>> carried_to(13, 10, 20)
    23
    """
    return upper + (expiration - render)


def inputs_bound(inputs_upper: int, expiration: int) -> int:
    """The seed's branch: `inputs_upper` if beyond `expiration` (the inputs run ahead), else `expiration`.

    >>> inputs_bound(23, 20), inputs_bound(18, 20)
    (23, 20)
    """
    return inputs_upper if inputs_upper > expiration else expiration


def round_up_to_refresh(schedule: tuple[RefreshEvery | RefreshAt, ...], bound: int | None) -> int | None:
    """A refresh schedule's bound: the next refresh at or after `bound`; `None` if none is left.

    An empty schedule (refresh on every change) leaves the bound unchanged.

    >>> from frontier_harness.model.catalog.catalog import RefreshAt, RefreshEvery
    >>> round_up_to_refresh((RefreshEvery(10, 0),), 11), round_up_to_refresh((RefreshAt(5),), 11)
    (20, None)
    """
    if not schedule or bound is None:
        return bound
    return next_refresh(schedule, bound)


def subscribe_bound(bound: int | None, up_to: int | None) -> int | None:
    """A subscribe's bound: its inputs' met with its `UP TO` (`None`: no `UP TO`).

    >>> subscribe_bound(50, 20), subscribe_bound(None, 20), subscribe_bound(50, None)
    (20, 20, 50)
    """
    return meet_bounds(bound, up_to)


def step_one_tick(time: int) -> int:
    """One tick past `time`: an expiration must not be a time the dataflow may legitimately reach.

    >>> step_one_tick(121)
    122
    """
    return time + 1


def dataflow_expiration(bound: int | None, until: int | None) -> int | None:
    """The bound at the replica expiration, stepped one tick; `None` if no bound or `until` is at/below it.

    >>> dataflow_expiration(121, None), dataflow_expiration(None, None), dataflow_expiration(121, 122)
    (122, None, None)
    """
    if bound is None:
        return None
    expiration = step_one_tick(bound)
    if until is not None and until <= expiration:
        return None
    return expiration


def meet_until(until: int | None, expiration: int | None) -> int | None:
    """`until.meet(expiration)` as frontiers: the earlier one, `None` (empty) being the top.

    >>> meet_until(None, 122), meet_until(300, 122), meet_until(300, None)
    (122, 122, 300)
    """
    return frontier_meet(until, expiration)


# ---------------------------------------------------------------- 2. catalog walking


@attrs.frozen
class Seen:
    """What a replica sees when it renders: the wall-clock time `at` and each wall-clock leaf's upper then.

    >>> Seen(10, {"t": 11}).uppers["t"]
    11
    """

    at: int
    uppers: Mapping[str, int] = attrs.field(factory=dict)


def seen_at(catalog: Catalog, feed: Feed, wall: int) -> Seen:
    """What a replica rendering at wall-clock time `wall` sees of the world.

    >>> seen_at(Catalog().add(Table("t")), Feed(skews={"t": ((0, 2),)}), 5)
    Seen(at=5, uppers={'t': 7})
    """
    leaves = (o for o in catalog.objects if follows_wall_clock(o))
    return Seen(wall, {o.name: next(iter(feed.leaf_upper(o, wall))) for o in leaves})


def leaf_bound(obj, wall: int, seen: Seen | None = None) -> int | None:
    """The bound at `wall` of a table (the wall time), source (`source_bound`) or constant (none).

    A table's or epoch source's upper when the replica rendered (`seen`; without it:
    at the wall clock) is carried to `wall`, and the seed's branch keeps it when it runs ahead.

    >>> from frontier_harness.model.catalog.catalog import Constant
    >>> leaf_bound(Table("t"), 9), leaf_bound(Table("t"), 9, Seen(4, {"t": 6})), leaf_bound(Constant("c"), 9)
    (9, 11, None)
    """
    if isinstance(obj, Table):
        bound: int | None = wall
    elif isinstance(obj, Source):
        bound = source_bound(obj.kind, is_epoch(obj.timeline), wall)
    else:
        return None
    upper = None if seen is None else seen.uppers.get(obj.name)
    if bound is None or upper is None or seen is None:
        return bound
    return inputs_bound(carried_to(upper, seen.at, wall), bound)


def object_bound(obj, input_bounds: list[int | None]) -> int | None:
    """A derived object's bound from its inputs' bounds, per kind (the compositional step).

    >>> from frontier_harness.model.catalog.catalog import RefreshEvery
    >>> from frontier_harness.model.catalog.plan import Get
    >>> object_bound(MaterializedView("m", Get("t"), (RefreshEvery(10, 0),)), [None, 11])
    20
    """
    met = meet_inputs(input_bounds)
    if isinstance(obj, MaterializedView):
        return round_up_to_refresh(obj.refresh, met)
    if isinstance(obj, Subscribe):
        return subscribe_bound(met, obj.up_to)
    return met


def time_dependence(catalog: Catalog, name: str, wall: int, seen: Seen | None = None) -> int | None:
    """How far `name`'s upper can be at wall-clock `wall`, having `seen` its inputs (`None`: no bound).

    >>> from frontier_harness.model.catalog.catalog import View
    >>> from frontier_harness.model.catalog.plan import Get, Union
    >>> c = Catalog().add(Table("t")).add(Source.create("g", "load_generator"))
    >>> time_dependence(c.add(View("v", Union((Get("t"), Get("g"))))), "v", 7)
    7
    """
    obj = catalog.get(name)
    if not obj.inputs:
        return leaf_bound(obj, wall, seen)
    return object_bound(obj, [time_dependence(catalog, i, wall, seen) for i in obj.inputs])


def dataflow_until(obj) -> int | None:
    """The `until` a dataflow has without expiration: a subscribe's `UP TO`, else none.

    >>> from frontier_harness.model.catalog.plan import Get
    >>> dataflow_until(Subscribe("s", Get("t"), up_to=5)), dataflow_until(Index("i", "t"))
    (5, None)
    """
    return obj.up_to if isinstance(obj, Subscribe) else None


@attrs.frozen
class Dataflow:
    """A rendered dataflow: its `until` after the meet, and its `expiration` (`None`: none).

    Invariant: `expiration` is `None` or equals `until`.

    >>> Dataflow("m", until=22, expiration=22).until
    22
    """

    name: str
    until: int | None
    expiration: int | None


def render(catalog: Catalog, name: str, replica_exp: int | None, seen: Seen | None = None) -> Dataflow:
    """`name`'s dataflow on a replica expiring at `replica_exp`, rendered having `seen` its inputs.

    Only MVs, indexes and subscribes expire. Without `seen` every input is taken to
    be at the wall clock.

    >>> from frontier_harness.model.catalog.catalog import Select
    >>> from frontier_harness.model.catalog.plan import Get
    >>> c = Catalog().add(Table("t")).add(Select("q", Get("t")))
    >>> render(c, "q", 121)
    Dataflow(name='q', until=None, expiration=None)
    """
    obj = catalog.get(name)
    until = dataflow_until(obj)
    expiration = None
    if replica_exp is not None and isinstance(obj, EXPIRING):
        expiration = dataflow_expiration(time_dependence(catalog, name, replica_exp, seen), until)
    return Dataflow(name, meet_until(until, expiration), expiration)


# ---------------------------------------------------------------- 3. the replica


def _starts(starts: Iterable[int]) -> tuple[int, ...]:
    return tuple(starts)


def _check_replica(instance, attribute, value) -> None:
    if instance.offset < 0:
        raise InvalidReplica(
            CatalogArg.OFFSET, instance.offset, "must be non-negative (0 disables expiration)"
        )
    if not instance.starts or any(b <= a for a, b in zip(instance.starts, instance.starts[1:])):
        raise InvalidReplica("starts", instance.starts, "must be non-empty and strictly increasing")


@attrs.frozen
class Replica:
    """A replica with an `expiration_offset`, (re)started at each of `starts` (wall-clock times).

    Each restart begins a new incarnation whose expiration is recomputed from its start.

    >>> Replica(10, (0,)).expiration_at(11)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.ReplicaExpired: replica started at 0 expired at 10; wall-clock time is 11
    """

    offset: int
    starts: tuple[int, ...] = attrs.field(converter=_starts, validator=_check_replica)

    def start_at(self, wall: int) -> int:
        """The start of the incarnation running at `wall` (the last start at or before it).

        >>> Replica(10, (0, 8)).start_at(8)
        8
        """
        started = [s for s in self.starts if s <= wall]
        if not started:
            raise ReplicaNotRunning(wall, self.starts[0])
        return started[-1]

    def expiration_at(self, wall: int) -> int | None:
        """The running incarnation's replica expiration; `ReplicaExpired` once `wall` passes it.

        >>> Replica(10, (0,)).expiration_at(10), Replica(0, (0,)).expiration_at(10**9)
        (10, None)
        """
        start = self.start_at(wall)
        expiration = replica_expiration(start, self.offset)
        if expiration is not None and wall > expiration:
            raise ReplicaExpired(wall, start, expiration)
        return expiration


def check_not_expired(flow: Dataflow, upper: Antichain, time: int) -> None:
    """`DataflowExpired` for a read at/after the expiration, or if the upper reached it.

    The output frontier is held at the expiration, so such reads are never served
    by this incarnation. An upper at or past the expiration while the replica
    runs means the dataflow looked finished and was shut down: nothing is served.

    >>> check_not_expired(Dataflow("m", 12, 12), Antichain.of(TIME, [12]), 3)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.DataflowExpired: dataflow 'm' expires at 12 (its upper is {12}): cannot serve a read at 3
    """
    e = flow.expiration
    if e is not None and (Antichain.of(TIME, [e]).le(upper) or time >= e):
        raise DataflowExpired(flow.name, time, e, upper)


def serve(
    catalog: Catalog, feed: Feed, replica: Replica, name: str, wall: int, time: int
) -> dict[Any, int] | None:
    """What a read of `name` at `time`, issued at wall-clock time `wall`, returns.

    The contents at `time` if `time` is complete (before the upper), `None` if not
    yet; `DataflowExpired` / `ReplicaExpired` as their rules say.

    >>> from frontier_harness.model.time.collection import Update
    >>> from frontier_harness.model.catalog.plan import Get
    >>> c = Catalog().add(Table("t")).add(Index("i", "t"))
    >>> f = Feed({"t": (Update((1,), 2, 1),)})
    >>> serve(c, f, Replica(10, (0,)), "i", 5, 2), serve(c, f, Replica(10, (0,)), "i", 5, 5)
    ({(1,): 1}, None)
    """
    replica_exp = replica.expiration_at(wall)
    flow = render(catalog, name, replica_exp, seen_at(catalog, feed, replica.start_at(wall)))
    upper = upper_at(catalog, feed, name, wall)
    check_not_expired(flow, upper, time)
    if upper.less_equal(time):
        return None
    return at(TIME, output_updates(catalog, feed, name, flow.until), time)


def served(
    catalog: Catalog, feed: Feed, replica: Replica, name: str, wall: int, time: int
) -> dict[Any, int] | None:
    """`serve`, with a `DataflowExpired` read reported as not served (`None`).

    The success criterion: equal for every read with the offset set and with 0.

    >>> from frontier_harness.model.catalog.plan import Get
    >>> c = Catalog().add(Table("t")).add(Index("i", "t"))
    >>> served(c, Feed(), Replica(10, (0,)), "i", 5, 11)
    """
    try:
        return serve(catalog, feed, replica, name, wall, time)
    except DataflowExpired:
        return None


def diffs_processed(
    catalog: Catalog, feed: Feed, name: str, replica_exp: int | None, seen: Seen | None = None
) -> int:
    """How many diffs `name`'s dataflow produces on a replica expiring at `replica_exp`, having `seen`.

    >>> from frontier_harness.model.time.collection import Update
    >>> from frontier_harness.model.catalog.plan import Get, TemporalFilter
    >>> from frontier_harness.model.catalog.temporal import MzNow
    >>> last_30 = TemporalFilter(Get("t"), (MzNow("<=", 0, 30),))
    >>> c = Catalog().add(Table("t")).add(MaterializedView("m", last_30))
    >>> f = Feed({"t": (Update((0,), 0, 1),)})
    >>> diffs_processed(c, f, "m", None), diffs_processed(c, f, "m", 21)
    (2, 1)
    """
    return len(output_updates(catalog, feed, name, render(catalog, name, replica_exp, seen).until))
