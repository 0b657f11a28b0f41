"""The TTL store: writes, expiry on read, compaction, crash and reopen.

The central check runs a history (plain data: a list of actions) on the store and on a
reference without flushes or compaction, built from the seed's rules as
`frontier_harness.properties.checks.ttl.oracles.store` restates them (not the model's), and after every step compares
every `get` and `scan`, checks that nothing deleted or expired comes back, and that no
sorted run holds a value already expired at its creation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.errors import BadCompaction, ClockRegression, InvalidRow, InvalidTtl
from frontier_harness.model.ttl import store as model_store
from frontier_harness.model.ttl.clock import ManualClock
from frontier_harness.model.ttl.row import I64_MAX, NEVER, Row, expire_ts_for
from frontier_harness.model.ttl.store import StoreOptions, TtlStore, compact_runs
from frontier_harness.properties.checks.ttl.oracles.store import expiry, readable

KEYS = (b"a", b"b", b"c")


class Reference:
    """The store without flushes or compaction: the newest write per key, read at now."""

    def __init__(self, default_ttl):
        self.default_ttl, self.rows = default_ttl, {}

    def put(self, now, key, value, ttl, expire_at):
        self.rows[key] = (value, expiry(now, ttl, expire_at, self.default_ttl))

    def delete(self, key):
        self.rows[key] = (None, NEVER)

    def get(self, now, key):
        value, expire_ts = self.rows.get(key, (None, NEVER))
        return None if value is None or not readable(expire_ts, now) else value


def apply(store, ref, clock, options, action):
    """Applies one action to the store and the reference; returns the (possibly reopened) store."""
    op = action["op"]
    if op == "put":
        key, value = action["key"].encode(), action["value"].encode()
        ttl, expire_at = action.get("ttl"), action.get("expire_at")
        store.put(key, value, ttl, expire_at=expire_at)
        ref.put(clock.ms, key, value, ttl, expire_at)
    elif op == "delete":
        store.delete(action["key"].encode())
        ref.delete(action["key"].encode())
    elif op == "tick":
        clock.set(clock.ms + action["ms"])
    elif op == "flush":
        store.flush()
    elif op == "compact":
        names, n_l0 = store.source_names(), len(store.manifest.l0)
        i = action["start"] % max(1, len(names))
        j = min(len(names) - 1, i + action["length"])
        store.compact(names[i : max(j, n_l0 - 1) + 1] if i < n_l0 else names[i : j + 1])
    elif op == "periodic":
        store.periodic_compact()
    elif op == "crash":
        store = TtlStore.open(clock, options, store.crash())
    return store


def first_divergence(actions, options=None):
    """Runs `actions`; returns (step, what, store's answer, expected) at the first problem, or None."""
    options = options or StoreOptions()
    clock = ManualClock(0)
    store, ref, gone = TtlStore.open(clock, options), Reference(options.default_ttl), set()
    for step, action in enumerate(actions):
        store = apply(store, ref, clock, options, action)
        if action["op"] == "put":
            gone.discard(action["key"].encode())
        expected = {k: ref.get(clock.ms, k) for k in KEYS}
        got = {k: store.get(k) for k in KEYS}
        if got != expected:
            return step, "get", got, expected
        if store.scan() != [(k, v) for k, v in expected.items() if v is not None]:
            return step, "scan", store.scan(), expected
        back = {k for k in gone if got[k] is not None}
        if back:
            return step, "resurrected", back, gone
        gone |= {k for k in KEYS if got[k] is None}
        for run in store.manifest.runs:
            if any(
                not r.is_tombstone and not readable(r.expire_ts, run.info.creation_timestamp)
                for r in run.rows
            ):
                return step, "expired value kept by compaction", run.name, run.info.creation_timestamp
    return None


def put(key, value="v", **kw):
    return {"op": "put", "key": key, "value": value, **kw}


def tick(ms):
    return {"op": "tick", "ms": ms}


FLUSH, PERIODIC, CRASH = {"op": "flush"}, {"op": "periodic"}, {"op": "crash"}
COMPACT_ALL = {"op": "compact", "start": 0, "length": 99}
COMPACT_NEWEST = {"op": "compact", "start": 0, "length": 0}  # L0 (all of it) or the newest run

BOUNDARY = [put("a", ttl=5), tick(4), FLUSH, tick(1), put("b"), FLUSH, COMPACT_ALL, tick(1)]
TOMBSTONE_OVER_LOWER_RUN = [
    put("a", "old"),
    FLUSH,
    COMPACT_ALL,
    {"op": "delete", "key": "a"},
    FLUSH,
    COMPACT_NEWEST,
    COMPACT_ALL,
]
EXPIRED_OVER_LOWER_RUN = [
    put("a", "old"),
    FLUSH,
    COMPACT_ALL,
    put("a", "new", ttl=2),
    FLUSH,
    tick(2),
    put("b"),
    FLUSH,
    COMPACT_NEWEST,
    COMPACT_ALL,
]
CRASH_WITH_UNFLUSHED_WAL = [
    put("a", ttl=3),
    FLUSH,
    put("b", ttl=1),
    {"op": "delete", "key": "a"},
    CRASH,
    tick(1),
    CRASH,
    put("c"),
    FLUSH,
    COMPACT_ALL,
    tick(5),
    CRASH,
]
DEFAULT_VS_EXPLICIT = [put("a", ttl=10), put("b"), tick(3), FLUSH, COMPACT_ALL, tick(5)]
REPUT_REPLACES_TTL = [
    put("a", ttl=2),
    FLUSH,
    tick(1),
    put("a", "again"),
    tick(5),
    put("b", ttl=100),
    FLUSH,
    put("b", ttl=1),
    tick(1),
    put("c"),
    FLUSH,
    COMPACT_ALL,
]
PERIODIC_HISTORY = [
    put("a", ttl=1),
    FLUSH,
    tick(3),
    put("b"),
    FLUSH,
    PERIODIC,
    tick(3),
    put("c"),
    FLUSH,
    PERIODIC,
]
ABSOLUTE_AND_NEVER = [
    put("a", expire_at=3),
    put("b", ttl=I64_MAX),
    tick(3),
    FLUSH,
    COMPACT_ALL,
    put("a", "back"),
    tick(1),
    put("c", expire_at=2),  # in the past: expired at once
    FLUSH,
    COMPACT_NEWEST,
]
QUIET_STORE = [put("a", ttl=5), put("b"), FLUSH, tick(1000), PERIODIC, COMPACT_ALL, tick(1)]

HISTORIES = {
    "boundary": (BOUNDARY, StoreOptions()),
    "tombstone over lower run": (TOMBSTONE_OVER_LOWER_RUN, StoreOptions()),
    "expired over lower run": (EXPIRED_OVER_LOWER_RUN, StoreOptions()),
    "crash with unflushed wal": (CRASH_WITH_UNFLUSHED_WAL, StoreOptions()),
    "default vs explicit": (DEFAULT_VS_EXPLICIT, StoreOptions(default_ttl=2)),
    "re-put replaces ttl": (REPUT_REPLACES_TTL, StoreOptions()),
    "periodic": (PERIODIC_HISTORY, StoreOptions(periodic_compaction_interval=2)),
    "absolute and never": (ABSOLUTE_AND_NEVER, StoreOptions()),
    "quiet store": (QUIET_STORE, StoreOptions(periodic_compaction_interval=10)),
}


@pytest.mark.parametrize("name", HISTORIES)
def test_ttl_and_compaction_never_change_a_read_except_expiry_when_due(name):
    actions, options = HISTORIES[name]
    assert first_divergence(actions, options) is None


# --- planted bugs: each rule replaced by a plausible wrong one is caught on a small history ---


def test_planted_lt_in_reads_is_caught(monkeypatch):
    monkeypatch.setattr(model_store, "hidden_on_read", lambda r, now: r.is_tombstone or r.expire_ts < now)
    step, what, got, expected = first_divergence(BOUNDARY)
    assert (step, what, got[b"a"], expected[b"a"]) == (3, "get", b"v", None)


def test_planted_lt_in_the_compaction_filter_is_caught(monkeypatch):
    monkeypatch.setattr(
        model_store, "expired_for_compaction", lambda r, now: not r.is_tombstone and r.expire_ts < now
    )
    history = [put("a", ttl=5), put("b"), tick(5), FLUSH, COMPACT_NEWEST]
    assert first_divergence(history)[1] == "expired value kept by compaction"


def test_planted_drop_of_expired_values_resurrects_the_older_version(monkeypatch):
    monkeypatch.setattr(
        model_store,
        "ttl_filter",
        lambda rows, now: tuple(r for r in rows if not model_store.expired_for_compaction(r, now)),
    )
    step, what, got, _ = first_divergence(EXPIRED_OVER_LOWER_RUN)
    assert what == "get" and got[b"a"] == b"old"


def test_planted_tombstone_drop_in_a_non_last_run_resurrects(monkeypatch):
    monkeypatch.setattr(
        model_store, "drop_tombstones", lambda rows, is_last_run: tuple(r for r in rows if not r.is_tombstone)
    )
    step, what, got, _ = first_divergence(TOMBSTONE_OVER_LOWER_RUN)
    assert (step, what, got[b"a"]) == (5, "get", b"old")


def test_planted_default_over_explicit_ttl_is_caught(monkeypatch):
    monkeypatch.setattr(
        model_store, "effective_ttl", lambda ttl, default: default if default is not None else ttl
    )
    step, what, got, expected = first_divergence(*HISTORIES["default vs explicit"])
    assert what == "get" and got[b"a"] is None and expected[b"a"] == b"v"


# --- random histories (fast, model only) ---

keys = st.sampled_from(["a", "b"])
writes = st.one_of(
    st.builds(put, keys, st.sampled_from(["x", "y"]), ttl=st.sampled_from([None, 1, 2])),
    st.builds(lambda k, e: put(k, expire_at=e), keys, st.integers(-1, 6)),
    st.builds(lambda k: {"op": "delete", "key": k}, keys),
    st.builds(tick, st.integers(0, 2)),
)
compact = st.builds(
    lambda s, n: {"op": "compact", "start": s, "length": n}, st.integers(0, 3), st.integers(0, 3)
)
ends = st.one_of(
    st.just([]), st.just([FLUSH]), compact.map(lambda c: [FLUSH, c]), st.just([PERIODIC]), st.just([CRASH])
)
# a history is blocks of a few writes and ticks, each ended by a flush, a compaction, a crash...
histories = st.lists(st.tuples(st.lists(writes, max_size=3), ends), max_size=8).map(
    lambda blocks: [a for block, end in blocks for a in block + end]
)
options = st.builds(
    StoreOptions,
    default_ttl=st.sampled_from([None, 2, 4]),
    periodic_compaction_interval=st.sampled_from([None, 0, 2]),
)


@settings(max_examples=300, deadline=None)
@given(histories, options)
def test_random_histories_agree_with_the_reference(history, opts):
    assert first_divergence(history, opts) is None


# --- writes ---


def _store(now=0, **options):
    clock = ManualClock(now)
    return clock, TtlStore.open(clock, StoreOptions(**options))


@pytest.mark.parametrize("ttl", [0, -1, 1.5, True, 2**63])
def test_bad_ttls_are_typed_errors_and_write_nothing(ttl):
    _, store = _store()
    with pytest.raises(InvalidTtl):
        store.put(b"k", b"v", ttl)
    assert store.memtable == {} and store.wal[-1].rows == ()


def test_expire_at_in_the_past_is_accepted_and_expired_at_once_but_not_with_a_ttl():
    _, store = _store(10)
    store.put(b"k", b"v", expire_at=10)
    store.put(b"j", b"v", expire_at=-3)
    store.put(b"i", b"v", expire_at=11)
    assert [store.memtable[k].expire_ts for k in (b"k", b"j", b"i")] == [10, -3, 11]
    assert store.scan() == [(b"i", b"v")]
    with pytest.raises(InvalidTtl, match="not both"):
        store.put(b"k", b"v", 5, expire_at=20)
    with pytest.raises(InvalidTtl, match="signed 64-bit"):
        store.put(b"k", b"v", expire_at=2**63)


def test_explicit_ttl_wins_and_expire_at_ignores_the_default():
    _, store = _store(10, default_ttl=3)
    store.put(b"a", b"v", 7)
    store.put(b"b", b"v")
    store.put(b"c", b"v", expire_at=100)
    assert [store.memtable[k].expire_ts for k in (b"a", b"b", b"c")] == [17, 13, 100]


def test_ttl_overflow_means_never_expires():
    _, store = _store(2**62)
    store.put(b"k", b"v", 2**62)
    assert store.memtable[b"k"].expire_ts == NEVER
    assert expire_ts_for(5, I64_MAX, None) == NEVER


def test_keys_and_values_are_checked_on_write():
    _, store = _store()
    with pytest.raises(InvalidRow, match="65536"):
        store.put(b"k" * 65536, b"v")
    with pytest.raises(InvalidRow, match="expected bytes"):
        store.put(b"k", "v")
    with pytest.raises(InvalidRow):
        store.delete("k")


def test_expired_exactly_at_expire_ts():
    clock, store = _store(0)
    store.put(b"k", b"v", 5)
    clock.set(4)
    assert store.get(b"k") == b"v"
    clock.set(5)
    assert store.get(b"k") is None and store.scan() == []


def test_scan_bounds_are_half_open():
    _, store = _store()
    for k in KEYS:
        store.put(k, k)
    assert store.scan(b"a", b"c") == [(b"a", b"a"), (b"b", b"b")]
    assert store.scan(start=b"b") == [(b"b", b"b"), (b"c", b"c")]


# --- LSM mechanics ---


def test_crash_drops_the_memtable_and_reopen_replays_the_wal():
    clock, store = _store(1)
    store.put(b"a", b"1")
    store.flush()
    store.put(b"b", b"2")
    durable = store.crash()
    assert [r.key for r in durable.wal[-1].rows] == [b"b"]
    store = TtlStore.open(clock, durable=durable)
    assert store.memtable[b"b"].seq == 2 and store.get(b"a") == b"1"
    store.put(b"c", b"3")
    assert store.memtable[b"c"].seq == 3
    assert [s.id for s in store.wal] == [1, 2]  # the replayed segment, then this session's
    store.flush()
    assert store.wal[-1].rows == () and len(store.wal) == 1 and store.manifest.last_seq == 3


def test_every_operation_reads_the_clock_even_with_nothing_to_do():
    clock, store = _store(5, periodic_compaction_interval=None)
    store.flush()
    assert store.manifest.l0 == () and store.clock.floor == 5
    clock.set(1)
    for operation in (store.flush, lambda: store.compact(()), store.periodic_compact, store.scan):
        with pytest.raises(ClockRegression, match="reading 1 is below the previous reading 5"):
            operation()


def test_compaction_runs_at_the_clock_and_its_output_and_the_manifest_record_it():
    clock, store = _store(0)
    store.put(b"b", b"v")
    store.flush()
    store.compact(store.source_names())  # the last run holds b
    store.put(b"a", b"v", 1)
    store.flush()  # no write or flush after t=0
    clock.set(50)
    store.compact(store.source_names()[:1])  # the L0 SST alone: not the last run
    out = store.manifest.runs[0]
    assert (out.info.creation_timestamp, store.manifest.timestamp) == (50, 50)
    assert out.find(b"a") == Row(b"a", None, 2, 0, NEVER)  # expired at 50: a tombstone


def test_a_quiet_store_reclaims_expired_rows_by_periodic_compaction():
    """Issue 17's case: put k with ttl 5 at 0, flush, the clock at 1000, interval 10."""
    clock, store = _store(0, periodic_compaction_interval=10)
    store.put(b"k", b"v", 5)
    store.flush()
    clock.set(1000)
    assert store.periodic_compact() == ("sst-0",)
    assert store.manifest.sources == () and store.manifest.timestamp == 1000


def test_the_filter_keeps_create_ts_clears_expiry_and_tombstones_survive_non_last_runs():
    clock, store = _store(0)
    store.put(b"a", b"old")
    store.flush()
    store.compact(store.source_names())  # the last run holds a=old
    clock.set(3)
    store.put(b"a", b"new", 2)
    store.flush()
    clock.set(5)
    store.put(b"b", b"x")
    store.flush()
    store.compact(store.source_names()[:2])  # both L0 SSTs, not the last run
    assert store.manifest.runs[0].find(b"a") == Row(b"a", None, 2, 3, NEVER)
    assert store.get(b"a") is None
    store.compact(store.source_names())
    assert store.manifest.runs[0].find(b"a") is None and store.get(b"a") is None


def test_a_compaction_with_nothing_left_writes_no_run():
    clock, store = _store(0)
    store.put(b"a", b"v", 1)
    store.flush()
    clock.set(1)
    store.delete(b"b")
    store.flush()
    store.compact(store.source_names())
    assert store.manifest.sources == ()


def test_compaction_spans_are_contiguous_and_take_every_older_l0_sst():
    clock, store = _store(0)
    for n in range(4):
        store.put(b"a", b"%d" % n)
        store.flush()
    store.compact(["sst-1", "sst-0"])  # the two oldest L0 SSTs become a run
    assert store.source_names() == ("sst-3", "sst-2", "sst-4")
    with pytest.raises(BadCompaction, match="every older L0 SST"):
        store.compact(["sst-3"])
    with pytest.raises(BadCompaction, match="contiguous"):
        store.compact(["sst-3", "sst-4"])
    with pytest.raises(BadCompaction, match="unknown"):
        store.compact(["sst-9"])
    store.compact(["sst-2"])
    assert store.source_names() == ("sst-3", "sst-5", "sst-4") and store.get(b"a") == b"3"
    store.compact(["sst-5", "sst-4"])  # two runs, in place below L0
    assert store.source_names() == ("sst-3", "sst-6") and store.get(b"a") == b"3"


def test_periodic_compaction_takes_only_old_ssts_with_ttl_rows():
    clock, store = _store(0, periodic_compaction_interval=2)
    store.put(b"a", b"v")
    store.flush()  # sst-0: no TTL rows
    store.put(b"b", b"v", 1)
    store.flush()  # sst-1: TTL rows, created at 0
    clock.set(2)
    store.put(b"c", b"v")
    store.flush()  # sst-2 at 2: sst-1 is 2 old, not more than the interval
    assert store.periodic_compact() == ()
    clock.set(3)
    store.put(b"d", b"v")
    store.flush()  # sst-3 at 3: sst-1 is now 3 old
    assert store.periodic_compact() == ("sst-1", "sst-0")  # widened to the oldest L0 SST
    assert store.source_names() == ("sst-3", "sst-2", "sst-4")
    assert store.manifest.runs[-1].find(b"b") is None  # expired and dropped in the last run
    assert store.periodic_compact() == ()


def test_periodic_compaction_is_off_without_an_interval():
    clock, store = _store(0)
    store.put(b"a", b"v", 1)
    store.flush()
    clock.set(100)
    store.put(b"b", b"v")
    store.flush()
    assert store.periodic_compact() == ()


# --- compact_runs, the Spark job's oracle ---


def test_compact_runs_takes_the_newest_version_by_seq_whatever_the_run_order():
    old = [Row.value_row(b"a", b"1", 1, 0), Row.value_row(b"b", b"2", 2, 0)]
    new = [Row.tombstone_row(b"a", 3, 1)]
    assert compact_runs([old, new], 0, False) == compact_runs([new, old], 0, False)
    assert compact_runs([new, old], 0, True) == (Row.value_row(b"b", b"2", 2, 0),)


def test_compact_runs_applies_the_filter_exactly_at_the_boundary():
    row = Row.value_row(b"a", b"1", 1, 0, 5)
    assert compact_runs([[row]], 4, False) == (row,)
    assert compact_runs([[row]], 5, False) == (Row(b"a", None, 1, 0, NEVER),)
    assert compact_runs([[row]], 5, True) == ()
