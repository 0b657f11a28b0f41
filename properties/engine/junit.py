"""JUnit XML for CI: one testcase per (suite, property, domain, implementation), plus one per missing hard case.

Each property's testcase carries its counts as `<properties>`: histories
checked, histories the model rejected, and hard cases reached, and the
implementation it judged. A property whose reference is the model's own
answer is, in the model's pairing, a skipped testcase: no verdict either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

from frontier_harness.properties.engine.pairings import NO_ORACLE, PairingResult
from frontier_harness.properties.engine.results import SuiteResult
from frontier_harness.properties.engine.verdict import Verdict


def write_junit(
    path: Path,
    results: Sequence[PairingResult | SuiteResult],
    counterexamples: dict,
    proofs: Sequence = (),
    corpus: Sequence = (),
) -> None:
    """`counterexamples` maps (suite, implementation, property, domain) to the file written; proofs and
    corpus: `verify`. A bare `SuiteResult` is named by its counterexample's implementation, if any."""
    root = ET.Element("testsuites", name="frontier-harness")
    suites: dict[str, ET.Element] = {}
    for pairing in map(_pairing, results):
        node = suites.get(pairing.suite)
        if node is None:
            node = suites[pairing.suite] = ET.SubElement(root, "testsuite", name=pairing.suite, tests="0")
        _pairing_cases(node, pairing, counterexamples)
        node.set("tests", str(len(node)))
    if proofs:
        node = ET.SubElement(root, "testsuite", name="prove", tests=str(len(proofs)))
        for proof in proofs:
            case = ET.SubElement(
                node, "testcase", classname="prove", name=proof.obligation.name, time=f"{proof.seconds:.3f}"
            )
            if not proof.holds:
                ET.SubElement(case, "failure", message=f"obligation {proof.status}")
    if corpus:
        node = ET.SubElement(root, "testsuite", name="corpus", tests=str(len(corpus)))
        for item in corpus:
            case = ET.SubElement(node, "testcase", classname="corpus", name=item.path.name)
            if not item.passed:
                ET.SubElement(case, "failure", message=item.message)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _pairing(result: PairingResult | SuiteResult) -> PairingResult:
    if isinstance(result, PairingResult):
        return result
    impls = {r.failure.impl for r in result.results if r.failure is not None}
    return PairingResult(impls.pop() if len(impls) == 1 else "", result)


def _pairing_cases(node: ET.Element, pairing: PairingResult, counterexamples: dict) -> None:
    """The pairing's testcases: each property on each domain, each reference-only property, each missing case."""
    suffix = f" ({pairing.impl})" if pairing.impl else ""
    for r in pairing.result.results:
        case = ET.SubElement(
            node,
            "testcase",
            classname=pairing.suite,
            name=f"{r.property}[{r.domain}]{suffix}",
            time=f"{r.seconds:.3f}",
        )
        counts = ET.SubElement(case, "properties")
        for name, value in (
            ("implementation", pairing.impl),
            ("histories", r.examples),
            ("rejected", r.rejected),
            ("hard cases", len(r.events)),
        ):
            ET.SubElement(counts, "property", name=name, value=str(value))
        if r.failure is not None:
            failure = ET.SubElement(case, "failure", message=r.failure.message)
            written = counterexamples.get((pairing.suite, pairing.impl, r.property, r.domain), "")
            failure.text = f"counterexample: {written}"
        elif r.verdict in (Verdict.NOT_RUN, Verdict.STOPPED):  # no verdict to claim: an error, never a pass
            ET.SubElement(case, "error", message=f"{r.verdict}: {r.reason}")
        elif r.verdict is Verdict.NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=f"not applicable: {r.reason}")
    for name in pairing.reference_only:
        case = ET.SubElement(node, "testcase", classname=pairing.suite, name=f"{name}{suffix}")
        ET.SubElement(case, "skipped", message=f"{pairing.impl}: {NO_ORACLE}")
    for missing in pairing.result.missing_events:
        case = ET.SubElement(node, "testcase", classname=pairing.suite, name=f"reaches: {missing}{suffix}")
        ET.SubElement(case, "failure", message=f"never reached: {missing}")
    for unshown in pairing.result.not_shown_events:
        case = ET.SubElement(node, "testcase", classname=pairing.suite, name=f"reaches: {unshown}{suffix}")
        message = f"not shown in {pairing.result.histories} histories: run --profile ci"
        ET.SubElement(case, "skipped", message=message)
    for cut in pairing.result.not_run_events:
        case = ET.SubElement(node, "testcase", classname=pairing.suite, name=f"reaches: {cut}{suffix}")
        ET.SubElement(case, "skipped", message="not run: the run was cut short")
