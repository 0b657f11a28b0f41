"""The TTL store on Spark: the driver holds the clock, the WAL, the memtable and the manifest;
SSTs live in Parquet segments, compaction and reads are Spark jobs.

Layout under `root`: `manifest.json` and `clock.json` (each replaced atomically),
`wal/<segment>.jsonl` (one line per write), and the segments (`segments/`, unless
the store is given a shared `Segments`, as the batched observer does). Every
operation reads the clock once, first, even one with nothing to do; compaction
runs at its own reading, which its output SST and the manifest record, so a
quiet store still reclaims expired rows by periodic compaction. On open the WAL
is replayed and the clock seeded from the manifest, the WAL and the durable mark
(`frontier_harness.spark_impl.ttl.clock`): a row any read or compaction saw expired stays hidden
across a crash.

Flush, compaction and periodic compaction are also available as generators of
I/O requests (`flushing`, `compacting`, `periodic_compacting`), so that many
stores can share segment files and Spark jobs (`frontier_harness.spark_impl.ttl.requests`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
from pyspark.sql import functions as F

from frontier_harness.spark_impl.ttl.clock import MonotonicClock
from frontier_harness.spark_impl.ttl.compaction import Compaction
from frontier_harness.spark_impl.ttl.files import append_line, read_json, write_json
from frontier_harness.spark_impl.ttl.manifest import Manifest, after_compaction, check_span, periodic_names
from frontier_harness.spark_impl.ttl.read import Snapshot, visible_rows
from frontier_harness.spark_impl.ttl.requests import Operation, drive
from frontier_harness.spark_impl.ttl.row import NEVER, TOMBSTONE, RowTuple, check_sizes, expire_ts_for
from frontier_harness.spark_impl.ttl.segments import Segments, SstRows

MANIFEST = "manifest.json"


def _record(row: RowTuple) -> str:
    key, value, seq, flags, create_ts, expire_ts = row
    hexed = None if value is None else value.hex()
    return json.dumps([key.hex(), hexed, seq, flags, create_ts, expire_ts])


def _row(line: str) -> RowTuple:
    key, value, seq, flags, create_ts, expire_ts = json.loads(line)
    return (
        bytes.fromhex(key),
        None if value is None else bytes.fromhex(value),
        seq,
        flags,
        create_ts,
        expire_ts,
    )


@attrs.define
class SparkTtlStore:
    """One store. Mutable: the clock's floor, the memtable, the manifest, the current WAL segment."""

    root: Path
    store: int
    segments: Segments
    clock: MonotonicClock
    default_ttl: int | None
    interval: int | None
    manifest: Manifest
    memtable: dict[bytes, RowTuple]
    wal_segment: int
    sync: bool

    @classmethod
    def open(
        cls,
        root: Path,
        clock: Callable[[], int],
        default_ttl: int | None = None,
        interval: int | None = None,
        *,
        segments: Segments | None = None,
        store: int = 0,
        sync: bool = True,
    ) -> SparkTtlStore:
        """Opens (or creates) the store in `root`: replays every WAL segment, seeds the clock's floor
        from the manifest's timestamp, every replayed row's and the durable mark. Reads no clock."""
        root = Path(root)
        (root / "wal").mkdir(parents=True, exist_ok=True)
        manifest = Manifest.from_json(read_json(root / MANIFEST, Manifest().to_json()))
        memtable: dict[bytes, RowTuple] = {}
        wal = sorted((root / "wal").glob("*.jsonl"))
        for path in wal:
            for line in path.read_text().splitlines():
                row = _row(line)
                memtable[row[0]] = row
        stamps = [manifest.timestamp, MonotonicClock.stored_mark(root)] + [r[4] for r in memtable.values()]
        floor = max((t for t in stamps if t is not None), default=None)
        return cls(
            root,
            store,
            segments or Segments(root / "segments", sync),
            MonotonicClock(clock, root, floor, sync),
            default_ttl,
            interval,
            manifest,
            memtable,
            int(wal[-1].stem) + 1 if wal else 0,
            sync,
        )

    def now(self) -> int:
        """The clock's reading for one operation; `ClockRegression` below the floor."""
        return self.clock.now()

    @property
    def last_seq(self) -> int:
        return max((r[2] for r in self.memtable.values()), default=self.manifest.last_seq)

    def put(self, key: bytes, value: bytes, ttl: int | None = None, *, expire_at: int | None = None) -> None:
        """Writes `value`; `ttl` (default: the store's) or absolute `expire_at` (in the past: expired
        at once); a re-put replaces the key's TTL."""
        check_sizes(key, value)
        now = self.now()
        chosen = self.default_ttl if ttl is None and expire_at is None else ttl
        self._write((key, value, self.last_seq + 1, 0, now, expire_ts_for(now, chosen, expire_at)))

    def delete(self, key: bytes) -> None:
        """Writes a tombstone for `key`."""
        check_sizes(key, b"")
        self._write((key, None, self.last_seq + 1, TOMBSTONE, self.now(), NEVER))

    def _write(self, row: RowTuple) -> None:
        append_line(self.root / "wal" / f"{self.wal_segment:08d}.jsonl", _record(row), self.sync)
        self.memtable[row[0]] = row

    def _commit(self, manifest: Manifest) -> None:
        write_json(self.root / MANIFEST, manifest.to_json(), self.sync)
        self.manifest = manifest

    def source_names(self) -> tuple[str, ...]:
        """SST names, newest first: L0, then sorted runs; the last is the last (oldest) run."""
        return tuple(s.name for s in self.manifest.sources)

    # flush and compaction, as generators of I/O requests

    def flushing(self) -> Operation[None]:
        """Flush: the memtable becomes the newest L0 SST, created at now (the manifest's timestamp
        too), and the WAL is truncated. Nothing more when the memtable is empty."""
        now = self.now()
        if not self.memtable:
            return
        rows = tuple(self.memtable.values())
        info = yield SstRows(self.store, f"sst-{self.manifest.next_sst}", now, rows)
        assert info is not None
        manifest = self.manifest
        self._commit(
            attrs.evolve(
                manifest,
                l0=(info,) + manifest.l0,
                timestamp=now,
                last_seq=self.last_seq,
                next_sst=manifest.next_sst + 1,
            )
        )
        for path in (self.root / "wal").glob("*.jsonl"):
            path.unlink()
        self.memtable, self.wal_segment = {}, self.wal_segment + 1

    def compacting(self, names: Sequence[str]) -> Operation[None]:
        """Compaction of the contiguous span `names` (none: nothing to do) at the clock's now."""
        yield from self._compacting_at(names, self.now())

    def periodic_compacting(self) -> Operation[tuple[str, ...]]:
        """Periodic compaction at the clock's now: the span `periodic_names` picks (none when the
        store has no interval); returns the SSTs it took."""
        now = self.now()
        if self.interval is None:
            return ()
        names = periodic_names(self.manifest.sources, len(self.manifest.l0), now, self.interval)
        yield from self._compacting_at(names, now)
        return names

    def _compacting_at(self, names: Sequence[str], now: int) -> Operation[None]:
        if not names:
            return
        sources = self.manifest.sources
        first, last = check_span(self.source_names(), len(self.manifest.l0), names)
        output = f"sst-{self.manifest.next_sst}"
        out = yield Compaction(self.store, sources[first : last + 1], now, last == len(sources) - 1, output)
        self._commit(after_compaction(self.manifest, first, last, out, now))

    def flush(self) -> None:
        drive(self.segments, self.flushing())

    def compact(self, names: Sequence[str]) -> None:
        drive(self.segments, self.compacting(names))

    def periodic_compact(self) -> tuple[str, ...]:
        return drive(self.segments, self.periodic_compacting())

    # reads

    def snapshot(self, interval: int | None = None) -> Snapshot:
        """What a read at now sees (reads the clock); `interval` asks for the periodic audit."""
        now = self.now()
        return Snapshot(
            self.store, now, self.manifest.l0, self.manifest.runs, tuple(self.memtable.values()), interval
        )

    def get(self, key: bytes) -> bytes | None:
        """The value of `key`'s newest version at now, None if it is a tombstone or expired."""
        rows = visible_rows([self.snapshot()]).where(F.col("key") == F.lit(key))
        found = rows.select("value").toArrow().column("value").to_pylist()
        return found[0] if found else None

    def scan(self, start: bytes | None = None, end: bytes | None = None) -> list[tuple[bytes, bytes]]:
        """Visible `(key, value)` pairs with `start <= key < end` (None: unbounded), in key order."""
        rows = visible_rows([self.snapshot()])
        if start is not None:
            rows = rows.where(F.col("key") >= F.lit(start))
        if end is not None:
            rows = rows.where(F.col("key") < F.lit(end))
        table = rows.orderBy("key").select("key", "value").toArrow()
        return list(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))
