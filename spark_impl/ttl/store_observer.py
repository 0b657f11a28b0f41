"""The ttl suite's observer on Spark: a batch of store histories in a few Spark jobs.

Each history runs on its own `SparkTtlStore` (its own manifest, clock mark and
WAL), all sharing one directory of segments. The histories run in lockstep
(`frontier_harness.spark_impl.ttl.requests.drive_all`): each round, the flushes every history has
reached share one segment file and the compactions one Spark job, so a batch
costs as many jobs as its busiest history has compactions, whatever its size.
Every step's reads, and the audits, are snapshots read together in one last job.
Observations are those of `frontier_harness.properties.checks.ttl.store`: after every step each key's
`get`, the `scan`, the step's typed error, and the audits' findings.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Generator, Sequence
from pathlib import Path

from pyspark.sql import functions as F

from frontier_harness.model.errors import ModelError
from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.ttl import (
    STORE_KEYS,
    StoreAction,
    StoreLabel,
    StoreStep,
    store_history,
)
from frontier_harness.spark_impl.arrow import columns_of
from frontier_harness.spark_impl.ttl.read import Snapshot, audit_rows, visible_rows
from frontier_harness.spark_impl.ttl.requests import Operation, drive_all
from frontier_harness.spark_impl.ttl.segments import Segments
from frontier_harness.spark_impl.ttl.store import SparkTtlStore

Step = tuple[int, int]  # (history index, step)


class _UserClock:
    """The user clock a history drives (`tick`, `set_clock`, `crash(ms)`: `StoreStep.clock_after`)."""

    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> int:
        return self.ms


class _Log:
    """What the runs record: errors by step, and snapshots to read (by step) and audit."""

    def __init__(self, n: int) -> None:
        self.observed: list[dict] = [{} for _ in range(n)]
        self.reads: list[tuple[Step, Snapshot]] = []
        self.audits: list[tuple[Step, Snapshot]] = []

    def error(self, at: Step, label: str, error: ModelError) -> None:
        self.observed[at[0]][(at[1], label)] = frozenset({(type(error).__name__,)})

    def step(self, at: Step, store: SparkTtlStore, user: _UserClock, audit_interval: int | None) -> None:
        try:
            self.reads.append((at, store.snapshot()))
        except ModelError as error:
            self.error(at, StoreLabel.GET, error)
            self.error(at, StoreLabel.SCAN, error)
        manifest = store.manifest
        self.audits.append(
            (at, Snapshot(store.store, user.ms, manifest.l0, manifest.runs, (), audit_interval))
        )


def _run(hid: int, history: HistoryLike, root: Path, segments: Segments, log: _Log) -> Operation[None]:
    """One history on its own store; yields the store's I/O requests."""
    decoded, user = store_history(history), _UserClock()

    def open_store() -> SparkTtlStore:
        return SparkTtlStore.open(
            root, user, decoded.default_ttl, decoded.interval, segments=segments, store=hid, sync=False
        )

    store = open_store()
    if decoded.opened:
        log.step((hid, 0), store, user, None)
    for step in decoded.steps:
        audit_interval = None
        try:
            if step.action is StoreAction.CRASH:  # the process dies: only the directory survives
                store = open_store()
            else:
                yield from _apply(store, step)
                audit_interval = store.interval if step.action is StoreAction.PERIODIC else None
        except ModelError as error:
            log.error((hid, step.step), StoreLabel.ERROR, error)
        user.ms = step.clock_after(user.ms)
        log.step((hid, step.step), store, user, audit_interval)


def _apply(store: SparkTtlStore, step: StoreStep) -> Generator:
    if step.action is StoreAction.PUT and step.key is not None and step.value is not None:
        store.put(step.key, step.value, step.ttl, expire_at=step.expire_at)
    elif step.action is StoreAction.DELETE and step.key is not None:
        store.delete(step.key)
    elif step.action is StoreAction.FLUSH:
        yield from store.flushing()
    elif step.action is StoreAction.COMPACT:
        yield from store.compacting(step.span(store.source_names(), len(store.manifest.l0)))
    elif step.action is StoreAction.PERIODIC:
        yield from store.periodic_compacting()


def _scratch() -> str | None:
    """Where the batch's stores live: a RAM file system if there is one, since their crashes are
    simulated (sync off) and their many small renames cost ~3 ms each on a busy disk (1,000
    histories: 53 s there, 87 s in /tmp, measured in turns on a shared 2-core machine)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def observe_ttl(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Every history's observations: the stores in lockstep, then every snapshot in one job."""
    log = _Log(len(histories))
    with tempfile.TemporaryDirectory(prefix="ttl-stores-", dir=_scratch()) as tmp:
        segments = Segments(Path(tmp) / "segments", sync=False)
        drive_all(
            segments,
            [
                _run(h, history, Path(tmp) / f"store-{h}", segments, log)
                for h, history in enumerate(histories)
            ],
        )
        rows = _read_all(log)
    for at, _ in log.reads:
        _record_reads(log.observed[at[0]], at[1], rows.get(("visible", at), []))
    for at, _ in log.audits:
        for label in (StoreLabel.KEPT, StoreLabel.LEFT):
            if found := rows.get((label, at)):
                log.observed[at[0]][(at[1], label)] = frozenset((key.decode(),) for key, _ in found)
    return log.observed


def _read_all(log: _Log) -> dict[tuple[str, Step], list[tuple[bytes, bytes | None]]]:
    """One job: the visible rows of every read snapshot and the audits' findings, by step."""
    frame = visible_rows([s for _, s in log.reads]).select(
        "tag", F.lit("visible").alias("label"), "key", "value"
    )
    audits = audit_rows([s for _, s in log.audits])
    if audits is not None:
        offset = len(log.reads)  # audit tags follow the read tags
        frame = frame.unionByName(
            audits.select(
                (F.col("tag") + offset).alias("tag"),
                "label",
                "key",
                F.lit(None).cast("binary").alias("value"),
            )
        )
    steps = [at for at, _ in log.reads] + [at for at, _ in log.audits]
    out: dict[tuple[str, Step], list[tuple[bytes, bytes | None]]] = {}
    cols = columns_of(frame.toArrow())
    for tag, label, key, value in zip(cols["tag"], cols["label"], cols["key"], cols["value"]):
        out.setdefault((label, steps[tag]), []).append((key, value))
    return out


def _record_reads(observed: dict, step: int, visible: list[tuple[bytes, bytes | None]]) -> None:
    found = {key.decode(): value.decode() for key, value in visible if value is not None}
    observed[(step, StoreLabel.GET)] = frozenset((k, found.get(k)) for k in STORE_KEYS)
    observed[(step, StoreLabel.SCAN)] = frozenset((i, k, v) for i, (k, v) in enumerate(sorted(found.items())))
