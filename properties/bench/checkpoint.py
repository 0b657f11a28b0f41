"""What validating a stateful query's checkpoint costs: the logs of 1,000 batches, read and checked.

- `read_stateful_checkpoint_s_per_1000_batches`: reading a windowed aggregation's checkpoint
  (each `offsets/N` with its watermark, clock and, in the first, Spark's pinned settings; each
  `commits/N` with the watermark it hands on; the state store's delta per batch in each of two
  partitions, their LZ4 frames walked) into a history;
- `validate_stateful_checkpoint_s_per_1000_batches`: the same and every law checked, the figure
  `validate-checkpoint` costs without `--state` (which starts Spark to read the state's rows).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from frontier_harness.properties.bench import Figure, timed
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.streaming.checkpoint_log.reader import read_checkpoint

HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.streaming.stateStore.providerClass": HDFS}
# An empty delta as Spark 4.3's HDFS-backed provider writes it: one LZ4 frame holding the end marker, then
# the closing frame.
EMPTY_DELTA = bytes.fromhex(
    "4c5a34426c6f636b150400000004000000db804d08ffffffff"  # a frame: the end marker (-1), stored raw
    "4c5a34426c6f636b15000000000000000000000000"  # the closing frame
)
PARTITIONS = 2


def write_stateful_log(root: Path, batches: int) -> Path:
    """A lawful checkpoint of a windowed count over `batches` batches (a rate source, two state partitions)."""
    for name in ("offsets", "commits", *(f"state/0/{p}" for p in range(PARTITIONS))):
        (root / name).mkdir(parents=True)
    (root / "metadata").write_text('{"id":"bench"}')
    for b in range(batches):
        meta = {"batchWatermarkMs": 1000 * b, "batchTimestampMs": 1_700_000_000_000 + 1000 * b, "conf": CONF}
        (root / "offsets" / str(b)).write_text(f"v1\n{json.dumps(meta)}\n{b * 10}")
        (root / "commits" / str(b)).write_text(f'v1\n{{"nextBatchWatermarkMs":{1000 * (b + 1)}}}')
        for p in range(PARTITIONS):
            (root / "state" / "0" / str(p) / f"{b + 1}.delta").write_bytes(EMPTY_DELTA)
    return root


def figures(scale: float) -> list[Figure]:
    batches = max(1000, int(10_000 * scale))
    root = write_stateful_log(Path(tempfile.mkdtemp(prefix="fh-bench-stateful-")), batches)
    read: dict[str, Any] = {}
    read_s = timed(lambda: read.update(log=read_checkpoint(root)))
    laws_s = timed(lambda: read.update(broken=check_log(read["log"])))
    assert read["broken"] == [], read["broken"][:3]
    per_1000 = 1000 / batches
    return [
        Figure(
            "read_stateful_checkpoint_s_per_1000_batches",
            read_s * per_1000,
            "s",
            f"{batches} batches: offsets with watermark, clock and settings, commits, a delta per batch in "
            f"{PARTITIONS} state partitions, read into a history",
        ),
        Figure(
            "validate_stateful_checkpoint_s_per_1000_batches",
            (read_s + laws_s) * per_1000,
            "s",
            f"read + every law (offsets, watermark, clock, settings, state files); laws alone {laws_s * per_1000:.2f} s",
            baseline="read_stateful_checkpoint_s_per_1000_batches",
            goal="< 2 s",
        ),
    ]
