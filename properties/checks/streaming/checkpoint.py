"""The *checkpoint* suite: a Structured Streaming checkpoint, read as a history, obeys the model's laws.

The history *is* the log an implementation wrote (`frontier_harness.properties.checks.streaming.checkpoint_log`), so the
check reads nothing from the implementation: `validate-checkpoint` writes a violation
as a counterexample of this suite, and `replay` re-checks the same log. Run by `check`,
the generator draws logs of Spark's engine (`frontier_harness.properties.checks.streaming.strategies.checkpoints`): on a
lawful one the laws must hold (no false alarm); a damaged one opens with
`expect {law, damage}`, written by the generator from the damage it applied (not by the
laws), and the laws must report that law (each damage caught).
"""

from __future__ import annotations

from collections.abc import Sequence

from frontier_harness.model.vocabulary.streaming import LogAction, LogArg
from frontier_harness.properties.checks.streaming.checkpoint_log.coverage import LAWS
from frontier_harness.properties.checks.streaming.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.streaming.oracles.checkpoint_laws import broken_laws
from frontier_harness.properties.checks.streaming.strategies.checkpoints import (
    DAMAGES,
    LOG_DAMAGES,
    draw_checkpoint_log,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.suite import Outcome, Property, Reference, Suite

SUITE_NAME, PROPERTY = "checkpoint", "checkpoint_laws"


def judge(history: History) -> Outcome:
    """The first broken law, at its step, with every broken law shown against "holds".

    A log opening with `expect {law, damage}` instead must break that law. Either way the laws
    `check_log` finds broken must be those the laws' restatement finds (`oracles.checkpoint_laws`).
    """
    broken = check_log(history)
    disagreement = _against_restatement(history, broken)
    if disagreement is not None:
        return disagreement
    expected = [(step, a.args) for step, a in enumerate(history.actions) if a.name == LogAction.EXPECT]
    if expected:
        return _caught(expected[0][0], expected[0][1], broken)
    if not broken:
        return Outcome(ok=True)
    first = broken[0]
    return Outcome(
        ok=False,
        message=f"{first.law}: {first.message}"
        + (f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""),
        expected={(b.step, b.law): frozenset({"holds"}) for b in broken},
        actual={(b.step, b.law): frozenset({b.message}) for b in broken},
        step=first.step,
    )


def _against_restatement(history: History, broken: list) -> Outcome | None:
    """A failure when `check_log` and the restated laws disagree on which laws the log breaks."""
    found, restated = {b.law for b in broken}, broken_laws(history)
    if found == restated:
        return None
    missed, extra = sorted(restated - found), sorted(found - restated)
    steps = [b.step for b in broken if b.law in extra]
    step = min(steps) if steps else len(history.actions) - 1
    message = "the laws disagree with their restatement: " + "; ".join(
        part
        for part in (
            f"they miss {', '.join(missed)}" if missed else "",
            f"they find {', '.join(extra)}, which the log does not break" if extra else "",
        )
        if part
    )
    return Outcome(
        ok=False,
        message=message,
        expected={(step, "laws"): frozenset(restated)},
        actual={(step, "laws"): frozenset(found)},
        step=step,
    )


def _caught(step: int, expect: dict, broken: list) -> Outcome:
    """A damaged log: `expect["law"]` must be among the broken laws, its message naming what `expect`
    says it names (the damaged file, the batch) and, once, the restart line `expect` says (or none)."""
    mine = [b for b in broken if b.law == expect[LogArg.LAW]]
    if mine:
        return _said(step, expect, mine)
    found = sorted({b.law for b in broken})
    return Outcome(
        ok=False,
        message=f"{expect['damage']} must break {expect['law']}, but the laws found "
        + (", ".join(found) if found else "nothing"),
        expected={(step, "laws"): frozenset({expect[LogArg.LAW]})},
        actual={(step, "laws"): frozenset(found)},
        step=step,
    )


def _said(step: int, expect: dict, mine: list) -> Outcome:
    named, restart = expect.get(LogArg.NAMED), expect.get(LogArg.RESTART)
    if named is not None and not any(named in b.message for b in mine):
        return _unsaid(step, expect, f"its message does not name {named!r}", [b.message for b in mine])
    lines = sorted(b.restart for b in mine if b.restart)
    if restart is not None and lines != ([restart] if restart else []):
        return _unsaid(step, expect, f"its restart line is not {restart!r}", lines)
    return Outcome(ok=True)


def _unsaid(step: int, expect: dict, what: str, said: list[str]) -> Outcome:
    return Outcome(
        ok=False,
        message=f"{expect[LogArg.DAMAGE]} breaks {expect[LogArg.LAW]}, but {what}: it says {said}",
        expected={(step, "said"): frozenset({expect.get(LogArg.NAMED) or expect.get(LogArg.RESTART)})},
        actual={(step, "said"): frozenset(said)},
        step=step,
    )


def check(impl: Implementation, histories: Sequence[History]) -> list[Outcome]:
    """The laws on each log (`impl` is not consulted: the log is what it wrote)."""
    return [judge(h) for h in histories]


def events(history: History) -> list[str]:
    """Hard cases of a log: the last batch uncommitted, a batch without new data, purged starts,
    a sink, a compaction (and one dropping files by retention), a file listed twice, each damage."""
    names = [a.name for a in history.actions]
    batches = [a.args for a in history.actions if a.name == LogAction.OFFSETS and LogArg.SOURCE in a.args]
    sinks = [a.args for a in history.actions if a.name == LogAction.SINK]
    expect = [a.args for a in history.actions if a.name == LogAction.EXPECT]
    found = [f"damage: {e['damage']}" for e in expect]
    found += [f"breaks {e['law']}" for e in expect if e[LogArg.LAW] in broken_laws(history)]
    if batches and names[-1] != LogAction.COMMIT:
        found.append("last batch uncommitted")
    if any(a[LogArg.OFFSETS] == b[LogArg.OFFSETS] for a, b in zip(batches, batches[1:])):
        found.append("batch without new data")
    if batches and batches[0][LogArg.BATCH] > 0:
        found.append("log starts after a purge")
    if LogAction.FILE_SINK in names:
        found.append("file sink")
    if any(s.get(LogArg.COMPACT) for s in sinks):
        found.append("compaction")
    if sinks and sinks[0][LogArg.BATCH] > 0:
        found.append("purged prefix")
    if any(e[LogArg.LAW] == "file once" for e in expect):
        found.append("file listed twice")
    if _retention_drop(sinks):
        found.append("compaction drops files by retention")
    return found


def _retention_drop(sinks: list[dict]) -> bool:
    """A compaction that lists fewer files than the entries before it (from the log's start)."""
    listed: set = set()
    for entry in sinks:
        files = set(entry.get(LogArg.FILES, []) or [])
        if entry.get(LogArg.COMPACT) and not listed <= files:
            return True
        listed |= files
    return False


SUITE = Suite(
    name=SUITE_NAME,
    doc="Structured Streaming checkpoints as histories: the offset log is a remap; commits and sink agree.",
    properties=(
        Property(
            name=PROPERTY,
            doc="Offsets monotone per stream, each batch bound once; commits after offsets, at most one "
            "uncommitted batch; the file sink's log holds each batch once, with no gap, every committed "
            "batch, each data file under one batch, compactions complete; purges only as Spark purges.",
            draw=draw_checkpoint_log,
            check=check,
            events=events,
        ),
    ),
    default_impl="model",
    reference=Reference.LAWS,
    calls=(),  # the log is the observation: nothing is asked of an implementation
    required_events=(
        "last batch uncommitted",
        "batch without new data",
        "log starts after a purge",
        "file sink",
        "compaction",
        "purged prefix",
        "file listed twice",
        "compaction drops files by retention",
        *(f"damage: {d}" for d in (*DAMAGES, *LOG_DAMAGES)),
        *(f"breaks {law}" for law in LAWS),
    ),
    domains=("total", "partitioned"),
)
