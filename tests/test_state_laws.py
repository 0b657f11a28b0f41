"""The checkpoint's state laws (`properties/checks/streaming/checkpoint_log/state_laws.py`) on written store
listings: which version a committed batch needs, and which partitions an operator must have."""

from __future__ import annotations

from frontier_harness.model.vocabulary.streaming import LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.state_laws import (
    _unrebuildable,
    eviction_law,
    partition_laws,
    state_laws,
)


def store(versions: list[int], bases: list[int], kind: str = "delta") -> dict:
    return {
        LogArg.OPERATOR: 0,
        LogArg.PARTITION: 1,
        LogArg.STORE: "default",
        LogArg.FILE_KIND: kind,
        LogArg.VERSIONS: versions,
        LogArg.BASES: bases,
    }


def test_a_committed_batch_needs_the_version_after_it_and_a_rebuildable_chain_below():
    """Batches 0-2 committed: versions 1-3. Version 3 missing breaks batch 2, and its state cannot be rebuilt
    (no snapshot at or below it follows); with every version there, nothing is broken."""
    assert state_laws(4, store([1, 2, 3], [1]), [0, 1, 2], 10) == []
    broken = state_laws(4, store([1, 2], [1]), [0, 1, 2], 10)
    assert [b.message.split(":")[0] for b in broken] == [
        "state/0/1/3.delta is missing",
        "the state after batch 2 (version 3) cannot be rebuilt",
    ], broken
    assert broken[1].restart.startswith("restart will fail: state for batch 2, partition 1 is missing")


def test_an_operator_has_every_partition_its_offsets_pin_and_only_the_offsets_say_a_restart_fails():
    """Offsets pin 2 shuffle partitions and the metadata says 2: with partition 1 absent both fail, and only
    the offsets' names the restart that fails (on partition 1); with both present, nothing does."""
    args = {LogArg.OPERATOR: 0, LogArg.PARTITIONS: 2}
    assert partition_laws(7, args, [1, 0], ("2", 5), [5]) == []
    pinned, metadata = partition_laws(7, args, [0], ("2", 5), [5])
    assert pinned.restart == "restart will fail: state for batch 5, partition 1 is missing", pinned
    assert metadata.restart == "" and "its metadata says 2" in metadata.message, metadata


def test_a_delta_chain_from_version_one_rebuilds_on_the_empty_state_and_a_gap_names_no_snapshot():
    """Deltas 1-3 with no snapshot rebuild from version 0, the empty state; with delta 2 gone, nothing at or
    below version 2 follows and the message names the snapshot a delta chain lacks."""
    assert _unrebuildable(store([1, 2, 3], []), 3) is None
    file, why = _unrebuildable(store([1, 3], []), 3)
    assert why == f"{file} is missing (and no snapshot at or below version 2 follows)" and file.endswith(
        "2.delta"
    )


def test_files_a_listing_says_are_missing_break_only_a_zip_that_names_them():
    """RocksDB's zip names its files; a delta store's listing of missing files breaks nothing its versions hold."""
    listing = {**store([1, 2], [1]), LogArg.MISSING: [(1, "000008.sst")]}
    assert _unrebuildable(listing, 2) is None
    zipped = {**store([1, 2], [1, 2], kind="zip"), LogArg.MISSING: [(2, "000008.sst")]}
    file, why = _unrebuildable(zipped, 2)
    assert why == f"{file} names 000008.sst, which are not there"


def test_a_store_row_without_an_event_time_bound_breaks_no_eviction_law():
    row = {LogArg.OPERATOR: 0, LogArg.STORE: "default", LogArg.BATCH: 4, LogArg.ROWS: 2}
    assert eviction_law(9, row, {4: 1000}) == []
