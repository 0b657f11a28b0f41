"""What a trial's query made durable in its checkpoint: the offset log and the commit log.

Spark writes `offsets/N` (a version line, a metadata line, then one line per source:
its end offsets as JSON) when it plans batch `N`, and `commits/N` once the batch's
output is durable. A trial's query has one source, ours, so its offsets are the third
line's `frontier`. The harness judges these with its own reader
(`frontier_harness.properties.checks.streaming.checkpoint_log`); this is only the trial reporting what it sees.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from frontier_harness.model.vocabulary.streaming import CheckpointLog, SourceOffsets

SIDE = "side"  # the key a join's source adds to its offsets (`event_source.SIDE`)
METADATA = "metadata"  # the checkpoint's query id, which Spark writes at a query's first start


def _batches(directory: Path) -> list[Path]:
    if not directory.exists():
        return []
    return sorted((f for f in directory.iterdir() if f.name.isdigit()), key=lambda f: int(f.name))


def offset_log(checkpoint: Path) -> dict[int, list]:
    """Batch id -> the source's end offset frontier, as written."""
    return {
        int(f.name): json.loads(f.read_text().splitlines()[2])[SourceOffsets.FRONTIER]
        for f in _batches(checkpoint / CheckpointLog.OFFSETS)
    }


def side_offsets(checkpoint: Path) -> dict[int, dict[str, list]]:
    """Batch id -> each source's end offset frontier by the side its offsets name (a join's two sources read
    the log one side each, `event_source.SIDE`); empty dicts for sources that name none."""
    return {
        int(f.name): {
            offsets[SIDE]: offsets[SourceOffsets.FRONTIER]
            for line in f.read_text().splitlines()[2:]
            if line.strip() not in ("", "-") and SIDE in (offsets := json.loads(line))
        }
        for f in _batches(checkpoint / CheckpointLog.OFFSETS)
    }


def offset_files(checkpoint: Path) -> dict[int, str]:
    """Batch id -> the whole text of `offsets/N`, as Spark wrote it."""
    return {int(f.name): f.read_text() for f in _batches(checkpoint / CheckpointLog.OFFSETS)}


def journal(checkpoint: Path, batch: int, text: str) -> None:
    """Writes `offsets/N` as another query journaled it, so that the next start of this one runs batch `N`
    from those offsets, at that batch's timestamp and watermark (Spark re-runs a logged batch that has no
    commit: `tests/test_spark_processing_time.py`), and the checkpoint's `metadata` (its query id) when it
    has none: Spark refuses logs without it (`STREAMING_CHECKPOINT_MISSING_METADATA_FILE`).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> journal(root, 0, 'v1\\n{"batchTimestampMs":5}\\n{}\\n')
    >>> offset_files(root), sorted(json.loads((root / "metadata").read_text()))
    ({0: 'v1\\n{"batchTimestampMs":5}\\n{}\\n'}, ['id'])
    """
    directory = checkpoint / CheckpointLog.OFFSETS
    directory.mkdir(parents=True, exist_ok=True)
    if not (checkpoint / METADATA).exists():
        (checkpoint / METADATA).write_text(json.dumps({"id": str(uuid.uuid4())}) + "\n")
    (directory / str(batch)).write_text(text)


def offset_metadata(checkpoint: Path) -> dict[int, dict]:
    """Batch id -> the metadata line of `offsets/N`: `batchWatermarkMs`, `batchTimestampMs`, `conf`."""
    return {
        int(f.name): json.loads(f.read_text().splitlines()[1])
        for f in _batches(checkpoint / CheckpointLog.OFFSETS)
    }


def commit_metadata(checkpoint: Path) -> dict[int, dict]:
    """Batch id -> the metadata line of `commits/N` (`nextBatchWatermarkMs`)."""
    return {
        int(f.name): json.loads(f.read_text().splitlines()[1])
        for f in _batches(checkpoint / CheckpointLog.COMMITS)
    }


def commit_log(checkpoint: Path) -> list[int]:
    """The batch ids Spark committed."""
    return [int(f.name) for f in _batches(checkpoint / CheckpointLog.COMMITS)]


def uncommit(checkpoint: Path, batch: int) -> None:
    """Deletes `commits/batch` (and its checksum): the state a crash between sink and commit leaves."""
    for name in (str(batch), f".{batch}.crc"):
        (checkpoint / CheckpointLog.COMMITS / name).unlink(missing_ok=True)
