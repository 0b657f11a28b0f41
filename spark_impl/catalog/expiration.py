"""Dataflow expiration on Spark: the coordinator's decisions on the driver, the dataflows' data in one job.

The coordinator (driver, catalog metadata only) decides, per dataflow and replica
incarnation, its time dependence, its `expiration` (the bound at the replica's
expiration, one tick on) and its `until` (met with the expiration), and the
upper every object has at a wall-clock time. Tables and epoch sources follow the
wall clock at their skew (`skew` actions); the coordinator renders an incarnation's
dataflows when it starts, from the leaves' uppers then (`Seen`): an input ahead of
the wall clock is carried to the expiration (the seed's `inputs_upper > expiration`
branch, `ahead`), and a dataflow whose frontier reaches its expiration serves nothing.
Spark (one job per batch) evaluates each dataflow under its `until` (`frontier_harness.spark_impl.catalog.plan`, MVs inlined as
`persisted(refresh(body))`), and from those updates the reads' contents, the
number of diffs each dataflow processed, and the diffs kept at or beyond an
expiration. Frontiers of the Total epoch timeline are `Optional[int]`: `None` is
the empty frontier (closed; as a bound: none).

Histories are the expiration suite's, in the words of `frontier_harness.model.vocabulary.catalog`; the
observations are those of `observe_expiration` (the expiration suite) and
`observe_prove` (the solver's scenarios). Rules live in small functions
(`step_one_tick`, `meet_until`, ...) so that a planted bug replaces one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.catalog.timeline import EpochMilliseconds  # value types
from frontier_harness.model.errors import (
    DuplicateObject,
    InvalidReplica,
    InvalidSkew,
    ReplicaExpired,
    ReplicaNotRunning,
    TimelineError,
    UnknownObject,
    UpperRegression,
)
from frontier_harness.model.vocabulary import ActionLike, Arg, HistoryLike
from frontier_harness.model.vocabulary.catalog import (
    CHILD_FIELDS,
    OBJECT_KINDS,
    CatalogAction,
    CatalogArg,
    ExpirationLabel,
    InlinedNode,
    ObjectKind,
    PlanField,
    PlanNode,
    ProveLabel,
    ReadResult,
    RefreshField,
    SourceKind,
    catalog_feed,
    dataflow_of,
    per_dataflow,
)
from frontier_harness.spark_impl.arrow import HistoryTables, columns_of
from frontier_harness.spark_impl.catalog.plan import (
    Query,
    evaluate_queries,
    get_plan,
    leaf_timeline,
    plan_catalog,
    reads,
    rows_table,
)

EXPIRING = (ObjectKind.MV, ObjectKind.INDEX, ObjectKind.SUBSCRIBE)
KINDS = OBJECT_KINDS
REPLICA_EXPIRED, NOT_SERVED = (ReadResult.REPLICA_EXPIRED,), (ReadResult.NOT_SERVED,)
BEYOND, LATE = ProveLabel.BEYOND, ProveLabel.LATE
READ, COUNT, AFTER = "contents", "count", "beyond"  # what a `Batch` derives from a dataflow's updates

# ---------------------------------------------------------------- the catalog, as the coordinator holds it


@attrs.frozen
class Entry:
    """A catalog object: its kind, the names it reads, its plan (over names) and its options."""

    kind: str
    inputs: tuple = ()
    plan: dict | None = None
    refresh: tuple = ()
    up_to: int | None = None
    epoch: bool = True
    source_kind: str | None = None


@attrs.frozen
class World:
    """One history's catalog, source ticks, skews, inserted rows, expiration offset and replica starts."""

    catalog: dict
    ticks: dict
    rows: list
    offset: int
    starts: tuple
    skews: dict = attrs.field(factory=dict)


@attrs.frozen
class Seen:
    """When (`at`) the coordinator rendered an incarnation's dataflows, and each clock leaf's upper then."""

    at: int
    uppers: dict


def world(history: HistoryLike) -> World:
    """The coordinator's view of a history; typed errors for unknown or duplicate names, ticks, skews."""
    rejected, _, constants = plan_catalog(_checked_names(history))
    if rejected:
        step, named = min(rejected.items())
        raise TimelineError(history.actions[step].args[CatalogArg.NAME], dict(named))
    catalog = {a.args[CatalogArg.NAME]: _entry(a) for a in history.actions if a.name in KINDS}
    feed = catalog_feed(history)
    rows = [(name, row, 0, 1) for name, row in constants]
    rows += [(table, list(row), time, diff) for table, row, time, diff in feed.inserts]
    for name, points in feed.ticks.items():
        _check_ticks(name, points)
    for name, points in feed.skews.items():
        _check_skews(catalog, name, points)
    for action in history.actions:
        if action.name == CatalogAction.READ and action.args[CatalogArg.NAME] not in catalog:
            raise UnknownObject(action.args[CatalogArg.NAME], tuple(catalog))
    _check_replica(feed.offset, feed.starts)
    return World(catalog, feed.ticks, rows, feed.offset, feed.starts, feed.skews)


def _checked_names(history: HistoryLike) -> HistoryLike:
    known: list[str] = []
    for action in history.actions:
        if action.name not in KINDS:
            continue
        name = action.args[CatalogArg.NAME]
        if name in known:
            raise DuplicateObject(name)
        for read in _reads(action):
            if read not in known:
                raise UnknownObject(read, tuple(known))
        known.append(name)
    return history


def _reads(action: ActionLike) -> set[str]:
    a = action.args
    if action.name == CatalogAction.CREATE_INDEX:
        return {a[CatalogArg.ON]}
    return reads(a[CatalogArg.PLAN]) if CatalogArg.PLAN in a else set()


def _entry(action: ActionLike) -> Entry:
    a, kind = action.args, KINDS[action.name]
    if kind == ObjectKind.SOURCE:
        epoch = isinstance(leaf_timeline(action), EpochMilliseconds)
        return Entry(kind, epoch=epoch, source_kind=a[CatalogArg.KIND])
    if kind in (ObjectKind.TABLE, ObjectKind.CONSTANT):
        return Entry(kind)
    refresh, up_to = tuple(a.get(CatalogArg.REFRESH) or ()), a.get(CatalogArg.UP_TO)
    return Entry(kind, tuple(sorted(_reads(action))), a.get(CatalogArg.PLAN), refresh, up_to)


def _check_replica(offset: int, starts: tuple) -> None:
    if offset < 0:
        raise InvalidReplica(CatalogArg.OFFSET, offset, "must be non-negative (0 disables expiration)")
    if not starts or any(b <= a for a, b in zip(starts, starts[1:])):
        raise InvalidReplica("starts", starts, "must be non-empty and strictly increasing")


def _check_skews(catalog: dict, name: str, points: Sequence) -> None:
    walls = [w for w, _ in points]
    if walls[0] < 0 or any(b <= a for a, b in zip(walls, walls[1:])):
        raise InvalidSkew(name, tuple(points), "wall-clock times must be non-negative and increasing")
    if name not in catalog:
        raise UnknownObject(name, tuple(catalog))
    if not follows_wall_clock(catalog[name]):
        raise InvalidSkew(name, tuple(points), "it does not follow the wall clock")


def _check_ticks(name: str, points: Sequence) -> None:
    for (w1, u1), (w2, u2) in zip(points, points[1:]):
        if w2 < w1 or u2 < u1:
            raise UpperRegression((name, w1, u1), (name, w2, u2))


# ---------------------------------------------------------------- rules


def meet(a: int | None, b: int | None) -> int | None:
    """The meet of Total frontiers `{a}`, `{b}` (`None`: empty, the top); also how bounds combine."""
    return b if a is None else a if b is None else min(a, b)


def meet_bounds(a: int | None, b: int | None) -> int | None:
    """How two time dependences combine: `None` is *no bound*, so any bound bounds the result."""
    return meet(a, b)


def next_refresh(schedule: tuple, time: int) -> int | None:
    """The first refresh of any clause at or after `time`; `None` when none is left."""
    every, aligned_to, at = RefreshField.EVERY, RefreshField.ALIGNED_TO, RefreshField.AT
    times = [time + (c[aligned_to] - time) % c[every] if every in c else c[at] for c in schedule]
    return min((t for t in times if t >= time), default=None)


def refresh_bound(schedule: tuple, bound: int | None) -> int | None:
    """An MV's bound: rounded up to its next refresh (no schedule: unchanged)."""
    return bound if not schedule or bound is None else next_refresh(schedule, bound)


def follows_wall_clock(entry: Entry) -> bool:
    """Tables, and epoch sources but load generators, are complete up to the wall-clock time."""
    return entry.kind == ObjectKind.TABLE or (
        entry.kind == ObjectKind.SOURCE and entry.epoch and entry.source_kind != SourceKind.LOAD_GENERATOR
    )


def skewed_upper(points: list, wall: int) -> int:
    """A clock leaf's upper at `wall`: the largest `w + skew` it reached at any `w <= wall`, never below 0.

    A schedule point `(at, by)` holds from `at` on; before the first, the skew is 0. Within
    one stretch `w + by` grows with `w`, so each stretch peaks at its last wall-clock time.
    """
    stretches = [(0, 0)] + [(at, by) for at, by in points if at <= wall]
    peaks = [
        min(wall, nxt - 1) + by
        for (at, by), (nxt, _) in zip(stretches, stretches[1:] + [(wall + 1, 0)])
        if nxt > at
    ]
    return max([0, *peaks])


def ahead(upper: int, rendered: int, expiration: int) -> int:
    """The seed's `inputs_upper > expiration` branch: an input at `upper` when rendered at `rendered` is
    at `upper + (expiration - rendered)` at the expiration; when that is past it, that is the bound."""
    at_expiration = upper - rendered + expiration
    return max(at_expiration, expiration)


def leaf_bound(entry: Entry, name: str, wall: int, seen: Seen | None) -> int | None:
    """A leaf's time dependence at `wall`: the wall clock (or its input carried there, when ahead) if it
    follows the clock; otherwise (may jump, or closed) none."""
    if not follows_wall_clock(entry):
        return None
    return wall if seen is None or name not in seen.uppers else ahead(seen.uppers[name], seen.at, wall)


def time_dependence(catalog: dict, name: str, wall: int, seen: Seen | None = None) -> int | None:
    """How far `name`'s upper can be at wall-clock time `wall` (`None`: no bound), composed per kind."""
    entry = catalog[name]
    if not entry.inputs:
        return leaf_bound(entry, name, wall, seen)
    met = None
    for i in entry.inputs:
        met = meet_bounds(met, time_dependence(catalog, i, wall, seen))
    if entry.kind == ObjectKind.MV:
        return refresh_bound(entry.refresh, met)
    return meet_bounds(met, entry.up_to) if entry.kind == ObjectKind.SUBSCRIBE else met


def step_one_tick(time: int) -> int:
    """The expiration is one tick past the bound: the bound itself may legitimately be reached."""
    return time + 1


def meet_until(until: int | None, expiration: int | None) -> int | None:
    """A dataflow's `until` with its expiration: the earlier frontier."""
    return meet(until, expiration)


def expiration_for(bound: int | None, until: int | None) -> int | None:
    """One tick past the bound, unless there is none or the dataflow's own `until` comes first."""
    expiration = None if bound is None else step_one_tick(bound)
    return None if expiration is None or (until is not None and until <= expiration) else expiration


def render(
    catalog: dict, name: str, replica_exp: int | None, seen: Seen | None = None
) -> tuple[int | None, int | None]:
    """`(until, expiration)` of `name`'s dataflow on a replica expiring at `replica_exp` (`None`: never),
    rendered having `seen` the leaves (`None`: every leaf at the wall clock)."""
    entry = catalog[name]
    until = entry.up_to if entry.kind == ObjectKind.SUBSCRIBE else None
    expiration = None
    if replica_exp is not None and entry.kind in EXPIRING:
        expiration = expiration_for(time_dependence(catalog, name, replica_exp, seen), until)
    return meet_until(until, expiration), expiration


def seen_at(w: World, wall: int) -> Seen:
    """What the coordinator sees of the clock leaves when it renders at `wall`."""
    clock = [n for n, e in w.catalog.items() if follows_wall_clock(e)]
    return Seen(wall, {n: skewed_upper(w.skews.get(n, []), wall) for n in clock})


def upper(w: World, name: str, wall: int) -> int | None:
    """How far `name` is complete at `wall`: leaves by clock or ticks; derived objects the inputs' meet."""
    entry = w.catalog[name]
    if entry.kind == ObjectKind.CONSTANT:
        return None
    if not entry.inputs:
        if follows_wall_clock(entry):
            return skewed_upper(w.skews.get(name, []), wall)
        reached = [u for t, u in w.ticks.get(name, ()) if t <= wall]
        return reached[-1] if reached else 0
    met = None
    for i in entry.inputs:
        met = meet(met, upper(w, i, wall))
    if entry.kind == ObjectKind.MV and entry.refresh:
        return None if met is None else next_refresh(entry.refresh, met)
    return meet(met, entry.up_to) if entry.kind == ObjectKind.SUBSCRIBE else met


def replica_expiration(start: int, offset: int) -> int | None:
    """An incarnation started at `start` expires at `start + offset`; an offset of 0 disables expiration."""
    return None if offset == 0 else start + offset


def incarnation(w: World, offset: int, wall: int) -> tuple[int, int | None]:
    """`(start, expiration)` of the incarnation running at `wall` (`None`: disabled); typed errors if none."""
    started = [s for s in w.starts if s <= wall]
    if not started:
        raise ReplicaNotRunning(wall, w.starts[0])
    expiration = replica_expiration(started[-1], offset)
    if expiration is not None and wall > expiration:
        raise ReplicaExpired(wall, started[-1], expiration)
    return started[-1], expiration


def frontier_passed(expiration: int | None, up: int | None, time: int) -> bool:
    """The frontier check: with an expiration, a read at or past it, or a frontier that reached it, is refused
    (the frontier is held there; having reached it, the dataflow looks finished and would panic)."""
    return expiration is not None and (up is None or up >= expiration or time >= expiration)


def read_request(w: World, offset: int, name: str, wall: int, time: int) -> tuple:
    """`(until, time)` to read from `name`'s output, or the reason there is nothing to read."""
    try:
        start, replica_exp = incarnation(w, offset, wall)
    except ReplicaExpired:
        return REPLICA_EXPIRED
    until, expiration = render(w.catalog, name, replica_exp, seen_at(w, start))
    up = upper(w, name, wall)
    if frontier_passed(expiration, up, time):
        return NOT_SERVED
    if up is not None and up <= time:
        return NOT_SERVED
    return until, time


# ---------------------------------------------------------------- dataflows as leaf plans


def leaf_plan(catalog: dict, name: str) -> dict:
    """`name`'s dataflow as one plan over leaves: views inlined, MVs read as `persisted(refresh(body))`."""
    entry = catalog[name]
    if entry.kind == ObjectKind.INDEX:
        return _import(catalog, entry.inputs[0])
    body = _inline(catalog, entry.plan) if entry.plan is not None else get_plan(name)
    if not entry.refresh:
        return body
    return {
        PlanField.NODE: InlinedNode.REFRESH,
        PlanField.INPUT: body,
        PlanField.REFRESH: list(entry.refresh),
    }


def _import(catalog: dict, name: str) -> dict:
    plan = leaf_plan(catalog, name)
    persisted = {PlanField.NODE: InlinedNode.PERSISTED, PlanField.INPUT: plan}
    return persisted if catalog[name].kind == ObjectKind.MV else plan


def _inline(catalog: dict, plan: dict) -> dict:
    if plan[PlanField.NODE] == PlanNode.GET:
        return _import(catalog, plan[PlanField.NAME])
    out = {**plan, **{k: _inline(catalog, plan[k]) for k in CHILD_FIELDS if k in plan}}
    if PlanField.INPUTS in plan:
        out[PlanField.INPUTS] = [_inline(catalog, p) for p in plan[PlanField.INPUTS]]
    return out


# ---------------------------------------------------------------- the batch job


class Batch:
    """Dataflows `(history, name, until)` to evaluate, and what to derive from their updates, for one job.

    `read`, `count` and `beyond` return an id under which `run()` returns the result:
    the contents at a time, the number of diffs processed, the diffs at/after a time.
    """

    def __init__(self, worlds: Sequence[World]) -> None:
        self.worlds = worlds
        self.keys: dict[tuple[int, str, int | None], int] = {}
        self.queries: list[Query] = []
        self.requests: dict[str, list] = {READ: [], COUNT: [], AFTER: []}

    def _key(self, hid: int, name: str, until: int | None) -> int:
        if (hid, name, until) not in self.keys:
            self.keys[(hid, name, until)] = len(self.queries)
            self.queries.append(
                Query(len(self.queries), hid, 1, leaf_plan(self.worlds[hid].catalog, name), until)
            )
        return self.keys[(hid, name, until)]

    def _request(self, tag: str, hid: int, name: str, until: int | None, time: int | None) -> tuple:
        self.requests[tag].append((self._key(hid, name, until), time))
        return tag, len(self.requests[tag]) - 1

    def read(self, hid: int, name: str, until: int | None, time: int) -> tuple:
        return self._request(READ, hid, name, until, time)

    def count(self, hid: int, name: str, until: int | None) -> tuple:
        return self._request(COUNT, hid, name, until, None)

    def beyond(self, hid: int, name: str, until: int | None, time: int) -> tuple:
        return self._request(AFTER, hid, name, until, time)

    def run(self) -> dict:
        """`{id: frozenset}`: read -> `{(data, count)}`, count -> `{(n,)}`, beyond -> `{(time, diff)}`."""
        results: dict = {(tag, i): set() for tag, reqs in self.requests.items() for i in range(len(reqs))}
        rows = [
            (hid, 0, name, row, time, diff)
            for hid, w in enumerate(self.worlds)
            for name, row, time, diff in w.rows
        ]
        updates = evaluate_queries(rows_table(rows), self.queries)
        if updates is not None:
            for tag, rid, data, time, diff in _derived(updates, _requests_frame(self.requests)):
                results[(tag, rid)].add(
                    (tuple(data), diff) if tag == READ else (diff,) if tag == COUNT else (time, diff)
                )
        for i in range(len(self.requests[COUNT])):
            results[(COUNT, i)] = results[(COUNT, i)] or {(0,)}
        return {k: frozenset(v) for k, v in results.items()}


def _requests_frame(requests: dict) -> DataFrame:
    ids = pa.int64()
    tables = HistoryTables({"requests": {"tag": pa.string(), "rid": ids, "key": ids, "point": ids}})
    for tag, reqs in requests.items():
        for rid, (key, time) in enumerate(reqs):
            tables.append("requests", tag=tag, rid=rid, key=key, point=time)
    return tables.frames()["requests"]


def _derived(updates: DataFrame, requests: DataFrame) -> Iterable[tuple]:
    """`(tag, rid, data, time, diff)` rows: contents at a time, counts, distinct diffs at/after a time."""
    tag, time, diff = F.col("tag"), F.col("time"), F.col("diff")
    wanted = (
        (tag == COUNT)
        | ((tag == READ) & (time <= F.col("point")))
        | ((tag == AFTER) & (time >= F.col("point")))
    )
    beyond = tag == AFTER
    grouped = (
        updates.join(requests, on="key")
        .where(wanted)
        .groupBy(
            "tag",
            "rid",
            F.when(tag == READ, F.col("data")).alias("data"),
            F.when(beyond, time).alias("time"),
            F.when(beyond, diff).alias("each"),
        )
        .agg(F.sum(diff).alias("sum"), F.count(F.lit(1)).alias("n"))
    )
    value = F.when(tag == READ, F.col("sum")).when(tag == COUNT, F.col("n")).otherwise(F.col("each"))
    table = (
        grouped.where((tag != READ) | (F.col("sum") != 0))
        .select("tag", "rid", "data", "time", value.alias("diff"))
        .toArrow()
    )
    cols = columns_of(table)
    return zip(cols["tag"], cols["rid"], cols["data"], cols["time"], cols["diff"])


# ---------------------------------------------------------------- observations


def _maintained(history: HistoryLike) -> list[str]:
    return [a.args[CatalogArg.NAME] for a in history.actions if KINDS.get(a.name) in EXPIRING]


def _read(batch: Batch, hid: int, offset: int, args: Mapping[str, Any]) -> Any:
    name, wall, time = args[CatalogArg.NAME], args[CatalogArg.WALL], args[Arg.TIME]
    request = read_request(batch.worlds[hid], offset, name, wall, time)
    return request if request in (REPLICA_EXPIRED, NOT_SERVED) else batch.read(hid, name, *request)


def observe_expiration(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """The expiration suite's observation: reads with and without expiration; renderings at restarts."""
    batch = Batch([world(h) for h in histories])
    pending: list[tuple[int, int, str, Any]] = []
    for hid, history in enumerate(histories):
        w, maintained = batch.worlds[hid], _maintained(history)
        for step, action in enumerate(history.actions):
            a = action.args
            if action.name == CatalogAction.READ:
                on = _read(batch, hid, w.offset, a)
                if on != REPLICA_EXPIRED:
                    pending += [
                        (hid, step, ExpirationLabel.READ_WITH, on),
                        (hid, step, ExpirationLabel.READ_WITHOUT, _read(batch, hid, 0, a)),
                    ]
            elif action.name == CatalogAction.RESTART:
                wall = a[CatalogArg.WALL]
                replica_exp, seen = replica_expiration(wall, w.offset), seen_at(w, wall)
                for name in maintained:
                    until, expiration = render(w.catalog, name, replica_exp, seen)
                    rendered = frozenset({(until, expiration)})
                    pending.append((hid, step, per_dataflow(ExpirationLabel.DATAFLOW, name), rendered))
                    counts = (
                        batch.count(hid, name, until),
                        batch.count(hid, name, render(w.catalog, name, None)[0]),
                    )
                    pending.append((hid, step, per_dataflow(ExpirationLabel.DIFFS, name), counts))
                    late = batch.beyond(hid, name, until, wall + w.offset + 1)
                    pending.append((hid, step, per_dataflow(ExpirationLabel.KEPT, name), late))
    results = batch.run()
    observed: list[dict] = [{} for _ in histories]
    for hid, step, label, value in pending:
        if dataflow_of(ExpirationLabel.DIFFS, label):
            value = frozenset({tuple(next(iter(results[c]))[0] for c in value)})
        elif dataflow_of(ExpirationLabel.KEPT, label):
            value = results[value]
        elif label in (ExpirationLabel.READ_WITH, ExpirationLabel.READ_WITHOUT):
            value = frozenset({NOT_SERVED}) if value == NOT_SERVED else frozenset(results[value])
        observed[hid][(step, label)] = value
    return observed


def observe_prove(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """The solver scenarios' observation: each read with and without expiration, and the diffs kept at or
    beyond each expiration and past each incarnation's life (`start + offset + 1`)."""
    batch = Batch([world(h) for h in histories])
    pending, kept = [], []
    for hid, history in enumerate(histories):
        w = batch.worlds[hid]
        for step, action in enumerate(history.actions):
            if action.name == CatalogAction.READ:
                pending.append((hid, (step, ProveLabel.READ), _read(batch, hid, w.offset, action.args)))
                pending.append((hid, (step, ProveLabel.READ_WITHOUT), _read(batch, hid, 0, action.args)))
        for start in w.starts:
            replica_exp, life = replica_expiration(start, w.offset), start + w.offset + 1
            for name in _maintained(history):
                until, expiration = render(w.catalog, name, replica_exp, seen_at(w, start))
                if expiration is not None:
                    request = batch.beyond(hid, name, until, expiration)
                    kept.append((hid, BEYOND, (name, start, expiration), request))
                kept.append((hid, LATE, (name, start, life), batch.beyond(hid, name, until, life)))
    results = batch.run()
    observed: list[dict] = [
        {(len(h.actions), BEYOND): frozenset(), (len(h.actions), LATE): frozenset()} for h in histories
    ]
    for hid, key, request in pending:
        observed[hid][key] = (
            frozenset({request})
            if request in (REPLICA_EXPIRED, NOT_SERVED)
            else frozenset({(ReadResult.ROWS, tuple(sorted(results[request])))})
        )
    for hid, label, bound, request in kept:
        end = (len(histories[hid].actions), label)
        observed[hid][end] |= {(*bound, time, diff) for time, diff in results[request]}
    return observed
