"""The upstream service on disk: a Kafka-like partitioned log the streaming source reads.

A directory, each file with one writer and replaced atomically (temporary file,
fsync, `os.replace`), so a reader in another process sees a whole version or the
previous one:

    records.json    {"partitions": [{"start": s, "records": [...]}, ...]}: partition p's
                    record at offset o is records[o - s]; the harness appends and compacts
    committed.json  {"frontier": [[lo, hi, offset], ...]}: the offset frontier the source
                    committed upstream (`commit(end)`); only the source writes it
    commits.jsonl   one line per `commit(end)` call, in order: the source's journal

Offsets are a frontier of the Partitioned domain, encoded `[lo, hi, offset]`:
one point `[p, p, n]` per known partition at its next offset, then `[k, MAX, 0]`
for the partitions not yet seen (`live_frontier`). Compaction deletes every
record not beyond the committed frontier; a read that needs a deleted record is
`CompactedRead` (a typed error), never an empty read.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from frontier_harness.model.errors import CompactedRead, UnknownPartition
from frontier_harness.model.time.partitioned_time import PARTITION_MAX  # a shared constant, not an algorithm

RECORDS, COMMITTED, JOURNAL = "records.json", "committed.json", "commits.jsonl"
MINIMUM = [[0, PARTITION_MAX, 0]]


def frontier_of(next_offsets: Sequence[int]) -> list:
    """The offset frontier with partition `p` at `next_offsets[p]` and the unseen rest at 0.

    >>> frontier_of([5, 0])
    [[0, 0, 5], [1, 1, 0], [2, 2147483647, 0]]
    """
    points = [[p, p, n] for p, n in enumerate(next_offsets)]
    return points + [[len(next_offsets), PARTITION_MAX, 0]]


def offset_of(frontier: Sequence[Sequence[int]], partition: int) -> int:
    """Where a reader at `frontier` starts in `partition`: the smallest offset of an element covering it.

    >>> offset_of([[0, 0, 5], [1, 2147483647, 0]], 3)
    0
    """
    covering = [offset for lo, hi, offset in frontier if lo <= partition <= hi]
    return min(covering, default=0)


def write_atomically(path: Path, text: str) -> None:
    """Replaces `path` with `text` so a concurrent reader sees the old or the new content, whole."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class UpstreamLog:
    """A handle on one log directory; every method reads or writes the files, no state is cached."""

    def __init__(self, path: os.PathLike | str):
        self.path = Path(path)

    @classmethod
    def create(cls, path: os.PathLike | str) -> UpstreamLog:
        """An empty log (no partitions, nothing committed) in a new directory."""
        log = cls(path)
        log.path.mkdir(parents=True, exist_ok=True)
        write_atomically(log.path / RECORDS, json.dumps({"partitions": []}))
        write_atomically(log.path / COMMITTED, json.dumps({"frontier": MINIMUM}))
        return log

    def partitions(self) -> list[dict]:
        return json.loads((self.path / RECORDS).read_text())["partitions"]

    def next_offsets(self) -> list[int]:
        return [p["start"] + len(p["records"]) for p in self.partitions()]

    def upper(self) -> list:
        """The log's upper as an offset frontier: every stored record is not beyond it."""
        return frontier_of(self.next_offsets())

    def starts(self) -> list[int]:
        """Per partition, the first offset still stored (records before it were compacted)."""
        return [p["start"] for p in self.partitions()]

    def committed(self) -> list:
        return json.loads((self.path / COMMITTED).read_text())["frontier"]

    def journal(self) -> list:
        """Every `commit(end)` the source received, in order."""
        path = self.path / JOURNAL
        lines = path.read_text().splitlines() if path.exists() else []
        return [json.loads(line)["end"] for line in lines if line.strip()]

    def append(self, records: Sequence[tuple[int, str]]) -> None:
        """Appends `(partition, data)` records in order; partition `n` may be added to `0..n-1`, any other
        is `UnknownPartition` and nothing is appended.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as scratch:
        ...     log = UpstreamLog.create(Path(scratch) / "log")
        ...     try:
        ...         log.append([(0, "r0"), (2, "r1")])
        ...     except UnknownPartition as refused:
        ...         print(refused, log.partitions())
        unknown partition 2: the log has partitions 0..0 and may add 1 []
        """
        parts = self.partitions()
        for partition, data in records:
            if not isinstance(partition, int) or not 0 <= partition <= len(parts):
                raise UnknownPartition(partition, len(parts))
            if partition == len(parts):
                parts.append({"start": 0, "records": []})
            parts[partition]["records"].append(data)
        write_atomically(self.path / RECORDS, json.dumps({"partitions": parts}))

    def compact(self) -> None:
        """Deletes every record not beyond the committed frontier; a partition's start never goes back."""
        committed, parts = self.committed(), self.partitions()
        for p, part in enumerate(parts):
            keep_from = min(offset_of(committed, p), part["start"] + len(part["records"]))
            if keep_from > part["start"]:
                part["records"] = part["records"][keep_from - part["start"] :]
                part["start"] = keep_from
        write_atomically(self.path / RECORDS, json.dumps({"partitions": parts}))

    def read(self, partition: int, lo: int, hi: int) -> list[tuple[str, int, int]]:
        """Records `lo..hi-1` of `partition` as `(data, partition, offset)`, or `CompactedRead`."""
        parts = self.partitions()
        part: dict[str, Any] = parts[partition] if partition < len(parts) else {"start": 0, "records": []}
        if lo < part["start"]:
            raise CompactedRead([partition, partition, lo], partition, lo, part["start"])
        return [(part["records"][o - part["start"]], partition, o) for o in range(lo, hi)]

    def commit(self, frontier: Any) -> None:
        """The source commits `frontier` upstream: journaled, then recorded as the committed frontier."""
        with open(self.path / JOURNAL, "a") as handle:
            handle.write(json.dumps({"end": frontier}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        write_atomically(self.path / COMMITTED, json.dumps({"frontier": frontier}))
