"""The TTL store: WAL -> memtable -> L0 SSTs -> sorted runs, with expiry and compaction.

Every write reads the clock, gets the next sequence number, is appended to the
current WAL segment and lands in the memtable; `flush` writes the memtable as
the newest L0 SST (and truncates the WAL); `compact` merges a contiguous span of
sources (L0 SSTs newest first, then sorted runs newest first; choice: a sorted
run is one SST) into one sorted run with the pure `compact_runs`. Reads return a
key's newest version unless it is a tombstone or expired at the clock's now,
and never look past it.

The clock. Every operation (put, delete, get, scan, flush, compact, periodic)
reads the clock once, first, even one with nothing to do (choice: so whether an
operation is refused for a clock regression never depends on the store's
shape); a reading below the floor refuses it and changes nothing. Compaction
runs at its own reading, which the output SST and the manifest record, so a
quiet store (no writes, no flushes, the clock moving on) still turns expired
rows into tombstones by periodic compaction. `crash` keeps the manifest, the WAL
and the clock's durable high-water mark (the largest reading handed out, reads
included); `open` replays the WAL and seeds the floor from all three.

What that promises across crashes: a row that any read or compaction saw
expired never becomes readable again. A reopened store hands out no reading
below one it handed out before the crash, so until the user clock is back at
that mark every operation is refused with `ClockRegression`. (The seed seeds
only from written timestamps, the manifest and the WAL; a read at 10 of a row
that expired at 5, written at 0, then a restart with the clock at 3 would show
the row again. The mark is our addition.)

Each rule is one small module-level function so that a test can replace it:
`effective_ttl`, `hidden_on_read`, `expired_for_compaction`, `ttl_filter`,
`drop_tombstones`, `compaction_now`, `seed_sources`.

>>> from frontier_harness.model.ttl.clock import ManualClock
>>> clock = ManualClock(0)
>>> store = TtlStore.open(clock, StoreOptions(periodic_compaction_interval=10))
>>> store.put(b"a", b"1", ttl=5); store.flush(); clock.set(1000)
>>> store.periodic_compact(), store.manifest.sources, store.manifest.timestamp
(('sst-0',), (), 1000)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import attrs

from frontier_harness.model.errors import BadCompaction, InvalidRow, InvalidTtl
from frontier_harness.model.ttl.clock import Clock, MonotonicClock, seed_floor
from frontier_harness.model.ttl.codec import SstInfo, check_sizes
from frontier_harness.model.ttl.row import Row, check_ttl, expire_ts_for, is_expired


def _check_default_ttl(_inst: object, _attr: object, value: int | None) -> None:
    """attrs validator: a default TTL is None or a positive i64."""
    if value is not None:
        check_ttl(value)


def _check_interval(_inst: object, _attr: object, value: int | None) -> None:
    """attrs validator: a periodic compaction interval is None or a non-negative int."""
    if value is not None and (not isinstance(value, int) or value < 0):
        raise InvalidTtl(
            value, "a periodic compaction interval must be a non-negative number of milliseconds"
        )


@attrs.frozen
class StoreOptions:
    """`default_ttl` (ms, None: rows never expire unless a write says so) and the
    periodic compaction interval (ms, None: periodic compaction disabled).

    >>> StoreOptions(default_ttl=-1)
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidTtl: invalid ttl -1: a ttl must be a positive signed 64-bit number of milliseconds
    """

    default_ttl: int | None = attrs.field(default=None, validator=_check_default_ttl)
    periodic_compaction_interval: int | None = attrs.field(default=None, validator=_check_interval)


@attrs.frozen
class Sst:
    """A named SST: metadata and rows with strictly increasing keys (one version per key).

    >>> Sst.build("sst-0", [Row.value_row(b"b", b"", 2, 4), Row.value_row(b"a", b"", 1, 3)], 5).find(b"b").seq
    2
    """

    name: str
    info: SstInfo
    rows: tuple[Row, ...]

    @classmethod
    def build(cls, name: str, rows: Iterable[Row], creation_timestamp: int) -> Sst:
        """An SST of `rows` (distinct keys, any order), created at `creation_timestamp`.

        >>> Sst.build("sst-1", [], 7).info.creation_timestamp
        7
        """
        ordered = tuple(sorted(rows, key=lambda r: r.key))
        return cls(name, SstInfo.for_rows(ordered, creation_timestamp), ordered)

    def find(self, key: bytes) -> Row | None:
        """The row for `key`, or None.

        >>> Sst.build("sst-2", [], 0).find(b"x") is None
        True
        """
        i = bisect.bisect_left(self.rows, key, key=lambda r: r.key)
        return self.rows[i] if i < len(self.rows) and self.rows[i].key == key else None


@attrs.frozen
class WalSegment:
    """One WAL segment: the rows written, in order, by one session since the last flush.

    >>> WalSegment(0).append(Row.value_row(b"k", b"v", 1, 9)).max_ts
    9
    """

    id: int
    rows: tuple[Row, ...] = ()

    def append(self, row: Row) -> WalSegment:
        """This segment with `row` appended.

        >>> len(WalSegment(0).append(Row.tombstone_row(b"k", 1, 2)).rows)
        1
        """
        return attrs.evolve(self, rows=self.rows + (row,))

    @property
    def max_ts(self) -> int | None:
        """The largest clock reading written in this segment, None if it is empty.

        >>> WalSegment(3).max_ts is None
        True
        """
        return max((r.create_ts for r in self.rows if r.create_ts is not None), default=None)


@attrs.frozen
class Manifest:
    """The durable LSM shape: L0 SSTs and sorted runs (newest first), the clock reading
    of the newest commit (a flush or a compaction: `timestamp`), the last flushed sequence number.

    >>> Manifest().sources, Manifest().timestamp
    ((), None)
    """

    l0: tuple[Sst, ...] = ()
    runs: tuple[Sst, ...] = ()
    timestamp: int | None = None
    last_seq: int = 0
    next_sst: int = 0

    @property
    def sources(self) -> tuple[Sst, ...]:
        """Every SST, newest first: L0 then sorted runs; the last one is the last (oldest) run.

        >>> Manifest().sources
        ()
        """
        return self.l0 + self.runs


@attrs.frozen
class Durable:
    """What survives a crash: the manifest, the WAL segments and the clock's high-water
    mark (the largest reading handed out, None before any); the memtable does not.

    >>> Durable().wal, Durable().clock_mark
    ((), None)
    """

    manifest: Manifest = Manifest()
    wal: tuple[WalSegment, ...] = ()
    clock_mark: int | None = None


def effective_ttl(ttl: int | None, default_ttl: int | None) -> int | None:
    """Rule: an explicit TTL wins; the store's default applies only when none is given.

    >>> effective_ttl(5, 100), effective_ttl(None, 100)
    (5, 100)
    """
    return ttl if ttl is not None else default_ttl


def hidden_on_read(row: Row, now: int) -> bool:
    """Rule: a read hides a key whose newest version is a tombstone or expired at `now`.

    >>> hidden_on_read(Row.value_row(b"k", b"v", 1, 0, 10), 10)
    True
    """
    return row.is_tombstone or is_expired(row.expire_ts, now)


def expired_for_compaction(row: Row, now: int) -> bool:
    """Rule: the compaction filter acts on a value expired at `now` (the same predicate as reads).

    >>> expired_for_compaction(Row.value_row(b"k", b"v", 1, 0, 10), 9)
    False
    """
    return not row.is_tombstone and is_expired(row.expire_ts, now)


def ttl_filter(rows: Sequence[Row], now: int) -> tuple[Row, ...]:
    """Rule: the TTL compaction filter turns expired values into tombstones, never drops them
    (dropping would expose an older version in a lower run).

    >>> ttl_filter([Row.value_row(b"k", b"v", 1, 0, 10)], 10)[0].is_tombstone
    True
    """
    return tuple(r.as_tombstone() if expired_for_compaction(r, now) else r for r in rows)


def drop_tombstones(rows: Sequence[Row], is_last_run: bool) -> tuple[Row, ...]:
    """Rule: tombstones are dropped only when writing the last (oldest) run.

    >>> rows = [Row.tombstone_row(b"k", 1, 0)]
    >>> len(drop_tombstones(rows, False)), len(drop_tombstones(rows, True))
    (1, 0)
    """
    return tuple(r for r in rows if not r.is_tombstone) if is_last_run else tuple(rows)


def newest_per_key(runs: Iterable[Iterable[Row]]) -> tuple[Row, ...]:
    """The version with the largest `seq` of every key in `runs`, in key order.

    >>> runs = [[Row.value_row(b"k", b"x", 1, 0)], [Row.value_row(b"k", b"y", 4, 0)]]
    >>> [r.seq for r in newest_per_key(runs)]
    [4]
    """
    newest: dict[bytes, Row] = {}
    for run in runs:
        for row in run:
            if row.key not in newest or newest[row.key].seq < row.seq:
                newest[row.key] = row
    return tuple(newest[k] for k in sorted(newest))


def compact_runs(runs: Sequence[Sequence[Row]], now: int, is_last_run: bool) -> tuple[Row, ...]:
    """Compaction of `runs` into one run: newest version per key, TTL filter at `now`,
    tombstones dropped iff the output is the last run. Pure; the Spark job's oracle.

    >>> old = [Row.value_row(b"a", b"1", 1, 0), Row.value_row(b"b", b"2", 2, 0, 5)]
    >>> new = [Row.tombstone_row(b"a", 3, 1)]
    >>> [(r.key, r.value, r.seq, r.create_ts) for r in compact_runs([new, old], now=5, is_last_run=False)]
    [(b'a', None, 3, 1), (b'b', None, 2, 0)]
    """
    return drop_tombstones(ttl_filter(newest_per_key(runs), now), is_last_run)


def compaction_now(reading: int, last_flush: int | None) -> int:
    """Rule: a compaction runs at the clock's `reading` taken for it, never at the newest
    flush's (`last_flush`: what SlateDB's code passes as `compaction_clock_tick`), with which a
    quiet store would never expire a row by compaction.

    >>> compaction_now(1000, last_flush=0)
    1000
    """
    return reading


def seed_sources(durable: Durable) -> tuple[int, ...]:
    """Rule: the timestamps that seed a reopened clock: the seed's, the manifest's AND every WAL
    segment's largest (the manifest alone misses writes after the last flush), and the clock's
    high-water mark (ours: the written timestamps miss readings that only reads took).

    >>> wal = (WalSegment(0, (Row.value_row(b"k", b"", 1, 8),)),)
    >>> seed_sources(Durable(Manifest(timestamp=3), wal, clock_mark=9))
    (3, 8, 9)
    """
    stamps = (durable.manifest.timestamp,) + tuple(s.max_ts for s in durable.wal) + (durable.clock_mark,)
    return tuple(t for t in stamps if t is not None)


def compaction_span(sources: Sequence[Sst], n_l0: int, names: Sequence[str]) -> tuple[int, int]:
    """First and last index (in `sources`, newest first) of the SSTs `names`, which must be
    a contiguous span; a span that takes an L0 SST must take every older L0 SST too.

    >>> compaction_span([Sst.build(n, [], 0) for n in "abc"], 2, ["b", "c"])
    (1, 2)
    """
    index = {s.name: k for k, s in enumerate(sources)}
    unknown = [n for n in names if n not in index]
    if not names or unknown:
        raise BadCompaction(list(names), f"unknown or no SSTs {unknown}; sources are {list(index)}")
    picked = sorted(index[n] for n in names)
    i, j = picked[0], picked[-1]
    if picked != list(range(i, j + 1)):
        raise BadCompaction(list(names), "not a contiguous span of sources (each named once)")
    if i < n_l0 and j < n_l0 - 1:
        raise BadCompaction(list(names), "L0 SSTs must be compacted with every older L0 SST")
    return i, j


def periodic_selection(sources: Sequence[Sst], n_l0: int, now: int, interval: int) -> tuple[str, ...]:
    """SSTs periodic compaction takes: the span covering every SST with TTL rows created more
    than `interval` ms before `now` (choice: strictly more), widened to the oldest L0 SST.

    >>> old = Sst.build("old", [Row.value_row(b"k", b"", 1, 0, 50)], 0)
    >>> periodic_selection([old], 0, now=11, interval=10), periodic_selection([old], 0, now=10, interval=10)
    (('old',), ())
    """
    picked = [
        k for k, s in enumerate(sources) if s.info.has_ttl and now - s.info.creation_timestamp > interval
    ]
    if not picked:
        return ()
    i, j = picked[0], picked[-1]
    if i < n_l0:
        j = max(j, n_l0 - 1)
    return tuple(s.name for s in sources[i : j + 1])


def check_bytes(field: str, value: object) -> bytes:
    """A key or value must be `bytes`.

    >>> check_bytes("key", "k")
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidRow: invalid row key ('k'): expected bytes
    """
    if not isinstance(value, bytes):
        raise InvalidRow(field, value, "expected bytes")
    return value


@attrs.define
class TtlStore:
    """The store. Mutable (it owns a clock and a memtable); everything it persists is a value.

    >>> from frontier_harness.model.ttl.clock import ManualClock
    >>> s = TtlStore.open(ManualClock(1)); s.put(b"k", b"v"); s.delete(b"k"); s.get(b"k") is None
    True
    """

    options: StoreOptions
    clock: MonotonicClock
    manifest: Manifest
    wal: tuple[WalSegment, ...]
    memtable: dict[bytes, Row]

    @classmethod
    def open(
        cls, clock: Clock, options: StoreOptions = StoreOptions(), durable: Durable = Durable()
    ) -> TtlStore:
        """Opens `durable` (default: empty): replays every WAL segment into the memtable, seeds
        the clock floor from `seed_sources`, and starts a new WAL segment. Reads no clock.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(0), durable=Durable(clock_mark=7)).clock.floor
        7
        """
        memtable = {row.key: row for segment in durable.wal for row in segment.rows}
        next_id = durable.wal[-1].id + 1 if durable.wal else 0
        floor = seed_floor(seed_sources(durable))
        return cls(
            options,
            MonotonicClock(clock, floor),
            durable.manifest,
            durable.wal + (WalSegment(next_id),),
            memtable,
        )

    def now(self) -> int:
        """The clock's reading for one operation; `ClockRegression` below the floor (the mark).

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(4)).now()
        4
        """
        return self.clock.now()

    @property
    def last_seq(self) -> int:
        """The largest sequence number written so far (0 before any write).

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(0)).last_seq
        0
        """
        return max((r.seq for r in self.memtable.values()), default=self.manifest.last_seq)

    def put(self, key: bytes, value: bytes, ttl: int | None = None, *, expire_at: int | None = None) -> None:
        """Writes `value` at the clock's now; expires after `ttl` ms (default: the store's
        `default_ttl`) or at the absolute `expire_at` (in the past: expired at once). A re-put
        replaces the key's TTL.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(0)).put(b"k", b"v", ttl=0)
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.InvalidTtl: invalid ttl 0: a ttl must be a positive signed 64-bit number of milliseconds
        """
        check_sizes(len(check_bytes("key", key)), len(check_bytes("value", value)))
        now = self.now()
        chosen = effective_ttl(ttl, self.options.default_ttl) if expire_at is None else ttl
        self._write(Row.value_row(key, value, self.last_seq + 1, now, expire_ts_for(now, chosen, expire_at)))

    def delete(self, key: bytes) -> None:
        """Writes a tombstone for `key` at the clock's now.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> s = TtlStore.open(ManualClock(0)); s.delete(b"k"); s.memtable[b"k"].is_tombstone
        True
        """
        check_sizes(len(check_bytes("key", key)), 0)
        self._write(Row.tombstone_row(key, self.last_seq + 1, self.now()))

    def _write(self, row: Row) -> None:
        """Appends `row` to the current WAL segment, then to the memtable."""
        self.wal = self.wal[:-1] + (self.wal[-1].append(row),)
        self.memtable[row.key] = row

    def _layers(self) -> tuple[Iterable[Row], ...]:
        """Every place a version may live: the memtable, then every SST newest first."""
        return (self.memtable.values(),) + tuple(s.rows for s in self.manifest.sources)

    def get(self, key: bytes) -> bytes | None:
        """The value of `key`'s newest version at the clock's now, None if it is hidden.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> s = TtlStore.open(ManualClock(5)); s.put(b"k", b"v", expire_at=6); s.put(b"j", b"w", expire_at=5)
        >>> s.get(b"k"), s.get(b"j")
        (b'v', None)
        """
        now = self.now()
        versions = [self.memtable.get(key)] + [s.find(key) for s in self.manifest.sources]
        newest = newest_per_key([[v for v in versions if v is not None]])
        return None if not newest or hidden_on_read(newest[0], now) else newest[0].value

    def scan(self, start: bytes | None = None, end: bytes | None = None) -> list[tuple[bytes, bytes]]:
        """Visible `(key, value)` pairs with `start <= key < end` (None: unbounded), in key order.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> s = TtlStore.open(ManualClock(0)); s.put(b"b", b"2"); s.put(b"a", b"1"); s.scan()
        [(b'a', b'1'), (b'b', b'2')]
        """
        now = self.now()
        return [
            (r.key, r.value)
            for r in newest_per_key(self._layers())
            if r.value is not None
            and (start is None or start <= r.key)
            and (end is None or r.key < end)
            and not hidden_on_read(r, now)
        ]

    def flush(self) -> None:
        """Writes the memtable as the newest L0 SST, created at the clock's now (also the
        manifest's timestamp), and truncates the WAL. Nothing more when the memtable is empty.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> s = TtlStore.open(ManualClock(3)); s.put(b"k", b"v"); s.flush(); s.manifest.timestamp, s.memtable
        (3, {})
        """
        now = self.now()
        if not self.memtable:
            return
        sst = Sst.build(f"sst-{self.manifest.next_sst}", self.memtable.values(), now)
        self.manifest = attrs.evolve(
            self.manifest,
            l0=(sst,) + self.manifest.l0,
            timestamp=now,
            last_seq=self.last_seq,
            next_sst=self.manifest.next_sst + 1,
        )
        self.wal = (WalSegment(self.wal[-1].id + 1),)
        self.memtable = {}

    def source_names(self) -> tuple[str, ...]:
        """Names of every SST, newest first (L0, then sorted runs); compaction chooses among them.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(0)).source_names()
        ()
        """
        return tuple(s.name for s in self.manifest.sources)

    def compact(self, names: Sequence[str]) -> None:
        """Merges the contiguous span `names` (none: nothing to do) into one sorted run with
        `compact_runs` at the clock's now; tombstones are dropped iff the span reaches the last run.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(0)).compact(["sst-0"])
        Traceback (most recent call last):
        ...
        frontier_harness.model.errors.BadCompaction: cannot compact ['sst-0']: unknown or no SSTs ['sst-0']; sources are []
        """
        self._compact(names, self.now())

    def _compact(self, names: Sequence[str], reading: int) -> None:
        """`compact` at the clock `reading` already taken for it."""
        if not names:
            return
        sources, n_l0 = self.manifest.sources, len(self.manifest.l0)
        i, j = compaction_span(sources, n_l0, names)
        now = compaction_now(reading, self.manifest.timestamp)
        rows = compact_runs([s.rows for s in sources[i : j + 1]], now, is_last_run=j == len(sources) - 1)
        out = (Sst.build(f"sst-{self.manifest.next_sst}", rows, now),) if rows else ()
        self.manifest = attrs.evolve(
            self.manifest,
            l0=sources[: min(i, n_l0)],
            runs=sources[n_l0:i] + out + sources[j + 1 :],
            timestamp=now,
            next_sst=self.manifest.next_sst + 1,
        )

    def periodic_compact(self) -> tuple[str, ...]:
        """Compacts `periodic_selection` at the clock's now; returns the SSTs it took (none when
        periodic compaction is off).

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> TtlStore.open(ManualClock(0), StoreOptions(periodic_compaction_interval=10)).periodic_compact()
        ()
        """
        now, interval = self.now(), self.options.periodic_compaction_interval
        if interval is None:
            return ()
        names = periodic_selection(self.manifest.sources, len(self.manifest.l0), now, interval)
        self._compact(names, now)
        return names

    def crash(self) -> Durable:
        """What survives a crash now: the manifest, the WAL and the clock's mark; the memtable is lost.

        The mark is the wrapper's floor: every reading handed out was at most it, and (the model's
        steps being atomic) it was durable before any reading was used.

        >>> from frontier_harness.model.ttl.clock import ManualClock
        >>> s = TtlStore.open(ManualClock(4)); s.put(b"k", b"v"); d = s.crash()
        >>> len(d.wal[-1].rows), d.clock_mark
        (1, 4)
        """
        return Durable(self.manifest, self.wal, self.clock.floor)
