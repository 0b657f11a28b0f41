"""The Spark store's manifest: which SSTs make up the LSM tree, and the rules for changing it.

An SST is named (`sst-<n>`, unique within its store) and lives in a segment file
(`path`) beside other SSTs, its rows tagged with the store and the SST name.
The manifest lists L0 SSTs then sorted runs, newest first, and the clock reading
of its newest commit (a flush or a compaction). The span rules are written here
from the seed's words, not copied from the model, so a slip in one is caught by
the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from frontier_harness.model.errors import BadCompaction


@attrs.frozen
class SstInfo:
    """An SST's metadata: where its rows are, when it was created, its row timestamp range,
    whether any row may expire (`has_ttl`) and how many rows it holds."""

    name: str
    path: str
    creation_timestamp: int
    min_ts: int
    max_ts: int
    has_ttl: bool
    rows: int


@attrs.frozen
class Manifest:
    """L0 SSTs and sorted runs (newest first), the newest commit's clock reading, the last
    flushed sequence number and the next SST number."""

    l0: tuple[SstInfo, ...] = ()
    runs: tuple[SstInfo, ...] = ()
    timestamp: int | None = None
    last_seq: int = 0
    next_sst: int = 0

    @property
    def sources(self) -> tuple[SstInfo, ...]:
        """Every SST, newest first; the last one is the last (oldest) run."""
        return self.l0 + self.runs

    def to_json(self) -> dict[str, Any]:
        return {
            "l0": [attrs.asdict(s) for s in self.l0],
            "runs": [attrs.asdict(s) for s in self.runs],
            "timestamp": self.timestamp,
            "last_seq": self.last_seq,
            "next_sst": self.next_sst,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        return cls(
            tuple(SstInfo(**s) for s in data["l0"]),
            tuple(SstInfo(**s) for s in data["runs"]),
            data["timestamp"],
            data["last_seq"],
            data["next_sst"],
        )


def check_span(order: Sequence[str], n_l0: int, picked: Sequence[str]) -> tuple[int, int]:
    """Positions `(first, last)` in `order` (source names, newest first) of the SSTs `picked`.

    `picked` must name each SST once and be exactly the window of `len(picked)` sources
    starting at the newest of them; a window that starts in L0 must reach the oldest L0 SST
    (an older L0 SST must never end up above the output run).
    """
    position = {name: k for k, name in enumerate(order)}
    missing = [n for n in picked if n not in position]
    if not picked or missing:
        raise BadCompaction(
            list(picked), f"no SSTs, or SSTs this store lacks {missing}; it has {list(order)}"
        )
    first = min(position[n] for n in picked)
    last = first + len(picked) - 1
    if sorted(picked) != sorted(order[first : last + 1]):
        raise BadCompaction(list(picked), "not a contiguous span of sources (each named once)")
    if first < n_l0 and last < n_l0 - 1:
        raise BadCompaction(list(picked), "L0 SSTs must be compacted with every older L0 SST")
    return first, last


def periodic_names(sources: Sequence[SstInfo], n_l0: int, now: int, interval: int) -> tuple[str, ...]:
    """What periodic compaction takes at `now`: from the newest to the oldest SST with TTL rows
    created more than `interval` ms ago (choice: strictly more), and every older L0 SST with them."""
    due = [k for k, s in enumerate(sources) if s.has_ttl and s.creation_timestamp < now - interval]
    if not due:
        return ()
    end = max(due[-1], n_l0 - 1) if due[0] < n_l0 else due[-1]
    return tuple(s.name for s in sources[due[0] : end + 1])


def after_compaction(manifest: Manifest, first: int, last: int, out: SstInfo | None, now: int) -> Manifest:
    """The manifest once sources `first..last` are replaced by `out` (None: nothing was left),
    a sorted run placed where they were; the commit's clock reading is `now`."""
    sources, n_l0 = manifest.sources, len(manifest.l0)
    made = (out,) if out is not None else ()
    return attrs.evolve(
        manifest,
        l0=sources[: min(first, n_l0)],
        runs=sources[n_l0:first] + made + sources[last + 1 :],
        timestamp=now,
        next_sst=manifest.next_sst + 1,
    )
