"""The TTL store on Spark: Parquet SSTs, an atomically written manifest, compaction as a Spark job.

Layout under a root directory: `manifest.json` (written to a temporary file,
fsynced, renamed), `wal/<segment>.jsonl` (one fsynced line per write), and one
Parquet file per SST under `sst/<name>/` with rows in key order: `key`,
`value` (null for a tombstone), `seq`, `flags` (bit 0 tombstone), `create_ts`,
`expire_ts` (2^63-1: never). The driver holds the clock wrapper, the memtable
and the manifest; compaction (newest version per key by a window, the TTL
filter, the tombstone rule) and reads (DataFrame filters over the SSTs and the
memtable) run on Spark. One predicate, `is_expired` (`expire_ts <= now`),
serves reads and the compaction filter. Compaction's now is the clock reading
of the newest flush (kept in the manifest): a store that sees no writes does
not expire data by compaction. Obsolete SSTs stay on disk until
`collect_garbage()`, so a snapshot taken earlier can still be read.

`observe_ttl_compaction` checks a batch of compaction histories in one job;
`observe_ttl` runs a batch of store histories, reading every step's snapshot
in one job at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from model.errors import BadCompaction, ClockRegression, InvalidRow, InvalidTime, InvalidTtl, ModelError
from spark_impl.arrow import to_frame
from spark_impl.session import spark

NEVER = 2**63 - 1
TOMBSTONE = 1
ROW_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("seq", pa.int64()),
        ("flags", pa.int32()),
        ("create_ts", pa.int64()),
        ("expire_ts", pa.int64()),
    ]
)
ROW_COLUMNS = tuple(ROW_SCHEMA.names)


# --- the rules, as Column expressions --------------------------------------------------------


def is_expired(expire_ts: Column, now: Column) -> Column:
    """THE expiry predicate: expired at `now` iff `expire_ts <= now` (reads and compaction alike)."""
    return expire_ts <= now


def is_tombstone(flags: Column) -> Column:
    return flags.bitwiseAND(F.lit(TOMBSTONE)) != 0


def expired_for_compaction(flags: Column, expire_ts: Column, now: Column) -> Column:
    """The compaction filter acts on values expired at compaction's now."""
    return ~is_tombstone(flags) & is_expired(expire_ts, now)


def visible(flags: Column, expire_ts: Column, now: Column) -> Column:
    """A read shows a key's newest version iff it is a value not expired at now."""
    return ~is_tombstone(flags) & ~is_expired(expire_ts, now)


def newest_per_key(rows: DataFrame, keys: Sequence[str]) -> DataFrame:
    """The largest-`seq` version of every key within each `keys` group."""
    order = Window.partitionBy(*keys, "key").orderBy(F.col("seq").desc())
    return rows.withColumn("_rank", F.row_number().over(order)).where(F.col("_rank") == 1).drop("_rank")


def ttl_filter(rows: DataFrame) -> DataFrame:
    """Values expired at the row's `now` become tombstones (seq and create_ts kept, expiry cleared)."""
    expired = expired_for_compaction(F.col("flags"), F.col("expire_ts"), F.col("now"))
    return (
        rows.withColumn("_expired", expired)
        .withColumn(
            "flags",
            F.when(F.col("_expired"), F.col("flags").bitwiseOR(F.lit(TOMBSTONE))).otherwise(F.col("flags")),
        )
        .withColumn("value", F.when(F.col("_expired"), F.lit(None).cast("binary")).otherwise(F.col("value")))
        .withColumn("expire_ts", F.when(F.col("_expired"), F.lit(NEVER)).otherwise(F.col("expire_ts")))
        .drop("_expired")
    )


def drop_tombstones(rows: DataFrame) -> DataFrame:
    """Tombstones are dropped only where the output is the last run (`last`)."""
    return rows.where(~(F.col("last") & is_tombstone(F.col("flags"))))


def compact_frame(rows: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Compaction of every `keys` group of `rows` (columns: rows, `now`, `last`)."""
    return drop_tombstones(ttl_filter(newest_per_key(rows, keys)))


# --- the batched differential: compaction histories ------------------------------------------


def observe_ttl_compaction(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Every compaction's output rows, for a whole batch of histories, in one Spark job."""
    rows, compactions = _compaction_tables(histories)
    joined = to_frame(rows).join(to_frame(compactions), on="history_id")
    out = compact_frame(joined, ("history_id", "step")).select("history_id", "step", *ROW_COLUMNS).toArrow()
    observed = [
        {(step, "output"): set() for step, a in enumerate(h.actions) if a.name == "compact"}
        for h in histories
    ]
    for r in out.to_pylist():
        observed[r["history_id"]][(r["step"], "output")].add(_row_tuple(r))
    return [{k: frozenset(v) for k, v in obs.items()} for obs in observed]


def _row_tuple(r: dict) -> tuple:
    value = None if r["flags"] & TOMBSTONE else r["value"].decode()
    return (r["key"].decode(), value, r["seq"], r["create_ts"], r["expire_ts"])


def _compaction_tables(histories: Sequence[Any]) -> tuple[pa.Table, pa.Table]:
    rows: dict[str, list] = {"history_id": [], **{c: [] for c in ROW_COLUMNS}}
    comps: dict[str, list] = {"history_id": [], "step": [], "now": [], "last": []}
    for hid, history in enumerate(histories):
        for step, action in enumerate(history.actions):
            a = action.args
            if action.name == "row":
                value = a.get("value")
                for col, v in zip(
                    ("history_id",) + ROW_COLUMNS,
                    (
                        hid,
                        a["key"].encode(),
                        None if value is None else value.encode(),
                        a["seq"],
                        TOMBSTONE if value is None else 0,
                        a["create"],
                        a["expire"],
                    ),
                ):
                    rows[col].append(v)
            elif action.name == "compact":
                for col, v in zip(comps, (hid, step, a["now"], a["last"])):
                    comps[col].append(v)
            else:
                raise ValueError(f"ttl_compaction history: unknown action {action.name!r} at step {step}")
    row_schema = pa.schema([("history_id", pa.int64())] + list(ROW_SCHEMA))
    comp_schema = pa.schema(
        [("history_id", pa.int64()), ("step", pa.int64()), ("now", pa.int64()), ("last", pa.bool_())]
    )
    return pa.table(rows, schema=row_schema), pa.table(comps, schema=comp_schema)


# --- the store ---------------------------------------------------------------------------------


def _check_i64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value <= NEVER


def expire_ts_for(now: int, ttl: int | None, expire_at: int | None) -> int:
    """`now + ttl` (saturating at never), or `expire_at`, or never; bad TTLs are `InvalidTtl`."""
    if ttl is not None and expire_at is not None:
        raise InvalidTtl((ttl, expire_at), "give either a ttl or an absolute expire_at, not both")
    if expire_at is not None:
        if not _check_i64(expire_at) or expire_at <= now:
            raise InvalidTtl(expire_at, f"expire_at must be an i64 after the write's clock reading {now}")
        return expire_at
    if ttl is None:
        return NEVER
    if not _check_i64(ttl) or ttl <= 0:
        raise InvalidTtl(ttl, "a ttl must be a positive signed 64-bit number of milliseconds")
    return min(now + ttl, NEVER)


def _write_json_atomically(path: Path, data: Any) -> None:
    """Write to a temporary file, fsync it, rename it over `path`, fsync the directory."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _row_record(row: tuple) -> dict:
    key, value, seq, flags, create_ts, expire_ts = row
    return {
        "key": key.hex(),
        "value": None if value is None else value.hex(),
        "seq": seq,
        "flags": flags,
        "create_ts": create_ts,
        "expire_ts": expire_ts,
    }


def _row_from_record(r: dict) -> tuple:
    value = None if r["value"] is None else bytes.fromhex(r["value"])
    return (bytes.fromhex(r["key"]), value, r["seq"], r["flags"], r["create_ts"], r["expire_ts"])


def rows_table(rows: Sequence[tuple]) -> pa.Table:
    """Rows `(key, value, seq, flags, create_ts, expire_ts)` as an Arrow table in key order."""
    ordered = sorted(rows, key=lambda r: r[0])
    return pa.table({c: [r[i] for r in ordered] for i, c in enumerate(ROW_COLUMNS)}, schema=ROW_SCHEMA)


EMPTY_MANIFEST = {"l0": [], "runs": [], "timestamp": None, "last_seq": 0, "next_sst": 0}


class SparkTtlStore:
    """One store in `root`. Mutable: the clock floor, the memtable, the current WAL segment."""

    def __init__(
        self,
        root: Path,
        clock: Callable[[], int],
        default_ttl: int | None,
        interval: int | None,
        manifest: dict,
        floor: int | None,
        memtable: dict,
        segment: int,
    ):
        self.root, self.clock, self.default_ttl, self.interval = root, clock, default_ttl, interval
        self.manifest, self.floor, self.memtable, self.segment = manifest, floor, memtable, segment

    @classmethod
    def open(
        cls,
        root: Path,
        clock: Callable[[], int],
        default_ttl: int | None = None,
        interval: int | None = None,
    ) -> SparkTtlStore:
        """Opens (or creates) the store: replays every WAL segment, seeds the clock floor from the
        manifest's timestamp AND every replayed segment's largest timestamp."""
        root = Path(root)
        (root / "wal").mkdir(parents=True, exist_ok=True)
        (root / "sst").mkdir(exist_ok=True)
        path = root / "manifest.json"
        manifest = json.loads(path.read_text()) if path.exists() else dict(EMPTY_MANIFEST)
        memtable, stamps, last = {}, [manifest["timestamp"]], -1
        for seg in sorted((root / "wal").glob("*.jsonl")):
            last = int(seg.stem)
            for line in seg.read_text().splitlines():
                row = _row_from_record(json.loads(line))
                memtable[row[0]] = row
                stamps.append(row[4])
        known = [s for s in stamps if s is not None]
        floor = max(known) if known else None
        return cls(root, clock, default_ttl, interval, manifest, floor, memtable, last + 1)

    # clock and writes

    def now(self) -> int:
        """The user clock's reading; `ClockRegression` below the floor (floor unchanged)."""
        reading = self.clock()
        if not _check_i64(reading) or reading == NEVER:
            raise InvalidTime("clock ms", reading, "expected a signed 64-bit integer below 2^63-1")
        if self.floor is not None and reading < self.floor:
            raise ClockRegression(self.floor, reading)
        self.floor = reading
        return reading

    @property
    def last_seq(self) -> int:
        return max((r[2] for r in self.memtable.values()), default=self.manifest["last_seq"])

    def put(self, key: bytes, value: bytes, ttl: int | None = None, *, expire_at: int | None = None) -> None:
        """Writes `value`; `ttl` (default: the store's) or absolute `expire_at`; a re-put replaces the TTL."""
        _check_sizes(key, value)
        now = self.now()
        chosen = self.default_ttl if ttl is None and expire_at is None else ttl
        self._write((key, value, self.last_seq + 1, 0, now, expire_ts_for(now, chosen, expire_at)))

    def delete(self, key: bytes) -> None:
        """Writes a tombstone for `key`."""
        _check_sizes(key, b"")
        self._write((key, None, self.last_seq + 1, TOMBSTONE, self.now(), NEVER))

    def _write(self, row: tuple) -> None:
        with open(self.root / "wal" / f"{self.segment:08d}.jsonl", "a") as f:
            f.write(json.dumps(_row_record(row)) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.memtable[row[0]] = row

    # flush and compaction

    def flush(self) -> None:
        """Writes the memtable as the newest L0 SST created at now (compaction's now); truncates the WAL."""
        if not self.memtable:
            return
        now = self.now()
        name = f"sst-{self.manifest['next_sst']}"
        path = self.root / "sst" / name
        path.mkdir()
        pq.write_table(rows_table(list(self.memtable.values())), path / "part-0.parquet")
        meta = _meta(name, path, now, list(self.memtable.values()))
        self._commit(
            l0=[meta] + self.manifest["l0"],
            timestamp=now,
            last_seq=self.last_seq,
            next_sst=self.manifest["next_sst"] + 1,
        )
        for seg in (self.root / "wal").glob("*.jsonl"):
            seg.unlink()
        self.memtable, self.segment = {}, self.segment + 1

    def _commit(self, **changes: Any) -> None:
        self.manifest = {**self.manifest, **changes}
        _write_json_atomically(self.root / "manifest.json", self.manifest)

    @property
    def sources(self) -> list[dict]:
        """SST metadata, newest first: L0, then sorted runs; the last is the last (oldest) run."""
        return self.manifest["l0"] + self.manifest["runs"]

    def source_names(self) -> tuple[str, ...]:
        return tuple(s["name"] for s in self.sources)

    def compact(self, names: Sequence[str]) -> None:
        """Merges the contiguous span `names` into one sorted run with a Spark job at compaction's now."""
        sources, n_l0 = self.sources, len(self.manifest["l0"])
        i, j = _span(sources, n_l0, names)
        now, last = self.manifest["timestamp"], j == len(sources) - 1
        rows = _union([spark().read.parquet(s["path"]) for s in sources[i : j + 1]])
        rows = rows.withColumn("now", F.lit(now)).withColumn("last", F.lit(last))
        out = compact_frame(rows, ()).select(*ROW_COLUMNS)
        name = f"sst-{self.manifest['next_sst']}"
        path = self.root / "sst" / name
        out.orderBy("key").coalesce(1).write.parquet(str(path))
        stats = (
            spark()
            .read.parquet(str(path))
            .agg(
                F.count(F.lit(1)).alias("rows"),
                F.min("create_ts").alias("min_ts"),
                F.max("create_ts").alias("max_ts"),
                F.max((F.col("expire_ts") != F.lit(NEVER)).cast("int")).alias("has_ttl"),
            )
            .toArrow()
            .to_pylist()[0]
        )
        made = []
        if stats["rows"]:
            made = [
                {
                    "name": name,
                    "path": str(path),
                    "creation_timestamp": now,
                    "min_ts": stats["min_ts"],
                    "max_ts": stats["max_ts"],
                    "has_ttl": bool(stats["has_ttl"]),
                    "rows": stats["rows"],
                }
            ]
        self._commit(
            l0=sources[: min(i, n_l0)],
            runs=sources[n_l0:i] + made + sources[j + 1 :],
            next_sst=self.manifest["next_sst"] + 1,
        )

    def periodic_compact(self) -> tuple[str, ...]:
        """Compacts the span of SSTs with TTL rows created more than `interval` ms before compaction's now."""
        now = self.manifest["timestamp"]
        if self.interval is None or now is None:
            return ()
        sources, n_l0 = self.sources, len(self.manifest["l0"])
        picked = [
            k for k, s in enumerate(sources) if s["has_ttl"] and now - s["creation_timestamp"] > self.interval
        ]
        if not picked:
            return ()
        i, j = picked[0], picked[-1]
        if i < n_l0:
            j = max(j, n_l0 - 1)
        names = tuple(s["name"] for s in sources[i : j + 1])
        self.compact(names)
        return names

    def collect_garbage(self) -> None:
        """Deletes SSTs the manifest no longer lists (no snapshot may be read afterwards)."""
        live = set(self.source_names())
        for path in (self.root / "sst").iterdir():
            if path.name not in live:
                shutil.rmtree(path)

    # reads

    def snapshot(self) -> tuple:
        """What a read at now sees: `(now, SST paths, memtable rows)`; reads the clock."""
        return self.now(), tuple(s["path"] for s in self.sources), tuple(self.memtable.values())

    def get(self, key: bytes) -> bytes | None:
        """The value of `key`'s newest version at now, None if it is a tombstone or expired."""
        rows = read_snapshots([((0,), self.snapshot())], ("point",)).where(F.col("key") == F.lit(key))
        found = rows.select("value").toArrow().column("value").to_pylist()
        return found[0] if found else None

    def scan(self, start: bytes | None = None, end: bytes | None = None) -> list[tuple[bytes, bytes]]:
        """Visible `(key, value)` pairs with `start <= key < end`, in key order."""
        rows = read_snapshots([((0,), self.snapshot())], ("point",))
        if start is not None:
            rows = rows.where(F.col("key") >= F.lit(start))
        if end is not None:
            rows = rows.where(F.col("key") < F.lit(end))
        table = rows.orderBy("key").select("key", "value").toArrow()
        return list(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))


def _check_sizes(key: Any, value: Any) -> None:
    for field, v in (("key", key), ("value", value)):
        if not isinstance(v, bytes):
            raise InvalidRow(field, v, "expected bytes")
    if len(key) > 0xFFFF:
        raise InvalidRow("key length", len(key), "longer than 65535 bytes")
    if len(value) > 0xFFFFFFFF:
        raise InvalidRow("value length", len(value), "longer than 4294967295 bytes")


def _meta(name: str, path: Path, created: int, rows: Sequence[tuple]) -> dict:
    stamps = [r[4] for r in rows]
    return {
        "name": name,
        "path": str(path),
        "creation_timestamp": created,
        "min_ts": min(stamps),
        "max_ts": max(stamps),
        "has_ttl": any(r[5] != NEVER for r in rows),
        "rows": len(rows),
    }


def _span(sources: Sequence[dict], n_l0: int, names: Sequence[str]) -> tuple[int, int]:
    index = {s["name"]: k for k, s in enumerate(sources)}
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


def _union(frames: Sequence[DataFrame]) -> DataFrame:
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


def read_snapshots(snapshots: Sequence[tuple], tag_names: tuple) -> DataFrame:
    """Visible rows `(tags..., key, value)` of many snapshots `(tags, (now, paths, memtable))` in one frame.

    Every SST file is scanned once and joined to the snapshots that list it; the
    memtable rows ride along in an Arrow table.
    """
    tag_types = [(t, pa.int64()) for t in tag_names]
    points = {**{t: [] for t in tag_names}, "now": [], "path": []}
    mem = {**{t: [] for t in tag_names}, **{c: [] for c in ROW_COLUMNS}, "now": []}
    for tags, (now, paths, memtable) in snapshots:
        for path in paths:
            for t, v in zip(tag_names, tags):
                points[t].append(v)
            points["now"].append(now)
            points["path"].append(path)
        for row in memtable:
            for c, v in zip(tag_names + tuple(ROW_COLUMNS) + ("now",), tuple(tags) + tuple(row) + (now,)):
                mem[c].append(v)
    mem_schema = pa.schema(tag_types + list(ROW_SCHEMA) + [("now", pa.int64())])
    memory = to_frame(pa.table(mem, schema=mem_schema))
    frames = [memory]
    paths = sorted({p for p in points["path"]})
    if paths:
        point_schema = pa.schema(tag_types + [("now", pa.int64()), ("path", pa.string())])
        where = to_frame(pa.table(points, schema=point_schema))
        ssts = _union([spark().read.parquet(p).withColumn("path", F.lit(p)) for p in paths])
        frames.append(ssts.join(where, on="path").drop("path"))
    rows = newest_per_key(_union(frames), tag_names)
    return rows.where(visible(F.col("flags"), F.col("expire_ts"), F.col("now"))).select(
        *tag_names, "key", "value"
    )


# --- the batched store histories ----------------------------------------------------------------


def observe_ttl(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Runs every history on its own store (compactions are Spark jobs); every step's reads of
    the whole batch are one Spark job at the end. Same observations as `properties.suites.ttl`."""
    observed: list[dict] = [{} for _ in histories]
    snapshots: list[tuple] = []
    with tempfile.TemporaryDirectory(prefix="ttl-store-") as tmp:
        for hid, history in enumerate(histories):
            _run_history(Path(tmp) / f"h{hid}", hid, history, observed[hid], snapshots)
        rows = read_snapshots(snapshots, ("history_id", "step")).toArrow().to_pylist() if snapshots else []
    visible_rows: dict = {}
    for r in rows:
        visible_rows.setdefault((r["history_id"], r["step"]), []).append((r["key"], r["value"]))
    for (hid, step), _ in snapshots:
        found = dict(visible_rows.get((hid, step), []))
        observed[hid][(step, "get")] = frozenset((k, _text(found.get(k.encode()))) for k in KEYS)
        scan = sorted(found.items())
        observed[hid][(step, "scan")] = frozenset(
            (i, k.decode(), v.decode()) for i, (k, v) in enumerate(scan)
        )
    return observed


KEYS = ("a", "b", "c")


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode()


class _UserClock:
    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> int:
        return self.ms


def _run_history(root: Path, hid: int, history: Any, observed: dict, snapshots: list) -> None:
    opts = history.actions[0].args
    user = _UserClock()
    store = SparkTtlStore.open(root, user, opts.get("default_ttl"), opts.get("interval"))
    for step, action in enumerate(history.actions):
        if step > 0:
            try:
                store = _apply(store, root, user, opts, action.name, action.args)
            except ModelError as error:
                observed[(step, "error")] = frozenset({(type(error).__name__,)})
        try:
            snapshots.append(((hid, step), store.snapshot()))
        except ModelError as error:
            observed[(step, "get")] = observed[(step, "scan")] = frozenset({(type(error).__name__,)})


def _apply(
    store: SparkTtlStore, root: Path, user: _UserClock, opts: dict, name: str, args: dict
) -> SparkTtlStore:
    if name == "put":
        store.put(
            args["key"].encode(), args["value"].encode(), args.get("ttl"), expire_at=args.get("expire_at")
        )
    elif name == "delete":
        store.delete(args["key"].encode())
    elif name == "flush":
        store.flush()
    elif name == "compact":
        names = _compaction_names(
            store.source_names(), len(store.manifest["l0"]), args["start"], args["length"]
        )
        if names:
            store.compact(names)
    elif name == "periodic":
        store.periodic_compact()
    elif name == "crash":  # the process dies: only the directory survives
        store = SparkTtlStore.open(root, user, opts.get("default_ttl"), opts.get("interval"))
    elif name not in ("tick", "set_clock"):
        raise ValueError(f"ttl history: unknown action {name!r}")
    if name == "tick":
        user.ms += args["ms"]
    elif name in ("set_clock", "crash") and args.get("ms") is not None:
        user.ms = args["ms"]
    return store


def _compaction_names(names: tuple, n_l0: int, start: int, length: int) -> tuple:
    """The span `compact(start, length)` names (the history vocabulary's rule)."""
    if not names:
        return ()
    i = start % len(names)
    j = min(len(names) - 1, i + length)
    return names[i : max(j, n_l0 - 1) + 1] if i < n_l0 else names[i : j + 1]
