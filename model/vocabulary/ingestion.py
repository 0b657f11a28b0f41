"""Words of the ingestion capability's suites: resumption and durable (bounded input reliance).

A *resumption* history drives the ingestion pipeline (`frontier_harness.model.ingestion.ingestion`):
the upstream `produce`s records (`partition`, `data`) and compacts, the pipeline
`ingest`s at a `tick`, `checkpoint`s (`compact_first`) and `restart`s; a `fault` names
the `Fault` point where the process dies. It is observed at each commit and at its end
under the `ResumptionLabel`s.

`IngestionArg` also names the arguments of the streaming and stateful histories' `produce`, `trigger`
and `query` (`frontier_harness.model.vocabulary.streaming`), which drive the same upstream log.

>>> Fault("after_commit") is Fault.AFTER_COMMIT
True
>>> INGEST_FAULTS + CHECKPOINT_FAULTS == tuple(Fault)
True
>>> sorted(IngestionAction)
['checkpoint', 'ingest', 'produce', 'restart', 'upstream_compact']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from frontier_harness.model.vocabulary import Arg, Decoder, HistoryLike, Word, decoded


class IngestionAction(Word):
    """A step of a resumption history: `produce(partition, data)`, `upstream_compact`, `ingest(tick,
    fault?)`, `checkpoint(compact_first?, fault?)`, `restart`."""

    PRODUCE = "produce"
    UPSTREAM_COMPACT = "upstream_compact"
    INGEST = "ingest"
    CHECKPOINT = "checkpoint"
    RESTART = "restart"


class IngestionArg(Word):
    """Argument keys of the resumption and streaming histories (`data` is `Arg.DATA`).

    `partition` of a `produce`; `tick` of an `ingest`; `fault` of an `ingest`, a
    `checkpoint` or a `trigger` (a `Fault` or a `CrashPoint`); `compact_first` of a
    `checkpoint`; `trigger` and `sink` of a streaming `query` (a `Trigger`, a `Sink`);
    `kill` of a `trigger` (the crash SIGKILLs a separate driver process); `key` and `event_time`
    of a stateful history's `produce`, and `side` (`left` or `right`) of a join's; `batch` and `offsets`
    (the text of `offsets/N`) of a reference run's `journal`; `continuous` of a reference run's `query` (its
    starts share their Python workers, as one running query's batches do).
    """

    PARTITION = "partition"
    TICK = "tick"
    FAULT = "fault"
    COMPACT_FIRST = "compact_first"
    TRIGGER = "trigger"
    SINK = "sink"
    KILL = "kill"
    KEY = "key"
    EVENT_TIME = "event_time"
    SIDE = "side"
    BATCH = "batch"
    OFFSETS = "offsets"
    CONTINUOUS = "continuous"


class Fault(Word):
    """Where an ingestion pipeline's process dies: within or after an ingest's remap and data writes
    (`mid_*_write`: the write is lost), or after a checkpoint's upstream commit or remap compaction."""

    MID_REMAP_WRITE = "mid_remap_write"
    AFTER_REMAP_APPEND = "after_remap_append"
    MID_DATA_WRITE = "mid_data_write"
    AFTER_DATA_APPEND = "after_data_append"
    AFTER_COMMIT = "after_commit"
    AFTER_COMPACTION = "after_compaction"


# The fault points an ingest may name, and those a checkpoint may, in the order they are reached.
INGEST_FAULTS = (
    Fault.MID_REMAP_WRITE,
    Fault.AFTER_REMAP_APPEND,
    Fault.MID_DATA_WRITE,
    Fault.AFTER_DATA_APPEND,
)
CHECKPOINT_FAULTS = (Fault.AFTER_COMMIT, Fault.AFTER_COMPACTION)


class ResumptionLabel(Word):
    """What a resumption observation's `(step, label)` key holds.

    At each commit (checkpoint or restart): `committed` (the offset frontier committed
    upstream), `durable_ids` (`(data, count)` in the data shard), `remap_latest` (the
    durable remap's latest source upper); at a restart `resumed` (its offset resumption
    frontier) and `upstream_start` (`(partition, first offset)`); around a remap
    compaction `remap_before` / `remap_after` (`(t, R(t))`); at the end `data` (the data
    shard's updates), `remap` (the bindings) and `remap_since`.
    """

    COMMITTED = "committed"
    DURABLE_IDS = "durable_ids"
    REMAP_LATEST = "remap_latest"
    RESUMED = "resumed"
    UPSTREAM_START = "upstream_start"
    REMAP_BEFORE = "remap_before"
    REMAP_AFTER = "remap_after"
    DATA = "data"
    REMAP = "remap"
    REMAP_SINCE = "remap_since"


@attrs.frozen
class IngestionStep:
    """One action of a resumption history, decoded: a `produce` of `data` to `partition`, an
    `upstream_compact`, an `ingest` at `tick`, a `checkpoint` (`compact_first`: the remap before the
    upstream commit), a `restart`; an ingest's or checkpoint's `fault` names where the process dies (each
    pipeline checks it is one the action may name).

    >>> from types import SimpleNamespace as A
    >>> steps = ingestion_steps(A(domain="total", actions=[A(name="ingest", args={"tick": 2, "fault": "after_data_append"})]))
    >>> [(s.action, s.tick, s.fault) for s in steps]
    [('ingest', 2, 'after_data_append')]
    """

    step: int
    action: IngestionAction
    partition: int | None = None
    data: Any = None
    tick: int | None = None
    fault: str | None = None
    compact_first: bool = False

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any], action: IngestionAction) -> IngestionStep:
        needed = {
            IngestionAction.PRODUCE: (IngestionArg.PARTITION, Arg.DATA),
            IngestionAction.INGEST: (IngestionArg.TICK,),
        }
        missing = next((arg for arg in needed.get(action, ()) if arg not in args), None)
        if missing is not None:
            raise KeyError(missing)
        return cls(
            step,
            action,
            args.get(IngestionArg.PARTITION),
            args.get(Arg.DATA),
            args.get(IngestionArg.TICK),
            args.get(IngestionArg.FAULT),
            bool(args.get(IngestionArg.COMPACT_FIRST, False)),
        )


def _ingestion_step(action: IngestionAction) -> Decoder[IngestionStep]:
    return lambda step, args: IngestionStep.of(step, args, action)


INGESTION_DECODERS: dict[str, Decoder[IngestionStep]] = {a: _ingestion_step(a) for a in IngestionAction}


def ingestion_steps(history: HistoryLike) -> tuple[IngestionStep, ...]:
    """A resumption history's actions, decoded (`MalformedHistory` for one it does not name)."""
    return decoded("ingestion", history, INGESTION_DECODERS)


def final_tick(steps: tuple[IngestionStep, ...]) -> int:
    """The tick of the implicit final ingest that drains the upstream: one past the history's last.

    >>> final_tick((IngestionStep(0, IngestionAction.INGEST, tick=4),)), final_tick(())
    (5, 1)
    """
    return 1 + max(
        (s.tick for s in steps if s.action is IngestionAction.INGEST and s.tick is not None), default=0
    )
