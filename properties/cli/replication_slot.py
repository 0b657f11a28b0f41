"""`validate-checkpoint DIR --slot NAME --dsn CONNINFO`: does a replication slot agree with the checkpoint?

A CDC query's checkpoint binds each batch to a commit end LSN (`{"lsn": n}`, read as a Total stream by
`frontier_harness.properties.checks.streaming.checkpoint_log.offsets`); the slot it reads from must keep
every change a restart needs. Two rules, restated here from the bounded-input-reliance seed, judged
against the slot as PostgreSQL reports it now (`pg_replication_slots`):

- the slot is not past the committed end (the newest committed batch's end LSN): else the changes between
  the two are gone upstream, and a restart fails;
- PostgreSQL did not release WAL the slot still needs (`wal_status` is not `lost`, as it becomes once the
  slot fell further behind than `max_slot_wal_keep_size`).

`agreement(history, slot)` says which holds in one line, with the exit code: 0 both hold, 1 one is
broken, 2 nothing to judge (the checkpoint has no committed batch of an LSN source, or there is no such
slot).

>>> from frontier_harness.properties.engine.history import Action, History
>>> log = History("total", (Action("offsets", {"batch": 0, "source": "0", "domain": "total", "offsets": [200]}),
...                         Action("commit", {"batch": 0})))
>>> agreement(log, "s", (300, 100, "reserved"))
(<ExitCode.FAILED: 1>, "slot 's' is ahead of the checkpoint: its confirmed flush LSN 0/12C is past the committed end 0/C8 (batch 0): the changes in (0/C8, 0/12C] are gone upstream, and a restart fails")
>>> agreement(log, "s", (150, 100, "reserved"))[0]
<ExitCode.HELD: 0>
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.cdc import lsn_text
from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.history import History

Slot = tuple[int, int | None, str | None]  # confirmed flush LSN, restart LSN, wal_status


def committed_end(history: History) -> tuple[int, int] | None:
    """The newest committed batch of the checkpoint's one Total stream and its end LSN; None without one."""
    ends = {
        a.args[LogArg.BATCH]: a.args[LogArg.OFFSETS][0]
        for a in history.actions
        if a.name == LogAction.OFFSETS and a.args.get(LogArg.DOMAIN) == "total"
    }
    done = [
        a.args[LogArg.BATCH]
        for a in history.actions
        if a.name == LogAction.COMMIT and a.args[LogArg.BATCH] in ends
    ]
    return (max(done), ends[max(done)]) if done else None


def agreement(history: History, name: str, slot: Slot | None) -> tuple[ExitCode, str]:
    """The verdict on slot `name` (None: no such slot) against the checkpoint `history`, in one line."""
    if slot is None:
        return ExitCode.USAGE, f"not run: there is no replication slot {name!r}"
    found = committed_end(history)
    if found is None:
        return (
            ExitCode.USAGE,
            "not run: the checkpoint has no committed batch of an LSN source to compare the slot with",
        )
    batch, end = found
    confirmed, _, wal = slot
    if confirmed > end:
        return ExitCode.FAILED, (
            f"slot {name!r} is ahead of the checkpoint: its confirmed flush LSN {lsn_text(confirmed)} is past "
            f"the committed end {lsn_text(end)} (batch {batch}): the changes in ({lsn_text(end)}, "
            f"{lsn_text(confirmed)}] are gone upstream, and a restart fails"
        )
    if wal == "lost":
        return ExitCode.FAILED, (
            f"slot {name!r} lost WAL it needed (wal_status 'lost'): the changes after its confirmed flush LSN "
            f"{lsn_text(confirmed)} and the committed end {lsn_text(end)} (batch {batch}) can no longer be read"
        )
    kept = (  # PostgreSQL's docs: 'unreserved' WAL goes at the next checkpoint unless the slot catches up
        "but PostgreSQL no longer keeps all its WAL: it goes at the next checkpoint unless the slot catches "
        "up"
        if wal == "unreserved"
        else "and its WAL is kept"
    )
    return ExitCode.HELD, (
        f"slot {name!r} agrees with the checkpoint: its confirmed flush LSN {lsn_text(confirmed)} is at or "
        f"behind the committed end {lsn_text(end)} (batch {batch}), {kept} (wal_status {wal})"
    )
