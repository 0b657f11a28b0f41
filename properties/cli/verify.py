"""`frontier-harness verify`: the regression corpus and the one summary table.

A counterexample file committed to the corpus (default `counterexamples/` in the
user's repository) stays a regression test forever, the way Hypothesis's
`@example` does: `verify` replays it against the implementation it names and
fails while it still reproduces; a file that can no longer be read, or whose
history is not a valid one, is bad input (`verify` exits 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
from rich.table import Table

from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.lanes import NO_ORACLE, LaneResult
from frontier_harness.properties.engine.verdict import Verdict


@attrs.frozen
class CorpusResult:
    """One corpus file: whether it now holds, and why not."""

    path: Path
    passed: bool
    message: str
    invalid: bool = False  # not a valid history (or not a readable file): bad input, exit 2


def replay_corpus(directory: Path) -> list[CorpusResult]:
    """Replays every `*.itf.json` under `directory` (none if it does not exist)."""
    return [_replay(path) for path in sorted(Path(directory).glob("**/*.itf.json"))]


def _replay(path: Path) -> CorpusResult:
    from frontier_harness.properties.adapters import load_implementation
    from frontier_harness.properties.checks.registry import get_suite
    from frontier_harness.properties.engine.runner import replay

    try:
        cx = counterexample.read(path)
        suite, impl = get_suite(cx.suite), load_implementation(cx.impl)
        suite.require(impl, cx.impl)
        impl.prepare()
        outcome = replay(suite, impl, cx)
    except HarnessError as exc:
        return CorpusResult(path, False, f"unreadable: {exc}", invalid=True)
    return CorpusResult(path, outcome.ok, "holds" if outcome.ok else f"still fails: {outcome.message}")


def summary_table(
    results: Sequence[LaneResult], proofs: Sequence, corpus: Sequence[CorpusResult], stopped: bool = False
) -> Table:
    """Suites, proofs and corpus files, one line each group member, one verdict column; `stopped`: the
    proofs and the corpus did not run (`--fail-fast` after a failing suite)."""
    table = Table(title="frontier-harness verify")
    for column in ("kind", "name", "detail", "verdict"):
        table.add_column(column)
    for lane in results:
        table.add_row("suite", f"{lane.suite} ({lane.impl})", *_lane_verdict(lane))
    for proof in proofs:
        table.add_row(
            "proof",
            proof.obligation.name,
            f"{len(proof.verdicts)} cases, {proof.seconds:.2f}s",
            _verdict(proof.holds, proof.status.upper()),
        )
    for item in corpus:
        table.add_row("corpus", item.path.name, item.message, _verdict(item.passed))
    if stopped:
        table.add_row("proofs, corpus", "(not run)", "--fail-fast stopped at the first failure", "not run")
    elif not corpus:
        table.add_row("corpus", "(empty)", "no counterexample files to replay", _verdict(True))
    return table


def _lane_verdict(lane: LaneResult) -> tuple[str, str]:
    """A lane's detail and verdict; a lane that only shows the model as the reference has no verdict."""
    suite = lane.result
    if not suite.results:
        return f"{', '.join(lane.reference_only)}: compared with the model itself", f"[blue]{NO_ORACLE}[/]"
    detail = f"{sum(r.examples for r in suite.results)} histories"
    for verdict in (Verdict.FAILED, Verdict.NOT_RUN, Verdict.NOT_APPLICABLE):
        named = [f"{r.property}[{r.domain}]" for r in suite.results if r.verdict is verdict]
        detail += f"; {verdict}: {', '.join(named)}" if named else ""
    if suite.missing_events:
        detail += f"; never reached: {', '.join(suite.missing_events)}"
    if suite.not_shown_events:
        detail += f"; not shown in {suite.histories} histories: {', '.join(suite.not_shown_events)}"
    if suite.not_run_events:
        detail += f"; hard cases not run: {', '.join(suite.not_run_events)}"
    if lane.reference_only:
        detail += f"; {NO_ORACLE}: {', '.join(lane.reference_only)}"
    return detail, _verdict(suite.passed)


def _verdict(passed: bool, text: str = "") -> str:
    return f"[green]{text or 'passed'}[/]" if passed else f"[red]{text or 'FAILED'}[/]"
