"""The laws on a checkpoint's frontier, clock and settings: what `offsets/N` journals beside the offsets.

Spark writes, with batch `N`'s offsets, `batchWatermarkMs` (the query's frontier over event
time), `batchTimestampMs` (the clock state TTL and processing-time timers run on) and the
settings it pins for the checkpoint's life (`conf`); `commits/N` journals
`nextBatchWatermarkMs`, the watermark batch `N` computed for the next one. The laws:

- `watermark monotone`: a batch's watermark is never below the batch before's (a frontier
  only rises: a regression reopens windows already emitted and evicted);
- `watermark as committed`: batch `N + 1`'s watermark equals `commits/N`'s
  `nextBatchWatermarkMs` (what Spark restores on restart, and what it plans with);
- `timestamp monotone`: a batch's timestamp is never below the batch before's (the TTL
  seed's monotonic clock; PySpark 4.3 reads a new batch's from the wall clock unclamped);
- `pinned setting`: a setting present in two batches has one value (`spark.sql.shuffle.partitions`
  partitions the state; a changed provider cannot read the state written before). A setting
  first present in a later batch (Spark fills in defaults for older checkpoints) or no longer
  present is a note, not a violation.

>>> from frontier_harness.properties.engine.history import Action
>>> metadata = BatchMetadata()
>>> metadata.offsets(0, {"batch": 0, "watermark_ms": 5000, "timestamp_ms": 10})
[]
>>> metadata.commit({"batch": 0, "next_watermark_ms": 6000})
>>> [b.law for b in metadata.offsets(2, {"batch": 1, "watermark_ms": 4000, "timestamp_ms": 9})]
['watermark monotone', 'watermark as committed', 'timestamp monotone']
"""

from __future__ import annotations

from typing import Any

import attrs

from frontier_harness.model.vocabulary.streaming import LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.broken import Broken

WATERMARK_MONOTONE = "watermark monotone"
WATERMARK_AS_COMMITTED = "watermark as committed"
TIMESTAMP_MONOTONE = "timestamp monotone"
PINNED_SETTING = "pinned setting"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


@attrs.define
class BatchMetadata:
    """The metadata of the batches read so far: the newest watermark and timestamp, the watermark each
    commit handed on, and each pinned setting's value with the batch that wrote it."""

    watermark: tuple[int, int] | None = None  # (batch, ms)
    timestamp: tuple[int, int] | None = None  # (batch, ms)
    handed_on: dict[int, int] = attrs.field(factory=dict)  # committed batch -> nextBatchWatermarkMs
    watermarks: dict[int, int] = attrs.field(factory=dict)  # batch -> batchWatermarkMs
    pinned: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # setting -> (value, batch)
    latest: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # setting -> the newest (value, batch)
    first_batch: int | None = None
    notes: list[str] = attrs.field(factory=list)

    def offsets(self, step: int, args: dict[str, Any]) -> list[Broken]:
        """The laws on one batch's metadata, given the batches before it."""
        batch = args[LogArg.BATCH]
        found: list[Broken] = []
        if LogArg.WATERMARK_MS in args:
            found += self._watermark(step, batch, args[LogArg.WATERMARK_MS])
        if LogArg.TIMESTAMP_MS in args:
            found += self._timestamp(step, batch, args[LogArg.TIMESTAMP_MS])
        if LogArg.CONF in args:
            found += self._settings(step, batch, args[LogArg.CONF])
        return found

    def commit(self, args: dict[str, Any]) -> None:
        """Notes the watermark a commit hands on to the next batch."""
        if LogArg.NEXT_WATERMARK_MS in args:
            self.handed_on[args[LogArg.BATCH]] = args[LogArg.NEXT_WATERMARK_MS]

    def _watermark(self, step: int, batch: int, ms: int) -> list[Broken]:
        self.watermarks[batch] = ms
        back = _went_back(self.watermark, batch, ms)
        found = []
        if back is not None:
            message = (
                f"the watermark goes back: offsets/{batch} has batchWatermarkMs {ms}, offsets/{back[0]} "
                f"had {back[1]} (windows already emitted and evicted are open again)"
            )
            found.append(Broken(step, WATERMARK_MONOTONE, message))
        handed = self.handed_on.get(batch - 1)
        if handed is not None and handed != ms:
            message = (
                f"offsets/{batch} has batchWatermarkMs {ms}, but commits/{batch - 1} handed on "
                f"nextBatchWatermarkMs {handed}"
            )
            found.append(Broken(step, WATERMARK_AS_COMMITTED, message))
        self.watermark = _newest(self.watermark, batch, ms)
        return found

    def _timestamp(self, step: int, batch: int, ms: int) -> list[Broken]:
        back = _went_back(self.timestamp, batch, ms)
        self.timestamp = _newest(self.timestamp, batch, ms)
        if back is None:
            return []
        message = (
            f"the batch clock goes back: offsets/{batch} has batchTimestampMs {ms}, offsets/{back[0]} "
            f"had {back[1]} ({back[1] - ms} ms earlier; state TTL and processing-time timers run on it)"
        )
        return [Broken(step, TIMESTAMP_MONOTONE, message)]

    def _settings(self, step: int, batch: int, conf: dict[str, str | None]) -> list[Broken]:
        first = self.first_batch is None
        self.first_batch = batch if first else self.first_batch
        found = []
        for key, value in sorted(conf.items()):
            if value is None:
                self.latest.pop(key, None)
            else:
                self.latest[key] = (value, batch)
            known = self.pinned.get(key)
            if value is None:
                self.notes.append(f"setting {key} is no longer in offsets/{batch}")
            elif known is None and not first:
                self.notes.append(f"setting {key} is first present in offsets/{batch} (= {value})")
            elif known is not None and known[0] != value:
                message = (
                    f"setting {key} is {value} in offsets/{batch}, but {known[0]} in offsets/{known[1]} "
                    f"(Spark pins it for the checkpoint's life)"
                )
                found.append(Broken(step, PINNED_SETTING, message))
                continue
            if value is not None and known is None:
                self.pinned[key] = (value, batch)
        return found


def _went_back(newest: tuple[int, int] | None, batch: int, ms: int) -> tuple[int, int] | None:
    """The newest `(batch, ms)` before `batch` when `ms` is below its reading: the reading gone back from.

    >>> _went_back((3, 500), 4, 499), _went_back((3, 500), 4, 500), _went_back(None, 0, 1)
    ((3, 500), None, None)
    """
    return newest if newest is not None and batch > newest[0] and ms < newest[1] else None


def _newest(newest: tuple[int, int] | None, batch: int, ms: int) -> tuple[int, int]:
    return (batch, ms) if newest is None or batch > newest[0] else newest
