"""The *checkpoint* suite: a Structured Streaming checkpoint, read as a history, obeys the model's laws.

The history *is* the log an implementation wrote (`frontier_harness.properties.checks.ingestion.checkpoint_log`), so the
check reads nothing from the implementation: `validate-checkpoint` writes a violation
as a counterexample of this suite, and `replay` re-checks the same log. Run by `check`,
the generator draws lawful logs of Spark's engine (`frontier_harness.properties.checks.ingestion.strategies.checkpoints`):
the laws must hold on every one (no false alarm), and the tests hold edited logs
against them (each broken law caught).
"""

from __future__ import annotations

from collections.abc import Sequence

from frontier_harness.properties.checks.ingestion.checkpoint_log.laws import check_log
from frontier_harness.properties.checks.ingestion.strategies.checkpoints import draw_checkpoint_log
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.suite import Outcome, Property, Suite

SUITE_NAME, PROPERTY = "checkpoint", "checkpoint_laws"


def judge(history: History) -> Outcome:
    """The first broken law, at its step, with every broken law shown against "holds"."""
    broken = check_log(history)
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


def check(impl: Implementation, histories: Sequence[History]) -> list[Outcome]:
    """The laws on each log (`impl` is not consulted: the log is what it wrote)."""
    return [judge(h) for h in histories]


def events(history: History) -> list[str]:
    """Hard cases of a log: the last batch uncommitted, a batch without new data, a purged start, a sink."""
    names = [a.name for a in history.actions]
    batches = [a.args for a in history.actions if a.name == "offsets" and "source" in a.args]
    found = []
    if batches and names[-1] != "commit":
        found.append("last batch uncommitted")
    if any(a["offsets"] == b["offsets"] for a, b in zip(batches, batches[1:])):
        found.append("batch without new data")
    if batches and batches[0]["batch"] > 0:
        found.append("log starts after a purge")
    if "file_sink" in names:
        found.append("file sink")
    return found


SUITE = Suite(
    name=SUITE_NAME,
    doc="Structured Streaming checkpoints as histories: the offset log is a remap; commits and sink agree.",
    properties=(
        Property(
            name=PROPERTY,
            doc="Offsets monotone per stream, each batch bound once; commits after offsets, at most one "
            "uncommitted batch; the file sink holds each batch once, every committed batch.",
            draw=draw_checkpoint_log,
            check=check,
            events=events,
        ),
    ),
    default_impl="model",
    calls=(),  # the log is the observation: nothing is asked of an implementation
    required_events=(
        "last batch uncommitted",
        "batch without new data",
        "log starts after a purge",
        "file sink",
    ),
    domains=("total", "partitioned"),
)
