"""The Spark store's clock: a user clock wrapped so readings never go back, with a durable mark.

`now()` refuses a reading below the largest one handed out (`ClockRegression`,
naming both), and before it hands out a larger one it writes it to `clock.json`
(the high-water mark). A reopened store starts from the mark, the manifest's
timestamp and every WAL row's, the largest of them: so no reading a read or a
compaction took before a crash is ever undercut after it, and a row one of them
saw expired stays hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from frontier_harness.model.errors import ClockRegression
from frontier_harness.spark_impl.ttl.files import read_json, write_json
from frontier_harness.spark_impl.ttl.row import check_reading

MARK_FILE = "clock.json"


class MonotonicClock:
    """Mutable: the floor (the mark) moves with each larger reading."""

    def __init__(self, source: Callable[[], int], root: Path, floor: int | None, sync: bool) -> None:
        self.source, self.path, self.floor, self.sync = source, root / MARK_FILE, floor, sync

    @staticmethod
    def stored_mark(root: Path) -> int | None:
        """The mark a previous session left in `root`, None if none."""
        return read_json(root / MARK_FILE, {"mark": None})["mark"]

    def now(self) -> int:
        """The user clock's reading; `ClockRegression` below the floor (nothing changes then)."""
        reading = check_reading(self.source())
        if self.floor is not None and reading < self.floor:
            raise ClockRegression(self.floor, reading)
        if self.floor is None or reading > self.floor:
            write_json(self.path, {"mark": reading}, self.sync)
            self.floor = reading
        return reading
