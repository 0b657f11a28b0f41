"""The catalog: objects, their dependencies and timelines, and what the world does with them.

Objects: sources (a kind and a timeline), tables, constants, views, materialized
views (optional refresh schedule), indexes, subscribes (optional `UP TO`) and
one-shot selects. Adding a view, MV, index, subscribe or select whose transitive
inputs span several timelines raises `TimelineError` before anything runs.

The second half is the *world*: given a `Feed` (what was written to tables and
sources, how far ahead of or behind the wall clock each table and epoch source
runs, and how far the other sources got), `upper_at` says how far each object is
complete at a wall-clock time and `output_updates` what it contains.
Expiration (model/catalog/expiration.py) bounds these uppers; it never computes them.

>>> from frontier_harness.model.catalog.plan import Get
>>> c = Catalog().add(Table("t")).add(Source.create("c", "cdc"))
>>> c.add(View("v", Get("t"))).timeline_of("v")
EpochMilliseconds()
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from frontier_harness.model.catalog.plan import evaluate, plan_inputs
from frontier_harness.model.catalog.timeline import EpochMilliseconds, Timeline
from frontier_harness.model.catalog.timeline_rules import (
    SOURCE_KINDS,
    is_epoch,
    single_timeline,
    source_timeline,
)
from frontier_harness.model.errors import (
    DuplicateObject,
    InvalidDependency,
    InvalidRefresh,
    InvalidSkew,
    InvalidSourceOption,
    UnknownObject,
    UpperRegression,
)
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary.catalog import CatalogArg, SourceKind

TIME = Total()


# ---------------------------------------------------------------- refresh schedules


def _positive(instance, attribute, value) -> None:
    if value <= 0:
        raise InvalidRefresh(instance, f"{attribute.name} must be positive")


def _non_negative(instance, attribute, value) -> None:
    if value < 0:
        raise InvalidRefresh(instance, f"{attribute.name} must be non-negative")


@attrs.frozen
class RefreshEvery:
    """`REFRESH EVERY interval ALIGNED TO aligned_to`: refreshes at `aligned_to + k*interval`, any integer k.

    Choice (as Materialize's `RefreshEvery::round_up_timestamp`): the schedule
    extends before `aligned_to` too.

    >>> RefreshEvery(10, 3).round_up(3), RefreshEvery(10, 3).round_up(4), RefreshEvery(10, 23).round_up(0)
    (3, 13, 3)
    """

    interval: int = attrs.field(validator=_positive)
    aligned_to: int = attrs.field(validator=_non_negative)

    def round_up(self, time: int) -> int:
        """The first refresh at or after `time`."""
        return time + (self.aligned_to - time) % self.interval


@attrs.frozen
class RefreshAt:
    """`REFRESH AT at`: one refresh at `at`.

    >>> RefreshAt(5).round_up(5), RefreshAt(5).round_up(6)
    (5, None)
    """

    at: int = attrs.field(validator=_non_negative)

    def round_up(self, time: int) -> int | None:
        """`at` if it is at or after `time`, else `None` (no refresh left)."""
        return self.at if self.at >= time else None


def next_refresh(schedule: tuple[RefreshEvery | RefreshAt, ...], time: int) -> int | None:
    """The first refresh of any clause at or after `time`; `None` when no clause has one left.

    >>> next_refresh((RefreshAt(5), RefreshEvery(100, 0)), 6), next_refresh((RefreshAt(5),), 6)
    (100, None)
    """
    times = [t for t in (clause.round_up(time) for clause in schedule) if t is not None]
    return min(times, default=None)


# ---------------------------------------------------------------- objects


def _rows(rows: Iterable[tuple[int, ...]]) -> tuple[tuple[int, ...], ...]:
    return tuple(rows)


def _clauses(clauses: Iterable[RefreshEvery | RefreshAt]) -> tuple[RefreshEvery | RefreshAt, ...]:
    return tuple(clauses)


def _known_kind(instance, attribute, kind) -> None:
    if kind not in SOURCE_KINDS:
        raise InvalidSourceOption(kind, CatalogArg.KIND, f"expected one of {', '.join(SOURCE_KINDS)}")


@attrs.frozen
class Source:
    """An ingested source of `kind` (kafka, postgres, cdc, load_generator) in `timeline`.

    >>> Source("s", "kafka", EpochMilliseconds()).inputs
    ()
    """

    name: str
    kind: str = attrs.field(validator=_known_kind)
    timeline: Timeline
    inputs = ()

    @classmethod
    def create(cls, name: str, kind: str, **options) -> Source:
        """A source whose timeline follows from its kind and `WITH` options (`source_timeline`).

        >>> Source.create("k", "kafka", timeline="shared").timeline
        User(name='shared')
        """
        return cls(name, kind, source_timeline(kind, name, **options))


@attrs.frozen
class Table:
    """A table: written by users at wall-clock times, in the EpochMilliseconds timeline.

    >>> Catalog().add(Table("t")).timeline_of("t")
    EpochMilliseconds()
    """

    name: str
    inputs = ()


@attrs.frozen
class Constant:
    """A constant collection: `rows` (each with diff 1) at time 0, closed forever; no timeline.

    >>> output_updates(Catalog().add(Constant("k", [(1,)])), Feed(), "k")
    [Update(data=(1,), time=0, diff=1)]
    """

    name: str
    rows: tuple[tuple[int, ...], ...] = attrs.field(converter=_rows, default=())
    inputs = ()


@attrs.frozen
class View:
    """A named plan, inlined into every dataflow that reads it; `inputs` are the plan's.

    >>> from frontier_harness.model.catalog.plan import Get, Union
    >>> View("v", Union((Get("b"), Get("a")))).inputs
    ('a', 'b')
    """

    name: str
    plan: object

    @property
    def inputs(self) -> tuple[str, ...]:
        return plan_inputs(self.plan)


@attrs.frozen
class MaterializedView:
    """A plan maintained by its own dataflow; `refresh` clauses (empty: refresh on every change).

    >>> from frontier_harness.model.catalog.plan import Get
    >>> MaterializedView("m", Get("t"), [RefreshAt(5)]).refresh
    (RefreshAt(at=5),)
    """

    name: str
    plan: object
    refresh: tuple[RefreshEvery | RefreshAt, ...] = attrs.field(converter=_clauses, default=())

    @property
    def inputs(self) -> tuple[str, ...]:
        return plan_inputs(self.plan)


@attrs.frozen
class Index:
    """An index (a maintained dataflow) on one readable object.

    >>> Index("i", "t").inputs
    ('t',)
    """

    name: str
    on: str

    @property
    def inputs(self) -> tuple[str, ...]:
        return (self.on,)


@attrs.frozen
class Subscribe:
    """A subscribe to a plan, stopping at `up_to` (its `until`) when given.

    >>> from frontier_harness.model.catalog.plan import Get
    >>> upper_at(Catalog().add(Table("t")).add(Subscribe("s", Get("t"), up_to=4)), Feed(), "s", 9)
    {4}
    """

    name: str
    plan: object
    up_to: int | None = None

    @property
    def inputs(self) -> tuple[str, ...]:
        return plan_inputs(self.plan)


@attrs.frozen
class Select:
    """A one-shot select: reads a single time, never expires.

    >>> from frontier_harness.model.catalog.plan import Get
    >>> Select("q", Get("t")).inputs
    ('t',)
    """

    name: str
    plan: object

    @property
    def inputs(self) -> tuple[str, ...]:
        return plan_inputs(self.plan)


CatalogObject = Source | Table | Constant | View | MaterializedView | Index | Subscribe | Select
READABLE = (Source, Table, Constant, View, MaterializedView)
DATAFLOWS = (View, MaterializedView, Index, Subscribe, Select)


def object_timeline(obj) -> Timeline | None:
    """The timeline an object brings by itself: sources theirs, tables epoch, others none.

    >>> object_timeline(Table("t")), object_timeline(Constant("c"))
    (EpochMilliseconds(), None)
    """
    if isinstance(obj, Source):
        return obj.timeline
    return EpochMilliseconds() if isinstance(obj, Table) else None


@attrs.frozen
class Catalog:
    """Objects in creation order; every dependency exists and was created before its reader (so acyclic).

    >>> [o.name for o in Catalog().add(Table("t")).add(Index("i", "t")).objects]
    ['t', 'i']
    """

    objects: tuple[CatalogObject, ...] = ()

    def get(self, name: str) -> CatalogObject:
        """The object called `name`; a typed error naming the known names if absent.

        >>> Catalog().add(Table("t")).get("x")
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.UnknownObject: unknown catalog object 'x'; known: ['t']
        """
        for obj in self.objects:
            if obj.name == name:
                return obj
        raise UnknownObject(name, [o.name for o in self.objects])

    def add(self, obj: CatalogObject) -> Catalog:
        """The catalog with `obj` added, after checking its name, inputs and timeline.

        >>> from frontier_harness.model.catalog.plan import Get, Join
        >>> c = Catalog().add(Table("t")).add(Source.create("s", "kafka", consistency_topic=("b", "x")))
        >>> c.add(View("v", Join(Get("t"), Get("s"), ())))
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.TimelineError: multiple timelines within one dataflow are not supported: 'v' depends on 's' (Counter(broker='b', topic='x')), 't' (EpochMilliseconds())
        """
        if obj.name in {o.name for o in self.objects}:
            raise DuplicateObject(obj.name)
        for name in obj.inputs:
            dependency = self.get(name)
            if not isinstance(dependency, READABLE):
                raise InvalidDependency(obj.name, name, type(dependency).__name__)
        if isinstance(obj, DATAFLOWS):
            single_timeline(obj.name, self._input_timelines(obj.inputs))
        return Catalog(self.objects + (obj,))

    def transitive_inputs(self, name: str) -> tuple[str, ...]:
        """Every object `name` reads, directly or not (sorted, `name` excluded).

        >>> from frontier_harness.model.catalog.plan import Get
        >>> Catalog().add(Table("t")).add(View("v", Get("t"))).add(Index("i", "v")).transitive_inputs("i")
        ('t', 'v')
        """
        return tuple(sorted(self._closure(self.get(name).inputs)))

    def timeline_of(self, name: str) -> Timeline | None:
        """The object's timeline: its own, or its inputs' single one; `None` when only constants feed it.

        >>> Catalog().add(Constant("k")).add(Index("i", "k")).timeline_of("i") is None
        True
        """
        obj = self.get(name)
        own = object_timeline(obj)
        return own if own is not None else single_timeline(name, self._input_timelines(obj.inputs))

    def _closure(self, names) -> set[str]:
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.get(name).inputs)
        return seen

    def _input_timelines(self, names) -> dict[str, Timeline | None]:
        return {n: object_timeline(self.get(n)) for n in sorted(self._closure(names))}


# ---------------------------------------------------------------- the world


def _check_ticks(instance, attribute, ticks) -> None:
    for name, points in ticks.items():
        for (w1, u1), (w2, u2) in zip(points, points[1:]):
            if w2 < w1 or u2 < u1:
                raise UpperRegression((name, w1, u1), (name, w2, u2))


def _check_skews(instance, attribute, skews) -> None:
    for name, points in skews.items():
        walls = [wall for wall, _ in points]
        if any(w < 0 for w in walls) or any(b <= a for a, b in zip(walls, walls[1:])):
            raise InvalidSkew(name, points, "wall-clock times must be non-negative and increasing")


@attrs.frozen
class Feed:
    """What the outside world did: `updates` per table/source, `skews` and `ticks` per leaf.

    Tables and epoch sources other than load generators follow the wall clock at
    their skew (`skewed_upper`): `skews[name]` is `((wall, by), ...)`, from
    wall-clock time `wall` on the leaf runs `by` ahead (negative: behind); without
    one it sits at the wall-clock time. Every other source's upper is the last
    `(wall, upper)` tick at or before the wall time, 0 before its first. Ticks must
    not go back in wall time or upper (`UpperRegression` names both).

    >>> Feed(ticks={"g": ((0, 5), (1, 3))})
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.UpperRegression: upper may not go back: ('g', 1, 3) is not >= current ('g', 0, 5)
    """

    updates: Mapping[str, tuple] = attrs.field(factory=dict)
    ticks: Mapping[str, tuple] = attrs.field(factory=dict, validator=_check_ticks)
    skews: Mapping[str, tuple] = attrs.field(factory=dict, validator=_check_skews)

    def leaf_upper(self, obj, wall: int) -> Antichain:
        """The upper of a table, source or constant at wall-clock time `wall`.

        >>> Feed(ticks={"g": ((0, 5), (3, 9))}).leaf_upper(Source.create("g", "load_generator"), 2)
        {5}
        >>> Feed(skews={"t": ((0, 1),)}).leaf_upper(Table("t"), 2)
        {3}
        """
        if isinstance(obj, Constant):
            return Antichain.of(TIME, [])
        if follows_wall_clock(obj):
            return Antichain.of(TIME, [skewed_upper(self.skews.get(obj.name, ()), wall)])
        reached = [u for w, u in self.ticks.get(obj.name, ()) if w <= wall]
        return Antichain.of(TIME, [reached[-1] if reached else TIME.minimum])


def skewed_upper(points: tuple[tuple[int, int], ...], wall: int) -> int:
    """A wall-clock leaf's upper at `wall`: the furthest `w + skew(w)` of any `w <= wall`, at least 0.

    `skew(w)` is the `by` of the last point `(at, by)` with `at <= w` (0 before the first).
    Choice: a leaf never goes back, so when its skew drops it waits for the clock to
    catch up. A source minted at tick `w` has upper `w + 1` (model/reclocking/remap.py): skew 1.

    >>> skewed_upper((), 7), skewed_upper(((0, 1),), 7), skewed_upper(((0, -3),), 2)
    (7, 8, 0)
    >>> skewed_upper(((0, 4), (5, 0)), 6), skewed_upper(((0, 0), (5, 2)), 6)
    (8, 8)
    """
    segments = ([] if points and points[0][0] == 0 else [(0, 0)]) + list(points)
    furthest = 0
    for i, (at, by) in enumerate(segments):
        if at > wall:
            break
        last = wall if i + 1 == len(segments) else min(wall, segments[i + 1][0] - 1)
        furthest = max(furthest, last + by)
    return furthest


def follows_wall_clock(obj) -> bool:
    """Whether a leaf follows the wall clock (at its skew): tables, and epoch sources but load generators.

    >>> follows_wall_clock(Table("t")), follows_wall_clock(Source.create("g", "load_generator"))
    (True, False)
    """
    if isinstance(obj, Table):
        return True
    return isinstance(obj, Source) and obj.kind != SourceKind.LOAD_GENERATOR and is_epoch(obj.timeline)


def check_feed(catalog: Catalog, feed: Feed) -> None:
    """`InvalidSkew` unless every skew names a leaf that follows the wall clock.

    >>> check_feed(Catalog().add(Source.create("g", "load_generator")), Feed(skews={"g": ((0, 1),)}))
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidSkew: invalid skew ((0, 1),) for 'g': it does not follow the wall clock
    """
    for name, points in feed.skews.items():
        if not follows_wall_clock(catalog.get(name)):
            raise InvalidSkew(name, points, "it does not follow the wall clock")


def upper_at(catalog: Catalog, feed: Feed, name: str, wall: int) -> Antichain:
    """How far `name` is complete at wall-clock time `wall` (the meet of its inputs', per kind).

    An MV with a refresh schedule jumps to its next refresh (closed after the
    last); a subscribe stops at `UP TO`.

    >>> from frontier_harness.model.catalog.plan import Get
    >>> c = Catalog().add(Table("t")).add(MaterializedView("m", Get("t"), (RefreshEvery(10, 0),)))
    >>> upper_at(c, Feed(), "m", 3), upper_at(c, Feed(), "m", 10), upper_at(c, Feed(), "m", 11)
    ({10}, {10}, {20})
    """
    obj = catalog.get(name)
    if not obj.inputs:
        return feed.leaf_upper(obj, wall)
    met = Antichain.of(TIME, [])
    for i in obj.inputs:
        met = met.meet(upper_at(catalog, feed, i, wall))
    if isinstance(obj, MaterializedView) and obj.refresh:
        return Antichain.of(TIME, [r for t in met if (r := next_refresh(obj.refresh, t)) is not None])
    if isinstance(obj, Subscribe) and obj.up_to is not None:
        return met.meet(Antichain.of(TIME, [obj.up_to]))
    return met


def output_updates(catalog: Catalog, feed: Feed, name: str, until: int | None = None) -> list[Update]:
    """The updates `name`'s dataflow produces under `until` (not consolidated).

    Views are inlined (the reader's `until` applies inside them); an MV read by
    another object is its own persisted output (no `until`). An MV with a refresh
    schedule shows each update at the next refresh at or after its time, and never
    when there is none.

    >>> from frontier_harness.model.catalog.plan import Get
    >>> c = Catalog().add(Table("t")).add(MaterializedView("m", Get("t"), (RefreshEvery(10, 0),)))
    >>> output_updates(c, Feed({"t": (Update((1,), 3, 1),)}), "m")
    [Update(data=(1,), time=10, diff=1)]
    """
    obj = catalog.get(name)
    if isinstance(obj, (Table, Source)):
        return list(feed.updates.get(name, ()))
    if isinstance(obj, Constant):
        return [Update(row, TIME.minimum, 1) for row in obj.rows]
    if isinstance(obj, Index):
        return _import(catalog, feed, obj.on, until)
    inputs = {i: _import(catalog, feed, i, until) for i in obj.inputs}
    updates = evaluate(obj.plan, inputs, until)
    if isinstance(obj, MaterializedView) and obj.refresh:
        return _at_refreshes(obj.refresh, updates)
    return updates


def _import(catalog: Catalog, feed: Feed, name: str, until: int | None) -> list[Update]:
    persisted = isinstance(catalog.get(name), MaterializedView)
    return output_updates(catalog, feed, name, None if persisted else until)


def _at_refreshes(schedule: tuple[RefreshEvery | RefreshAt, ...], updates: list[Update]) -> list[Update]:
    moved = ((u, next_refresh(schedule, u.time)) for u in updates)
    return [Update(u.data, r, u.diff) for u, r in moved if r is not None]
