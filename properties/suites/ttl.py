"""The *ttl* suite: a TTL store's reads equal a store without flushes, compaction or crashes.

Histories: `properties.strategies.ttl.draw_ttl_history`. After every step the
observation is every key's `get`, the full `scan`, and the typed error the step
raised, if any. The expected side (`observe`) is a reference built only from the
row rules (`is_expired`, `expire_ts_for`) and the monotonic clock: the newest
write per key, read at now. So an equal observation means TTL and compaction
never change a read except that rows disappear exactly when due, nothing deleted
or expired comes back, and after a reopen the clock accepts no reading below a
timestamp that was persisted (every write and every flush reading).

The implementation side is the store itself: `observe_store` runs the model's
`TtlStore` (ModelImplementation's `observe_ttl`), `spark_impl.ttl_store` the
Parquet store. Choice: default implementation `model` (thousands of histories a
second); the Spark store runs this suite in tests on a small profile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.errors import ModelError
from model.ttl.clock import ManualClock, MonotonicClock
from model.ttl.lsm import StoreOptions, TtlStore
from model.ttl.row import NEVER, expire_ts_for, is_expired
from properties.errors import BadHistory
from properties.history import History
from properties.strategies.ttl import KEYS, draw_ttl_history
from properties.suite import Observation, Property, Suite, differential

KEY_BYTES = tuple(k.encode() for k in KEYS)


def options_of(history: History) -> StoreOptions:
    """The store options of the history's leading `open` action."""
    if not history.actions or history.actions[0].name != "open":
        raise BadHistory("ttl history: the first action must be open")
    args = history.actions[0].args
    return StoreOptions(
        default_ttl=args.get("default_ttl"), periodic_compaction_interval=args.get("interval")
    )


def compaction_names(names: tuple, n_l0: int, start: int, length: int) -> tuple:
    """The span `compact(start, length)` takes: from `start % len(names)`, `length` more,
    widened to every older L0 SST (a valid span by construction); () if there are no sources.

    >>> compaction_names(("l0a", "l0b", "run"), 2, 0, 0)
    ('l0a', 'l0b')
    """
    if not names:
        return ()
    i = start % len(names)
    j = min(len(names) - 1, i + length)
    return names[i : max(j, n_l0 - 1) + 1] if i < n_l0 else names[i : j + 1]


class Reference:
    """The store without flushes, compaction or crashes: the newest write per key, read at now.

    The clock is a `MonotonicClock` that a crash reseeds from the largest timestamp
    persisted so far (every successful write and every flush of unflushed writes).
    """

    def __init__(self, options: StoreOptions):
        self.options, self.user = options, ManualClock(0)
        self.clock = MonotonicClock(self.user)
        self.rows: dict[bytes, tuple] = {}
        self.persisted: int | None = None
        self.unflushed = False

    def _persist(self, now: int) -> None:
        self.persisted = now if self.persisted is None else max(self.persisted, now)

    def apply(self, name: str, args: dict) -> None:
        if name == "put":
            now = self.clock.now()
            ttl, expire_at = args.get("ttl"), args.get("expire_at")
            chosen = self.options.default_ttl if ttl is None and expire_at is None else ttl
            self.rows[args["key"].encode()] = (args["value"].encode(), expire_ts_for(now, chosen, expire_at))
            self._persist(now)
            self.unflushed = True
        elif name == "delete":
            now = self.clock.now()
            self.rows[args["key"].encode()] = (None, NEVER)
            self._persist(now)
            self.unflushed = True
        elif name == "flush" and self.unflushed:
            self._persist(self.clock.now())
            self.unflushed = False
        elif name == "crash":
            self.clock = MonotonicClock(self.user, self.persisted)
        move_clock(self.user, name, args)

    def reads(self) -> tuple[dict, list]:
        now = self.clock.now()
        got = {k: None if v is None or is_expired(e, now) else v for k, (v, e) in self.rows.items()}
        gets = {k: got.get(k) for k in KEY_BYTES}
        return gets, [(k, got[k]) for k in sorted(got) if got[k] is not None]


def move_clock(user: ManualClock, name: str, args: dict) -> None:
    """`tick`, `set_clock` and `crash(ms)` move the user clock (the store sees it only through its wrapper)."""
    if name == "tick":
        user.set(user.ms + args["ms"])
    elif name in ("set_clock", "crash") and args.get("ms") is not None:
        user.set(args["ms"])


def record(observed: dict, step: int, read: Callable[[], tuple]) -> None:
    """Adds the step's reads (`get` per key, `scan` in order), or the typed error reading raised."""
    try:
        gets, scan = read()
    except ModelError as error:
        observed[(step, "get")] = observed[(step, "scan")] = frozenset({(type(error).__name__,)})
        return
    observed[(step, "get")] = frozenset(
        (k.decode(), None if v is None else v.decode()) for k, v in gets.items()
    )
    observed[(step, "scan")] = frozenset((i, k.decode(), v.decode()) for i, (k, v) in enumerate(scan))


def run_observed(
    history: History,
    apply: Callable[[str, dict], Any],
    read: Callable[[], tuple],
    audit: Callable[[], frozenset] = frozenset,
) -> Observation:
    """Applies every action after `open`; after each step records its error (if any), its reads,
    and what `audit` finds (the store's sorted-run values expired at their run's compaction now:
    the reference has none, so any is a compaction filter that disagrees with reads)."""
    observed: dict = {}
    record(observed, 0, read)
    for step, action in enumerate(history.actions[1:], start=1):
        if action.name not in ACTIONS:
            raise BadHistory(f"ttl history: unknown action {action.name!r} at step {step}")
        try:
            apply(action.name, action.args)
        except ModelError as error:
            observed[(step, "error")] = frozenset({(type(error).__name__,)})
        record(observed, step, read)
        kept = audit()
        if kept:
            observed[(step, "expired value kept by compaction")] = kept
    return observed


ACTIONS = ("put", "delete", "tick", "set_clock", "flush", "compact", "periodic", "crash")


def observe(history: History) -> Observation:
    """The expected observations: the reference's reads after every step, and its errors."""
    ref = Reference(options_of(history))
    return run_observed(history, ref.apply, ref.reads)


class ModelStore:
    """The model's `TtlStore` driven by history actions (crash = reopen from what survives)."""

    def __init__(self, options: StoreOptions):
        self.options, self.user = options, ManualClock(0)
        self.store = TtlStore.open(self.user, options)

    def apply(self, name: str, args: dict) -> None:
        store = self.store
        if name == "put":
            store.put(
                args["key"].encode(), args["value"].encode(), args.get("ttl"), expire_at=args.get("expire_at")
            )
        elif name == "delete":
            store.delete(args["key"].encode())
        elif name == "flush":
            store.flush()
        elif name == "compact":
            names = compaction_names(
                store.source_names(), len(store.manifest.l0), args["start"], args["length"]
            )
            if names:
                store.compact(names)
        elif name == "periodic":
            store.periodic_compact()
        elif name == "crash":
            self.store = TtlStore.open(self.user, self.options, store.crash())
        move_clock(self.user, name, args)

    def reads(self) -> tuple[dict, list]:
        return {k: self.store.get(k) for k in KEY_BYTES}, self.store.scan()

    def audit(self) -> frozenset:
        return frozenset(
            (r.key.decode(),)
            for run in self.store.manifest.runs
            for r in run.rows
            if not r.is_tombstone and is_expired(r.expire_ts, run.info.creation_timestamp)
        )


def observe_store(history: History) -> Observation:
    """The model store's observations (what `--impl model` answers for `observe_ttl`)."""
    store = ModelStore(options_of(history))
    return run_observed(history, store.apply, store.reads, store.audit)


def events(history: History) -> list[str]:
    """Hard cases the history reaches, found by running the model store step by step."""
    found: set = set()
    try:
        _scan_events(history, found)
    except ModelError:
        pass
    return sorted(found)


def _scan_events(history: History, found: set) -> None:
    model, ref = ModelStore(options_of(history)), Reference(options_of(history))
    for action in history.actions[1:]:
        store = model.store
        if action.name == "crash" and store.memtable:
            found.add("crash with unflushed WAL")
            flushed = store.manifest.timestamp
            if flushed is None or max(r.create_ts for r in store.memtable.values()) > flushed:
                found.add("crash with WAL writes newer than the manifest")
        for fn in (model.apply, ref.apply):
            try:
                fn(action.name, action.args)
            except ModelError as error:
                found.add(f"{type(error).__name__} refused")
        _state_events(model.store, ref, found)


def _state_events(store: TtlStore, ref: Reference, found: set) -> None:
    now = ref.user.ms
    if any(v is not None and e == now for v, e in ref.rows.values()):
        found.add("read at expire_ts == now")
    sources = store.manifest.sources
    n_l0 = len(store.manifest.l0)
    for k, sst in enumerate(sources):
        for row in sst.rows:
            if not row.is_tombstone:
                continue
            lower = [s.find(row.key) for s in sources[max(k + 1, n_l0) :]]
            if any(r is not None and not r.is_tombstone for r in lower):
                found.add("tombstone over an older version in a lower run")
                newest_put = ref.rows.get(row.key, (None,))[0] is not None and row.key not in store.memtable
                if newest_put and row.seq == _newest_seq(store, row.key):
                    found.add("expired value tombstoned over an older version")


def _newest_seq(store: TtlStore, key: bytes) -> int:
    return max(r.seq for r in (s.find(key) for s in store.manifest.sources) if r is not None)


SUITE = Suite(
    name="ttl",
    doc="TTL store histories: every get and scan equals a store without compaction; no resurrection; no clock regression.",
    properties=(
        Property(
            name="reads_match_store_without_compaction",
            doc="After every step every get and scan (and every refused step) equals the reference's.",
            draw=draw_ttl_history,
            check=differential(observe, "observe_ttl"),
            events=events,
        ),
    ),
    default_impl="model",
    required_events=(
        "read at expire_ts == now",
        "tombstone over an older version in a lower run",
        "expired value tombstoned over an older version",
        "crash with unflushed WAL",
        "crash with WAL writes newer than the manifest",
        "ClockRegression refused",
    ),
    domains=("total",),
)
