"""The batch ids a writer saw, in this process's memory: the helper `tests.jobs.user:skip_seen_lazily` imports
inside its `write`, so the job's own import never brings it in."""

from __future__ import annotations

SEEN: set[tuple[str, int]] = set()  # (directory, batch_id)


def seen(directory: str, batch_id: int) -> bool:
    return (directory, batch_id) in SEEN


def remember(directory: str, batch_id: int) -> None:
    SEEN.add((directory, batch_id))
