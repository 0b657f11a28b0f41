"""`frontier-harness verify`: the pre-merge gate: every suite (ci), every proof, the regression corpus,
in one summary table.

A counterexample file committed to the corpus (default `counterexamples/` in the
user's repository) stays a regression test forever, the way Hypothesis's
`@example` does: `verify` replays it against the implementation it names and
fails while it still reproduces; a file that can no longer be read, or whose
history is not a valid one, is bad input (`verify` exits 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from frontier_harness.properties.cli.arguments import positive_float, run_options
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.config import load_config
from frontier_harness.properties.engine.diagnostics import set_up
from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.exit_codes import ExitCode
from frontier_harness.properties.engine.junit import write_junit
from frontier_harness.properties.engine.pairings import NO_ORACLE, PairingResult
from frontier_harness.properties.engine.verdict import Verdict


def add_parser(verbs: Any) -> None:
    verb = verbs.add_parser(
        "verify", help="pre-merge gate: every suite (ci), every proof, the regression corpus"
    )
    verb.add_argument(
        "--suite",
        action="append",
        help="suite to gate on (repeatable; default every suite); the proofs and the corpus run either way",
    )
    run_options(verb, default_profile="ci")
    verb.add_argument(
        "--corpus", type=Path, help="regression corpus of counterexample files (default: counterexamples/)"
    )
    verb.add_argument(
        "--timeout", type=positive_float, default=10.0, help="solver timeout per case, in seconds"
    )


def run(args: argparse.Namespace, out: Console) -> int:
    """Every suite under the ci profile (or those `--suite` names), every z3 obligation, every file of the
    regression corpus."""
    from frontier_harness.properties.checks.registry import SUITES, get_suite
    from frontier_harness.properties.cli.prove import exit_code
    from frontier_harness.properties.cli.run import run_suites, suites_exit_code
    from frontier_harness.properties.solver import check as obligations
    from frontier_harness.properties.solver.encoding import FAITHFUL

    config = load_config()
    suites = (
        [get_suite(name) for name in args.suite]
        if args.suite
        else [s for s in SUITES.values() if s.name != "prove"]
    )
    results, written = run_suites(args, out, config, suites, None)
    stopped = args.fail_fast and not all(r.passed for r in results)
    if stopped:
        out.print("--fail-fast: a suite failed or did not run; proofs and the corpus not run", markup=False)
    proofs = [] if stopped else obligations.prove(None, FAITHFUL, 0, args.timeout, None)
    corpus = [] if stopped else replay_corpus(args.corpus or Path(config.get("corpus")))
    out.print(summary_table(results, proofs, corpus, stopped))
    if args.junit:
        write_junit(args.junit, results, written, proofs, corpus)
    if any(c.invalid for c in corpus):
        return ExitCode.USAGE
    proved = exit_code(proofs) if proofs else ExitCode.HELD
    judged = suites_exit_code(out, results)  # as `check`'s: a property that did not run is named, exit 2
    if (
        judged is ExitCode.FAILED
        or proved in (ExitCode.FAILED, ExitCode.USAGE)  # refuted, or proving nothing (no case, or trivial)
        or any(not c.passed for c in corpus)
    ):
        return ExitCode.FAILED
    if judged is ExitCode.USAGE:
        return judged
    return ExitCode.INFRASTRUCTURE if proved == ExitCode.INFRASTRUCTURE else ExitCode.HELD


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
    except HarnessError as exc:
        return CorpusResult(path, False, f"unreadable: {exc}", invalid=True)
    # what it raises is the implementation's (exit 2) or the machine's (exit 3), never the file's
    set_up(impl, cx.impl)
    try:
        outcome = replay(suite, impl, cx)
    except HarnessError as exc:
        return CorpusResult(path, False, f"unreadable: {exc}", invalid=True)
    return CorpusResult(path, outcome.ok, "holds" if outcome.ok else f"still fails: {outcome.message}")


def summary_table(
    results: Sequence[PairingResult], proofs: Sequence, corpus: Sequence[CorpusResult], stopped: bool = False
) -> Table:
    """Suites, proofs and corpus files, one line each group member, one verdict column; `stopped`: the
    proofs and the corpus did not run (`--fail-fast` after a failing suite)."""
    table = Table(title="frontier-harness verify")
    for column in ("kind", "name", "detail", "verdict"):
        table.add_column(column)
    for pairing in results:
        table.add_row("suite", f"{pairing.suite} ({pairing.impl})", *_pairing_verdict(pairing))
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


def _pairing_verdict(pairing: PairingResult) -> tuple[str, str]:
    """A pairing's detail and verdict; a pairing that only shows the model as the reference has no verdict."""
    suite = pairing.result
    if not suite.results:
        return f"{', '.join(pairing.reference_only)}: compared with the model itself", f"[blue]{NO_ORACLE}[/]"
    detail = f"{sum(r.examples for r in suite.results)} histories"
    for verdict in (Verdict.FAILED, Verdict.STOPPED, Verdict.NOT_RUN, Verdict.NOT_APPLICABLE):
        named = [f"{r.property}[{r.domain}]" for r in suite.results if r.verdict is verdict]
        detail += f"; {verdict}: {', '.join(named)}" if named else ""
    if suite.missing_events:
        detail += f"; never reached: {', '.join(suite.missing_events)}"
    if suite.not_shown_events:
        detail += f"; not shown in {suite.histories} histories: {', '.join(suite.not_shown_events)}"
    if suite.not_run_events:
        detail += f"; hard cases not run: {', '.join(suite.not_run_events)}"
    if pairing.reference_only:
        detail += f"; {NO_ORACLE}: {', '.join(pairing.reference_only)}"
    return detail, _verdict(suite.passed)


def _verdict(passed: bool, text: str = "") -> str:
    return f"[green]{text or 'passed'}[/]" if passed else f"[red]{text or 'FAILED'}[/]"
