"""The *ttl* suite: a TTL store's reads equal a store without flushes, compaction or crashes.

Histories: `frontier_harness.properties.checks.ttl.strategies.store.draw_ttl_history`. After every step the
observation is every key's `get`, the full `scan`, the typed error the step
raised, if any, and two audits of what the store keeps on disk. The expected
side (`observe`) is `frontier_harness.properties.checks.ttl.oracles.store.Reference`: the seed's rules
restated (when a put expires, `now < expire_ts` is readable, a clock that never
goes back, not even across a crash), never the model's own. So an equal
observation means TTL and compaction never change a read except that rows
disappear exactly when due, nothing deleted or expired comes back (not even
after a crash with the user clock set back: the store's clock mark is durable),
every operation reads the clock once, and compaction does reclaim:

- `expired value kept by compaction`: values in sorted runs already expired at
  their run's creation (the compaction's now); the reference has none;
- `expired value left by periodic compaction`: after a periodic compaction at
  `now`, values expired at `now` in SSTs more than the interval old; none, since
  periodic compaction takes every such SST and runs at the clock's now (a quiet
  store, with no writes after a flush, still reclaims its expired rows).

Required hard cases (docs/required-events.md): reads at `expire_ts` and one before it,
`expire_at == now` and at the i64 limits, a TTL that saturates, explicit options under a
default TTL, a key re-written with other options (and its newest version expired over a
readable older one), the clock set back to exactly its mark, a crash right after each
kind of durable write, two sessions' writes then another crash, and a periodic compaction
with an SST exactly `interval` old (not yet due). Not reachable: a crash *inside* a flush
or a compaction (between its SST write and its manifest write): the vocabulary crashes
between operations, and neither store exposes a crash point there.

The implementation side is the store itself: `observe_store` runs the model's
`TtlStore` (its scan read as two bounded halves, split at a key), `frontier_harness.spark_impl.ttl.store_observer` the Parquet store on Spark (the
default implementation: every history of a batch in a few Spark jobs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from frontier_harness.model.errors import ModelError
from frontier_harness.model.ttl.clock import ManualClock
from frontier_harness.model.ttl.store import Sst, StoreOptions, TtlStore
from frontier_harness.model.vocabulary.ttl import (
    StoreAction,
    StoreArg,
    StoreHistory,
    StoreLabel,
    StoreStep,
    store_history,
)
from frontier_harness.properties.checks.ttl.oracles.store import Reference, readable
from frontier_harness.properties.checks.ttl.strategies.store import KEYS, draw_ttl_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Suite, differential
from frontier_harness.properties.engine.suite import Reference as Judged

KEY_BYTES = tuple(k.encode() for k in KEYS)
KEPT, LEFT = StoreLabel.KEPT, StoreLabel.LEFT
Reads = tuple[dict[bytes, bytes | None], list[tuple[bytes, bytes]]]
Audit = Callable[[StoreStep, bool], dict[str, frozenset]]


def options_of(history: StoreHistory) -> StoreOptions:
    """The model store's options for the history (none opened: the defaults)."""
    return StoreOptions(default_ttl=history.default_ttl, periodic_compaction_interval=history.interval)


class ReferenceRun:
    """The oracle driven by history actions: flush, compaction and crash change no read."""

    def __init__(self, history: StoreHistory):
        self.ms, self.ref = 0, Reference(history.default_ttl)

    def apply(self, step: StoreStep) -> None:
        if step.action is StoreAction.PUT:
            assert step.key is not None and step.value is not None  # a put's arguments (`StoreStep.of`)
            self.ref.put(self.ms, step.key, step.value, step.ttl, step.expire_at)
        elif step.action is StoreAction.DELETE:
            assert step.key is not None
            self.ref.delete(self.ms, step.key)
        elif step.action in (StoreAction.FLUSH, StoreAction.COMPACT, StoreAction.PERIODIC):
            self.ref.operation(self.ms)
        self.ms = step.clock_after(self.ms)

    def reads(self) -> Reads:
        visible = self.ref.visible(self.ms)
        return {k: visible.get(k) for k in KEY_BYTES}, sorted(visible.items())


def record(observed: Observation, step: int, read: Callable[[], Reads]) -> None:
    """Adds the step's reads (`get` per key, `scan` in order), or the typed error reading raised."""
    try:
        gets, scan = read()
    except ModelError as error:
        observed[(step, StoreLabel.GET)] = observed[(step, StoreLabel.SCAN)] = frozenset(
            {(type(error).__name__,)}
        )
        return
    observed[(step, StoreLabel.GET)] = frozenset(
        (k.decode(), None if v is None else v.decode()) for k, v in gets.items()
    )
    observed[(step, StoreLabel.SCAN)] = frozenset(
        (i, k.decode(), v.decode()) for i, (k, v) in enumerate(scan)
    )


def run_observed(
    history: StoreHistory,
    apply: Callable[[StoreStep], Any],
    read: Callable[[], Reads],
    audit: Audit = lambda step, failed: {},
) -> Observation:
    """Records the reads after `open` (if the history has one), then applies every other step; after
    each records its error (if any), its reads, and what `audit(step, failed)` finds (the reference
    finds nothing)."""
    observed: Observation = {}
    if history.opened:
        record(observed, 0, read)
    for step in history.steps:
        failed = False
        try:
            apply(step)
        except ModelError as error:
            observed[(step.step, StoreLabel.ERROR)] = frozenset({(type(error).__name__,)})
            failed = True
        record(observed, step.step, read)
        for label, found in audit(step, failed).items():
            if found:
                observed[(step.step, label)] = found
    return observed


def observe(history: History) -> Observation:
    """The expected observations: the reference's reads after every step, and its errors."""
    decoded = store_history(history)
    ref = ReferenceRun(decoded)
    return run_observed(decoded, ref.apply, ref.reads)


def kept_by_compaction(runs: Sequence[Sst]) -> frozenset:
    """Keys of values in sorted runs that were expired at their run's creation.

    >>> from frontier_harness.model.ttl.row import Row
    >>> kept_by_compaction([Sst.build("r", [Row.value_row(b"k", b"v", 1, 0, 5)], 5)])
    frozenset({('k',)})
    """
    return frozenset(
        (r.key.decode(),)
        for run in runs
        for r in run.rows
        if r.value is not None and not readable(r.expire_ts, run.info.creation_timestamp)
    )


def left_by_periodic(sources: Sequence[Sst], now: int, interval: int) -> frozenset:
    """Keys of values expired at `now` in SSTs created more than `interval` before `now`.

    >>> from frontier_harness.model.ttl.row import Row
    >>> left_by_periodic([Sst.build("l0", [Row.value_row(b"k", b"v", 1, 0, 5)], 0)], 11, 10)
    frozenset({('k',)})
    """
    return frozenset(
        (r.key.decode(),)
        for sst in sources
        if now - sst.info.creation_timestamp > interval
        for r in sst.rows
        if r.value is not None and not readable(r.expire_ts, now)
    )


class ModelStore:
    """The model's `TtlStore` driven by history actions (crash = reopen from what survives)."""

    def __init__(self, options: StoreOptions):
        self.options, self.user = options, ManualClock(0)
        self.store = TtlStore.open(self.user, options)

    def apply(self, step: StoreStep) -> None:
        store = self.store
        if step.action is StoreAction.PUT:
            assert step.key is not None and step.value is not None  # a put's arguments (`StoreStep.of`)
            store.put(step.key, step.value, step.ttl, expire_at=step.expire_at)
        elif step.action is StoreAction.DELETE:
            assert step.key is not None
            store.delete(step.key)
        elif step.action is StoreAction.FLUSH:
            store.flush()
        elif step.action is StoreAction.COMPACT:
            store.compact(step.span(store.source_names(), len(store.manifest.l0)))
        elif step.action is StoreAction.PERIODIC:
            store.periodic_compact()
        elif step.action is StoreAction.CRASH:
            self.store = TtlStore.open(self.user, self.options, store.crash())
        self.user.set(step.clock_after(self.user.ms))

    def reads(self) -> Reads:
        """Every key's `get`, and the full scan read as two bounded halves split at the middle key
        (`scan(None, k) + scan(k, None)`), so a bound that drops or repeats `k` shows."""
        split = KEY_BYTES[len(KEY_BYTES) // 2]
        return {k: self.store.get(k) for k in KEY_BYTES}, self.store.scan(end=split) + self.store.scan(split)

    def audit(self, step: StoreStep, failed: bool) -> dict[str, frozenset]:
        """Both audits of the store's SSTs; the periodic one after a periodic compaction that ran."""
        found: dict[str, frozenset] = {KEPT: kept_by_compaction(self.store.manifest.runs)}
        interval = self.options.periodic_compaction_interval
        if step.action is StoreAction.PERIODIC and not failed and interval is not None:
            found[LEFT] = left_by_periodic(self.store.manifest.sources, self.user.ms, interval)
        return found


def observe_store(history: History) -> Observation:
    """The model store's observations (what `--impl model` answers for `observe_ttl`)."""
    decoded = store_history(history)
    store = ModelStore(options_of(decoded))
    return run_observed(decoded, store.apply, store.reads, store.audit)


AT_EXPIRY, BEFORE_EXPIRY = "read at expire_ts == now", "read at expire_ts - 1 == now"
EXPIRE_AT_NOW = "put with expire_at == now"
EXPIRE_AT_LIMIT = "put with expire_at at an i64 limit"
SATURATES = "ttl saturates at i64 max"
EXPIRE_AT_DEFAULT, TTL_DEFAULT = (
    "put with expire_at under a default TTL",
    "put with a ttl under a default TTL",
)
REWRITE = "key re-written with other TTL options"
OLDER_READABLE = "newest version expired while an older one would still be readable"
AT_MARK = "clock set back to exactly the largest reading"
SESSIONS = "writes of a second session, then another crash"
EXACT_INTERVAL = "periodic compaction with an SST exactly interval old"
DURABLE = (StoreAction.PUT, StoreAction.DELETE, StoreAction.FLUSH, StoreAction.COMPACT, StoreAction.PERIODIC)
CRASH_AFTER = tuple(f"crash right after a {op}" for op in DURABLE)
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def events(history: History) -> list[str]:
    """Hard cases the history reaches, found by running the model store step by step."""
    found: set[str] = set()
    decoded = store_history(history)
    _scan_events(decoded, found)
    return sorted(found | _boundary_events(decoded))


def _boundary_events(history: StoreHistory) -> set[str]:
    """The rule's edges, from the reference alone: exact expiries, i64 limits, options, sessions."""
    found, ref, default = set(), ReferenceRun(history), history.default_ttl
    versions: dict[bytes, list[int | None]] = {}  # every version's expire_ts (None: a delete), oldest first
    kinds: dict[
        bytes, StoreArg | None
    ] = {}  # how each key's newest put expires: expire_at, ttl, or by default
    last, moved, crashed, wrote = None, False, False, False
    for step in history.steps:
        name, now = step.action, ref.ms
        if name == StoreAction.CRASH:
            found |= {f"crash right after a {last}"} if last in DURABLE else set()
            found |= {SESSIONS} if crashed and wrote else set()
            crashed, wrote = True, False
        if name in DURABLE and moved and ref.ref.clock.largest == now:
            found.add(AT_MARK)
        try:
            ref.apply(step)
        except ModelError:
            continue
        if name == StoreAction.PUT and step.key is not None:
            found |= _put_events(step, now, default, kinds)
            versions.setdefault(step.key, []).append(ref.ref.rows[step.key][1])
        elif name == StoreAction.DELETE and step.key is not None:
            versions.setdefault(step.key, []).append(None)
        wrote |= name in (StoreAction.PUT, StoreAction.DELETE)
        last = name if name in (*DURABLE, StoreAction.CRASH) else last
        moved = name in (StoreAction.SET_CLOCK, StoreAction.CRASH) or (moved and name == StoreAction.TICK)
        found |= _read_events(versions, ref.ms)
    return found


def _put_events(
    put: StoreStep, now: int, default: int | None, kinds: dict[bytes, StoreArg | None]
) -> set[str]:
    kind = StoreArg.EXPIRE_AT if put.expire_at is not None else StoreArg.TTL if put.ttl is not None else None
    found, key = set(), put.key
    assert key is not None
    if kinds.get(key, kind) != kind:
        found.add(REWRITE)
    kinds[key] = kind
    if put.expire_at is not None:
        found |= {EXPIRE_AT_NOW} if put.expire_at == now else set()
        found |= {EXPIRE_AT_LIMIT} if put.expire_at in (I64_MIN, I64_MAX) else set()
        found |= {EXPIRE_AT_DEFAULT} if default is not None else set()
    elif put.ttl is not None:
        found |= {SATURATES} if now + put.ttl > I64_MAX else set()
        found |= {TTL_DEFAULT} if default is not None else set()
    return found


def _read_events(versions: dict[bytes, list[int | None]], now: int) -> set[str]:
    found = set()
    for expiries in versions.values():
        newest = expiries[-1]
        if newest is not None and newest == now:
            found.add(AT_EXPIRY)
        if newest is not None and newest - 1 == now:
            found.add(BEFORE_EXPIRY)
        if newest is not None and now >= newest and any(e is not None and now < e for e in expiries[:-1]):
            found.add(OLDER_READABLE)
    return found


def _scan_events(history: StoreHistory, found: set[str]) -> None:
    model, ref = ModelStore(options_of(history)), ReferenceRun(history)
    for step in history.steps:
        store, now = model.store, ref.ms
        if step.action is StoreAction.CRASH:
            _crash_events(store, ref, step, found)
        quiet = not store.memtable and (store.manifest.timestamp or 0) < now
        expired_before = _expired_values(store, now)
        refused = False
        for fn in (model.apply, ref.apply):
            try:
                fn(step)
            except ModelError as error:
                found.add(f"{type(error).__name__} refused")
                refused = True
        for read in (model.reads, ref.reads):  # every step ends with reads, as in `run_observed`
            with contextlib.suppress(ModelError):
                read()
        if refused:
            continue
        if step.action is StoreAction.PUT and step.expire_at is not None and step.expire_at < now:
            found.add("put with expire_at in the past")
        if (
            step.action is StoreAction.PERIODIC
            and quiet
            and _expired_values(model.store, now) < expired_before
        ):
            found.add("periodic compaction reclaimed an expired row in a quiet store")
        if step.action is StoreAction.PERIODIC and _exactly_due(
            store, now, model.options.periodic_compaction_interval
        ):
            found.add(EXACT_INTERVAL)
        _state_events(model.store, ref, found)


def _exactly_due(store: TtlStore, now: int, interval: int | None) -> bool:
    """Whether an SST is exactly `interval` old at `now` (the periodic rule's `>`: not yet due)."""
    return interval is not None and any(
        now - s.info.creation_timestamp == interval for s in store.manifest.sources
    )


def _crash_events(store: TtlStore, ref: ReferenceRun, crash: StoreStep, found: set[str]) -> None:
    if store.memtable:
        found.add("crash with unflushed WAL")
        flushed = store.manifest.timestamp
        if flushed is None or max(r.create_ts or 0 for r in store.memtable.values()) > flushed:
            found.add("crash with WAL writes newer than the manifest")
    written = [store.manifest.timestamp] + [r.create_ts for s in store.wal for r in s.rows]
    back = crash.clock_after(ref.ms)
    seeds = max((t for t in written if t is not None), default=None)
    largest = ref.ref.clock.largest
    seen_expired = largest is not None and any(
        v is not None and back < e <= largest for v, e in ref.ref.rows.values()
    )
    if seen_expired and (seeds is None or seeds <= back):  # the seed's rule alone would show it again
        found.add("crash, clock set back below a read that saw a row expire")


def _expired_values(store: TtlStore, now: int) -> int:
    return sum(
        1
        for s in store.manifest.sources
        for r in s.rows
        if r.value is not None and not readable(r.expire_ts, now)
    )


def _state_events(store: TtlStore, ref: ReferenceRun, found: set[str]) -> None:
    sources = store.manifest.sources
    n_l0 = len(store.manifest.l0)
    for k, sst in enumerate(sources):
        for row in sst.rows:
            if not row.is_tombstone:
                continue
            lower = [s.find(row.key) for s in sources[max(k + 1, n_l0) :]]
            if any(r is not None and not r.is_tombstone for r in lower):
                found.add("tombstone over an older version in a lower run")
                newest_put = ref.ref.rows.get(row.key, (None, 0))[0] is not None
                if newest_put and row.key not in store.memtable and row.seq == _newest_seq(store, row.key):
                    found.add("expired value tombstoned over an older version")


def _newest_seq(store: TtlStore, key: bytes) -> int:
    return max(r.seq for r in (s.find(key) for s in store.manifest.sources) if r is not None)


SUITE = Suite(
    name="ttl",
    doc="TTL store histories: every get and scan equals a store without compaction; compaction reclaims; "
    "no resurrection, not even across a crash; no clock regression.",
    properties=(
        Property(
            name="reads_match_store_without_compaction",
            doc="After every step every get and scan (and every refused step) equals the reference's; "
            "nothing expired is kept by compaction.",
            draw=draw_ttl_history,
            check=differential(observe, "observe_ttl"),
            events=events,
        ),
    ),
    default_impl="spark",
    reference=Judged.ORACLE,  # frontier_harness.properties.checks.ttl.oracles.store, never the model store
    batched_cost=3,  # a batch costs a Spark job per compaction its busiest history makes, plus one read
    serial_jobs=True,
    required_events=(
        AT_EXPIRY,
        BEFORE_EXPIRY,
        EXPIRE_AT_NOW,
        EXPIRE_AT_LIMIT,
        SATURATES,
        EXPIRE_AT_DEFAULT,
        TTL_DEFAULT,
        REWRITE,
        OLDER_READABLE,
        AT_MARK,
        SESSIONS,
        EXACT_INTERVAL,
        *CRASH_AFTER,
        "tombstone over an older version in a lower run",
        "expired value tombstoned over an older version",
        "crash with unflushed WAL",
        "crash with WAL writes newer than the manifest",
        "crash, clock set back below a read that saw a row expire",
        "ClockRegression refused",
        "put with expire_at in the past",
        "periodic compaction reclaimed an expired row in a quiet store",
    ),
    domains=("total",),
)
