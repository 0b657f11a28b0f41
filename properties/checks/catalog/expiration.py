"""The *expiration* suite: the seed's success criterion for dataflow expiration, for every skew.

Histories (`frontier_harness.properties.checks.catalog.strategies.expiration`): a table `t`, a load generator `g`,
a constant `k`, maybe a source `s` minted one tick ahead of the wall clock, maybe
a CDC source `c` (in the epoch timeline and skewed, or in its own and ticking); a
view `v` with a temporal filter; MVs (with `REFRESH EVERY`/`REFRESH AT`), indexes
and subscribes (`UP TO`); inserts, skews (`skew{name, wall, by}`: leads, lags, the
+1 of minting), ticks, `set_offset`, restarts at wall-clock times and reads
`read{name, wall, time}`. The world is the model's (`frontier_harness.model.catalog.catalog.Feed`,
`upper_at`, `output_updates`); the history's order only matters for creation.

**Implementation protocol.** The suite calls
`impl.observe_expiration(domain, histories) -> list[Observation]`, one
observation per history. The model computes `observe` below with
`frontier_harness.model.catalog.expiration` as it is; Spark (`frontier_harness.spark_impl.catalog.expiration`) decides the
renderings on the driver and evaluates the dataflows and reads in one job.

Observed, with the replica's offset and with offset 0 (expiration disabled):
- `(step, "read with expiration")` / `(step, "read without")`: what the read
  returns (`served`: contents, or `("not served",)`); a read whose wall-clock
  time is past the enabled replica's expiration is skipped (it must restart).
- `(step, "dataflow NAME")` at each restart: the rendered `(until, expiration)`.
- `(step, "diffs NAME")` at each restart: `(diffs with expiration, without)`.
- `(step, "kept beyond life NAME")` at each restart: the `(time, diff)`s the
  dataflow kept at or after one tick past the replica's life (`start + offset + 1`).

Properties, each judged from the implementation's own observation:
- `reads_identical_with_and_without_expiration`: the seed's success criterion,
  for skews within the bound the `inputs_upper > expiration` branch handles;
- `expires_as_the_seed_says`: every expiring dataflow's `until` is at or below its
  expiration and expiration never adds diffs; a dataflow over epoch inputs without
  a refresh schedule keeps no diff from where the seed says it expires, and one
  with no wall-clock input never expires (`frontier_harness.properties.checks.catalog.oracles.expiration`, the
  seed restated, not the model): a "never expire" implementation fails here;
- `never_serves_wrong_data_for_any_skew`: inputs may also get further ahead after a
  restart (beyond the bound); a read may then be refused (the frontier check), but
  one served with expiration equals the read without;
- `observations_match_model`: the whole observation equals the model's (the
  differential check for an implementation of its own, e.g. Spark).

Hard cases are counted from the history with the same restated rule and the
world's own uppers and contents, never from `frontier_harness.model.catalog.expiration`. Besides the cases
above, each boundary of the rule is required (docs/required-events.md): a read exactly
at the expiration and one tick before it, a read at the last wall-clock time an
incarnation runs, a diff exactly at the drop point and one before it, `UP TO` exactly at
the expiration, a refresh exactly where the inputs would expire the dataflow, a read by
a third incarnation, and (beyond the bound) a frontier exactly at the expiration. Not
generated: an offset or time near the i64 limit (`start + offset + 1` overflowing a
Spark `long`): the seed states no saturating rule for it, so there is nothing to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from frontier_harness.model.catalog.catalog import Feed, check_feed, output_updates, upper_at
from frontier_harness.model.catalog.expiration import (
    Replica,
    diffs_processed,
    render,
    replica_expiration,
    seen_at,
    served,
)
from frontier_harness.model.errors import ModelError, ReplicaExpired
from frontier_harness.model.time.collection import Update, at
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.catalog import (
    MAINTAINED_ACTIONS,
    CatalogAction,
    CatalogArg,
    ExpirationLabel,
    ReadResult,
    RefreshField,
    catalog_feed,
    dataflow_of,
    per_dataflow,
)
from frontier_harness.properties.checks.catalog.actions import build_catalog
from frontier_harness.properties.checks.catalog.oracles import expiration as oracle
from frontier_harness.properties.checks.catalog.strategies.expiration import (
    draw_expiration_history,
    draw_history_beyond_the_bound,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import (
    Check,
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    differential,
    observe_or_reject,
)

NOT_SERVED = frozenset({(ReadResult.NOT_SERVED,)})
WITH, WITHOUT = ExpirationLabel.READ_WITH, ExpirationLabel.READ_WITHOUT
TIME = Total()


def world(history: History) -> tuple:
    """`(catalog, feed, offset, starts)` from the history's plain data (`check_feed` checks the skews)."""
    fed = catalog_feed(history)
    updates: dict[str, list] = {}
    for table, row, time, diff in fed.inserts:
        updates.setdefault(table, []).append(Update(row, time, diff))
    feed = Feed({k: tuple(v) for k, v in updates.items()}, fed.ticks, fed.skews)
    catalog = build_catalog(history)
    check_feed(catalog, feed)
    return catalog, feed, fed.offset, fed.starts


def _contents(result: dict | None) -> frozenset:
    return NOT_SERVED if result is None else frozenset(result.items())


def observe(history: History) -> Observation:
    """Reads with and without expiration; each maintained dataflow's rendering and diffs at each restart."""
    catalog, feed, offset, starts = world(history)
    on, off = Replica(offset, starts), Replica(0, starts)
    maintained = [a.args[CatalogArg.NAME] for a in history.actions if a.name in MAINTAINED_ACTIONS]
    observed: Observation = {}
    for step, action in enumerate(history.actions):
        a = action.args
        if action.name == CatalogAction.READ:
            try:
                with_expiration = served(
                    catalog, feed, on, a[CatalogArg.NAME], a[CatalogArg.WALL], a[Arg.TIME]
                )
            except ReplicaExpired:
                continue
            observed[(step, WITH)] = _contents(with_expiration)
            observed[(step, WITHOUT)] = _contents(
                served(catalog, feed, off, a[CatalogArg.NAME], a[CatalogArg.WALL], a[Arg.TIME])
            )
        elif action.name == CatalogAction.RESTART:
            replica_exp, seen = (
                replica_expiration(a[CatalogArg.WALL], offset),
                seen_at(catalog, feed, a[CatalogArg.WALL]),
            )
            for name in maintained:
                flow = render(catalog, name, replica_exp, seen)
                kept = output_updates(catalog, feed, name, flow.until)
                observed[(step, per_dataflow(ExpirationLabel.DATAFLOW, name))] = frozenset(
                    {(flow.until, flow.expiration)}
                )
                observed[(step, per_dataflow(ExpirationLabel.DIFFS, name))] = frozenset(
                    {(len(kept), diffs_processed(catalog, feed, name, None))}
                )
                life = a[CatalogArg.WALL] + offset + 1
                observed[(step, per_dataflow(ExpirationLabel.KEPT, name))] = frozenset(
                    (u.time, u.diff) for u in kept if u.time >= life
                )
    return observed


# ---------------------------------------------------------------- properties


def _reads_identical(history: History, obs: Observation) -> Outcome | None:
    for (step, label), value in sorted(obs.items()):
        if label == WITH and value != obs[(step, WITHOUT)]:
            return _read_outcome(history, step, value, obs[(step, WITHOUT)], "!=")
    return None


def _never_wrong(history: History, obs: Observation) -> Outcome | None:
    """A read served with expiration equals the read without, and is at a time before the expiration
    of the dataflow as the running incarnation rendered it (the seed's frontier check)."""
    for (step, label), value in sorted(obs.items()):
        if label != WITH or value == NOT_SERVED:
            continue
        if value != obs[(step, WITHOUT)]:
            return _read_outcome(history, step, value, obs[(step, WITHOUT)], "served, but !=")
        a = history.actions[step].args
        restart = max((s for s, wall in _restarts(history) if wall <= a[CatalogArg.WALL]), default=-1)
        ((_, expiration),) = obs.get(
            (restart, per_dataflow(ExpirationLabel.DATAFLOW, a[CatalogArg.NAME])), {(None, None)}
        )
        if expiration is not None and a[Arg.TIME] >= expiration:
            how = f"served at or after its expiration {expiration}:"
            return _read_outcome(history, step, value, obs[(step, WITHOUT)], how)
    return None


def _read_outcome(history: History, step: int, value: frozenset, without: frozenset, how: str) -> Outcome:
    a = history.actions[step].args
    return Outcome(
        ok=False,
        step=step,
        expected=without,
        actual=value,
        message=f"read of {a[CatalogArg.NAME]!r} at time {a[Arg.TIME]} (wall {a[CatalogArg.WALL]}): "
        f"with expiration {sorted(value)} {how} without {sorted(without)}",
    )


def _as_the_seed_says(history: History, obs: Observation) -> Outcome | None:
    """until met with the expiration, no diffs added, the seed's drops kept, none expire without a clock."""
    for (step, label), value in sorted(obs.items()):
        name = label.split(" ")[-1]
        problem = None
        if dataflow_of(ExpirationLabel.DATAFLOW, label):
            ((until, expiration),) = value
            if expiration is not None and (until is None or until > expiration):
                problem = f"until {until} is not met with expiration {expiration}"
            elif expiration is not None and oracle.never_expires(history, name):
                problem = f"expires at {expiration}, but no input follows the wall clock"
        elif dataflow_of(ExpirationLabel.DIFFS, label):
            ((with_e, without),) = value
            if with_e > without:
                problem = f"{with_e} diffs with expiration > {without} without"
        elif dataflow_of(ExpirationLabel.KEPT, label):
            drop = oracle.must_drop_from(history, name, history.actions[step].args[CatalogArg.WALL])
            late = sorted(d for d in value if drop is not None and d[0] >= drop)
            if late:
                problem = f"kept {late}, at or after {drop}, where the seed drops every diff"
        if problem:
            return Outcome(
                ok=False, step=step, actual=value, message=f"dataflow {name!r} at restart {step}: {problem}"
            )
    return None


def intrinsic(judge: Callable[[History, Observation], Outcome | None]) -> Check:
    """A batched check of the implementation's own observations (a rejection is per history)."""

    def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
        observed = observe_or_reject(impl, "observe_expiration", histories)
        return [
            rejection(h, obs, observe) if isinstance(obs, ModelError) else judge(h, obs) or Outcome(ok=True)
            for h, obs in zip(histories, observed)
        ]

    return check


def rejection(history: History, error: ModelError, model_observe: Callable[[History], Any]) -> Outcome:
    """An implementation that rejected a history: a generator/model disagreement if the model rejects it
    too (the model only classifies the failure here, it judges nothing), else the implementation's failure."""
    try:
        model_observe(history)
    except ModelError as model_error:
        return Outcome.model_rejected(model_error)
    return Outcome.implementation_rejected(error)


# ---------------------------------------------------------------- hard cases


def _restarts(history: History) -> list[tuple[int, int]]:
    return [
        (step, a.args[CatalogArg.WALL])
        for step, a in enumerate(history.actions)
        if a.name == CatalogAction.RESTART
    ]


def _maintained(history: History) -> dict:
    return {a.args[CatalogArg.NAME]: a for a in history.actions if a.name in MAINTAINED_ACTIONS}


def events(history: History) -> list[str]:
    """Hard cases within the bound: expirations (dropping diffs, moved by a lead), leads, lags, the +1
    of minting, refresh and UP TO, dataflows that never expire (one over a ticking non-epoch source),
    reads after a restart."""
    try:
        catalog, feed, offset, starts = world(history)
    except ModelError:
        return []
    found: set[str] = set()
    for name, action in _maintained(history).items():
        found |= _dataflow_events(history, catalog, feed, name, action)
    found |= _read_events(history, catalog, feed, starts)
    found |= _boundary_events(history, catalog, feed, starts)
    return sorted(found)


READ_AT, READ_BEFORE = "read exactly at the expiration", "read one tick before the expiration"
LAST_WALL = "read at the last wall-clock time an incarnation runs"
DIFF_AT, DIFF_BEFORE = (
    "diff exactly at the expiration (dropped)",
    "diff one tick before the expiration (kept)",
)
UP_TO_AT = "subscribe UP TO exactly at the expiration"
REFRESH_AT = "a refresh exactly where the inputs would expire the dataflow"
THIRD = "read served by a third incarnation"
FRONTIER_AT = "frontier exactly at the expiration"


def _boundary_events(history: History, catalog: Any, feed: Feed, starts: tuple) -> set[str]:
    """The rule's edges: reads, diffs, `UP TO` and refreshes exactly at (or one before) an expiration."""
    found, offset = set(), oracle.offset(history)
    for a in history.actions:
        if a.name != CatalogAction.READ or offset == 0:
            continue
        name, wall, time = a.args[CatalogArg.NAME], a.args[CatalogArg.WALL], a.args[Arg.TIME]
        start = max((s for s in starts if s <= wall), default=None)
        if start is None or wall > start + offset:
            continue
        found |= {LAST_WALL} if wall == start + offset else set()
        found |= {THIRD} if len(starts) > 2 and start >= starts[2] else set()
        expiration = oracle.expiration_at(history, name, start)
        found |= {READ_AT} if time == expiration else set()
        found |= {READ_BEFORE} if expiration is not None and time == expiration - 1 else set()
    for name, action in _maintained(history).items():
        for _, start in _restarts(history):
            found |= _dataflow_boundaries(history, catalog, feed, name, action, start)
    return found


def _dataflow_boundaries(
    history: History, catalog: Any, feed: Feed, name: str, action: Any, start: int
) -> set:
    found, expiration = set(), oracle.expiration_at(history, name, start)
    drop = oracle.must_drop_from(history, name, start)
    if drop is not None:
        times = {u.time for u in output_updates(catalog, feed, name)}
        found |= {DIFF_AT} if drop in times else set()
        found |= {DIFF_BEFORE} if drop - 1 in times else set()
    if expiration is not None and action.args.get(CatalogArg.UP_TO) == expiration:
        found.add(UP_TO_AT)
    would = _would_expire(history, name, start)
    for clause in _refreshes(history, name):
        every, aligned = clause.get(RefreshField.EVERY), clause.get(RefreshField.ALIGNED_TO, 0)
        exact = clause.get(RefreshField.AT) == would or (
            every and would >= aligned and (would - aligned) % every == 0
        )
        found |= {REFRESH_AT} if would is not None and exact else set()
    return found


def _would_expire(history: History, name: str, start: int) -> int | None:
    """Where the inputs alone would expire `name` (the oracle's rule with its refreshes ignored)."""
    leads = _leads(history, name, start)
    if oracle.offset(history) == 0 or oracle.never_expires(history, name) or not leads:
        return None
    return start + oracle.offset(history) + max(0, min(leads)) + 1


def _refreshes(history: History, name: str) -> list[dict]:
    names = oracle.closure(history, name)
    return [
        c
        for a in history.actions
        if a.name == CatalogAction.CREATE_MV and a.args[CatalogArg.NAME] in names
        for c in a.args.get(CatalogArg.REFRESH) or ()
    ]


def _dataflow_events(history: History, catalog: Any, feed: Feed, name: str, action: Any) -> set[str]:
    found, names = set(), oracle.closure(history, name)
    if oracle.never_expires(history, name):
        found.add("maintained dataflow without expiration")
        if any(a.name == CatalogAction.TICK and a.args[CatalogArg.SOURCE] in names for a in history.actions):
            found.add("a dataflow over a ticking non-epoch source")
    mvs = {
        a.args[CatalogArg.NAME]: a.args.get(CatalogArg.REFRESH) or ()
        for a in history.actions
        if a.name == CatalogAction.CREATE_MV
    }
    if any(RefreshField.EVERY in clause for n in names & set(mvs) for clause in mvs[n]):
        found.add("refresh schedule bounds an expiration")
    for _, start in _restarts(history):
        expiration = oracle.expiration_at(history, name, start)
        if expiration is None:
            continue
        found.add("a dataflow expires")
        if action.args.get(CatalogArg.UP_TO) is not None and action.args[CatalogArg.UP_TO] <= expiration:
            found.add("subscribe UP TO keeps its until")
        drop = oracle.must_drop_from(history, name, start)
        if drop is not None and any(u.time >= drop for u in output_updates(catalog, feed, name)):
            found.add("expiration dropped diffs")
        leads = _leads(history, name, start)
        found |= {_lead_event(lead) for lead in leads if lead != 0}
        if min(leads) > 0:
            found.add("an input ahead moves the expiration")
    return found


def _leads(history: History, name: str, wall: int) -> list[int]:
    names = oracle.closure(history, name)
    return [lead for n, lead in oracle.leads_at(history, wall).items() if n in names]


def _lead_event(lead: int) -> str:
    if lead == 1:
        return "input one tick ahead (minted)"
    return "input ahead of the wall clock" if lead > 1 else "input behind the wall clock"


def _read_events(history: History, catalog: Any, feed: Feed, starts: tuple) -> set[str]:
    found = set()
    for a in history.actions:
        if a.name == CatalogAction.READ and len(starts) > 1 and a.args[CatalogArg.WALL] >= starts[1]:
            found.add("read served after a restart")
            name, time = a.args[CatalogArg.NAME], a.args[Arg.TIME]
            upper = _upper(catalog, feed, name, a.args[CatalogArg.WALL])
            if (upper is None or time < upper) and at(TIME, output_updates(catalog, feed, name), time):
                found.add("read with data after a restart")
    return found


def _upper(catalog: Any, feed: Feed, name: str, wall: int) -> int | None:
    return min(upper_at(catalog, feed, name, wall), default=None)


def events_beyond_the_bound(history: History) -> list[str]:
    """An input further ahead at a read than when its replica started, and a read when a dataflow's frontier
    has reached where the seed expires it (the frontier check must refuse it)."""
    try:
        catalog, feed, offset, starts = world(history)
    except ModelError:
        return []
    found = set()
    for a in history.actions:
        if a.name != CatalogAction.READ:
            continue
        name, wall = a.args[CatalogArg.NAME], a.args[CatalogArg.WALL]
        start = max((s for s in starts if s <= wall), default=None)
        if start is None or wall > start + offset:
            continue
        now, then = _leads(history, name, wall), _leads(history, name, start)
        if now and min(now) > max(0, min(then)):
            found.add("an input gets further ahead after a restart")
        expiration, upper = oracle.expiration_at(history, name, start), _upper(catalog, feed, name, wall)
        if expiration is not None and upper is not None and upper >= expiration:
            found.add("frontier passes the expiration")
            found |= {FRONTIER_AT} if upper == expiration else set()
    return sorted(found)


def every_event(history: History) -> list[str]:
    """The hard cases within the bound and beyond it."""
    return events(history) + events_beyond_the_bound(history)


def diffs_metric(histories: Sequence[History]) -> tuple[int, int]:
    """Diffs processed with and without expiration, summed over every dataflow and restart."""
    with_e = without = 0
    for h in histories:
        for (_, label), value in observe(h).items():
            if dataflow_of(ExpirationLabel.DIFFS, label):
                ((a, b),) = value
                with_e, without = with_e + a, without + b
    return with_e, without


SUITE = Suite(
    name="expiration",
    doc="Reads are identical with dataflow expiration enabled and disabled, across restarts, for every skew "
    "within the bound; expiration drops what the seed says; beyond the bound nothing wrong is served.",
    properties=(  # against Spark, the comparison with the model first: it sees any divergence, soonest
        Property(
            name="observations_match_model",
            doc="Reads, renderings and diffs equal the model's (for an implementation of its own: Spark).",
            draw=draw_history_beyond_the_bound,
            check=differential(observe, "observe_expiration"),
            events=every_event,
            reference=Reference.MODEL,
        ),
        Property(
            name="reads_identical_with_and_without_expiration",
            doc="Every read the replica serves is the same with the offset set and with 0 (across restarts).",
            draw=draw_expiration_history,
            check=intrinsic(_reads_identical),
            events=events,
        ),
        Property(
            name="expires_as_the_seed_says",
            doc="until meets the expiration; epoch dataflows drop every diff where the seed expires them.",
            draw=draw_expiration_history,
            check=intrinsic(_as_the_seed_says),
            events=events,
        ),
        Property(
            name="never_serves_wrong_data_for_any_skew",
            doc="Inputs may get further ahead after a restart: a read may be refused, never served wrong.",
            draw=draw_history_beyond_the_bound,
            check=intrinsic(_never_wrong),
            events=events_beyond_the_bound,
        ),
    ),
    default_impl="spark",
    reference=Reference.INTRINSIC,
    required_events=(
        "a dataflow expires",
        "expiration dropped diffs",
        "an input ahead moves the expiration",
        "input ahead of the wall clock",
        "input one tick ahead (minted)",
        "input behind the wall clock",
        "refresh schedule bounds an expiration",
        "subscribe UP TO keeps its until",
        "maintained dataflow without expiration",
        "a dataflow over a ticking non-epoch source",
        "read served after a restart",
        "read with data after a restart",
        "an input gets further ahead after a restart",
        "frontier passes the expiration",
        READ_AT,
        READ_BEFORE,
        LAST_WALL,
        DIFF_AT,
        DIFF_BEFORE,
        UP_TO_AT,
        REFRESH_AT,
        THIRD,
        FRONTIER_AT,
    ),
    domains=("total",),
)
