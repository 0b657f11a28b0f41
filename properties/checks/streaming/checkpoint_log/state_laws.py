"""The laws on a checkpoint's state store files (`state_files` reads them; see it for the layout).

Spark's state store is a shard: version `V` is the state after batch `V - 1`, kept as a
full copy now and then (a snapshot, a zip) and a file per version after it (a delta, a
changelog), partitioned by the shuffle partitions the checkpoint pins, and rebuildable
back to `minBatchesToRetain` versions. Over the committed batches among the newest
`minBatchesToRetain` (the versions Spark keeps):

- `state version made`: every partition holds the file its committed batch made (Spark
  writes one for every batch, data or not);
- `state rebuildable`: every such version can be rebuilt: walking down from it, each
  version has its file until one with a full copy (whose SST files, for a zip, are all
  there), or version 0;
- `state partitions`: an operator has as many partitions as `spark.sql.shuffle.partitions`
  the newest batch pins, and as its metadata says;
- `state evicted` (the rows, read with Spark: `state_rows`): after batch `N` no entry of a
  windowed aggregation belongs to a window whose end is at or below `offsets/N`'s
  `batchWatermarkMs`, and no entry of `dropDuplicatesWithinWatermark` expires at or below it
  (eviction is the expiration rule: an entry no record that is not late can update is dropped).

A restart loads the version of the newest committed batch in every partition: when that one
cannot be rebuilt, or the pinned partitions are more than the state has, Spark's restart
fails (`CANNOT_LOAD_STATE_STORE`), and the broken law says so ("restart will fail: ...").

>>> state = {"operator": 0, "partition": 1, "store": "default", "file_kind": "delta",
...          "versions": [1, 2, 4], "bases": []}
>>> [(b.law, b.restart) for b in state_laws(5, state, committed=[0, 1, 2, 3], retain=100)]
[('state version made', ''), ('state rebuildable', 'restart will fail: state for batch 3, partition 1 is missing (state/0/1/3.delta)')]
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.vocabulary.streaming import LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.broken import Broken

STATE_VERSION_MADE = "state version made"
STATE_REBUILDABLE = "state rebuildable"
STATE_PARTITIONS = "state partitions"
STATE_EVICTED = "state evicted"
DEFAULT_STORE = "default"


def retained(committed: list[int], retain: int) -> list[int]:
    """The committed batches whose state versions Spark keeps: those among the newest `retain`.

    >>> retained([0, 1, 2, 3, 5], 3)
    [3, 5]
    """
    newest = max(committed, default=-1)
    return sorted(b for b in committed if b > newest - retain)


def path(args: dict[str, Any], version: int, kind: str) -> str:
    """The file of `version` of the store `args` names, relative to the checkpoint.

    >>> path({"operator": 0, "partition": 2, "store": "left-keyToNumValues"}, 5, "delta")
    'state/0/2/left-keyToNumValues/5.delta'
    """
    store = "" if args[LogArg.STORE] == DEFAULT_STORE else f"{args[LogArg.STORE]}/"
    return f"state/{args[LogArg.OPERATOR]}/{args[LogArg.PARTITION]}/{store}{version}.{kind}"


def state_laws(step: int, args: dict[str, Any], committed: list[int], retain: int) -> list[Broken]:
    """The laws on one partition's store, given the committed batches."""
    window = retained(committed, retain)
    kind, versions = args[LogArg.FILE_KIND], set(args[LogArg.VERSIONS])
    found = []
    for batch in window:
        if batch + 1 not in versions:
            message = (
                f"{path(args, batch + 1, kind)} is missing: batch {batch} is committed, and Spark writes a "
                f"{kind} for every batch"
            )
            found.append(Broken(step, STATE_VERSION_MADE, message))
    gaps = [(batch, gap) for batch in window if (gap := _unrebuildable(args, batch + 1)) is not None]
    if gaps:  # the first: the versions above it are often built on it
        (batch, gap), (newest, newest_gap) = gaps[0], gaps[-1]
        restart = (
            f"restart will fail: state for batch {newest}, partition {args[LogArg.PARTITION]} is missing "
            f"({newest_gap[0]})"
            if newest == window[-1]
            else ""
        )
        message = f"the state after batch {batch} (version {batch + 1}) cannot be rebuilt: {gap[1]}"
        found.append(Broken(step, STATE_REBUILDABLE, message, restart))
    return found


def _unrebuildable(args: dict[str, Any], version: int) -> tuple[str, str] | None:
    """Where rebuilding `version` fails, walking down from it: `(the file, what is wrong)`, or None."""
    kind, versions, bases = args[LogArg.FILE_KIND], set(args[LogArg.VERSIONS]), set(args[LogArg.BASES])
    absent: dict[int, list[str]] = {}
    for at, name in args.get(LogArg.MISSING, []):
        absent.setdefault(at, []).append(name)
    base = "snapshot" if kind == "delta" else "zip"
    at = version
    while at > 0:
        if at in bases and at not in absent:
            return None
        if at in absent and kind == "zip":
            zipped = path(args, at, "zip")
            return zipped, f"{zipped} names {', '.join(absent[at])}, which are not there"
        if kind == "zip" or at not in versions:
            missing = path(args, at, kind)
            return missing, f"{missing} is missing (and no {base} at or below version {at} follows)"
        at -= 1
    return None


def partition_laws(
    step: int, args: dict[str, Any], found: list[int], pinned: tuple[str, int] | None, committed: list[int]
) -> list[Broken]:
    """`state partitions` for one operator: the partitions `found` against the shuffle partitions the
    newest batch pins (`pinned`: the value and its batch) and against its metadata's count."""
    operator, partitions = args[LogArg.OPERATOR], sorted(set(found))
    expected = []
    if pinned is not None:
        expected.append(
            (int(pinned[0]), f"offsets/{pinned[1]} pins spark.sql.shuffle.partitions {pinned[0]}")
        )
    if LogArg.PARTITIONS in args:
        expected.append((args[LogArg.PARTITIONS], f"its metadata says {args[LogArg.PARTITIONS]}"))
    broken = []
    for count, source in expected:
        if partitions == list(range(count)):
            continue
        absent = [p for p in range(count) if p not in partitions]
        restart = (
            f"restart will fail: state for batch {committed[-1]}, partition {absent[0]} is missing"
            if absent and committed and source.startswith("offsets")
            else ""
        )
        message = f"operator {operator} has state partitions {partitions}, but {source}"
        broken.append(Broken(step, STATE_PARTITIONS, message, restart))
    return broken


def eviction_law(step: int, args: dict[str, Any], watermarks: dict[int, int]) -> list[Broken]:
    """`state evicted` on one store's rows after one batch, given each batch's watermark.

    >>> rows = {"operator": 0, "store": "default", "batch": 4, "rows": 2, "oldest_bound_ms": 1000}
    >>> [b.law for b in eviction_law(9, rows, {4: 1000})], eviction_law(9, rows, {4: 999})
    (['state evicted'], [])
    """
    batch, bound = args[LogArg.BATCH], args.get(LogArg.OLDEST_BOUND_MS)
    watermark = watermarks.get(batch)
    if bound is None or watermark is None or bound > watermark:
        return []
    message = (
        f"after batch {batch}, operator {args[LogArg.OPERATOR]} still holds an entry whose window ends (or "
        f"which expires) at {bound} ms, at or below the batch's watermark {watermark} ms (offsets/{batch}): "
        "Spark evicts it in that batch, so its state grows"
    )
    return [Broken(step, STATE_EVICTED, message)]
