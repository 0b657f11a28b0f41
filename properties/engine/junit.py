"""JUnit XML for CI: one testcase per (suite, property, domain, implementation), plus one per missing hard case.

Each property's testcase carries its counts as `<properties>`: histories
checked, histories the model rejected, and hard cases reached, and the
implementation it judged. A property whose reference is the model's own
answer is, in the model's lane, a skipped testcase: no verdict either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

from frontier_harness.properties.engine.lanes import NO_ORACLE, LaneResult
from frontier_harness.properties.engine.runner import SuiteResult
from frontier_harness.properties.engine.verdict import Verdict


def write_junit(
    path: Path,
    results: Sequence[LaneResult | SuiteResult],
    counterexamples: dict,
    proofs: Sequence = (),
    corpus: Sequence = (),
) -> None:
    """`counterexamples` maps (suite, implementation, property, domain) to the file written; proofs and
    corpus: `verify`. A bare `SuiteResult` is named by its counterexample's implementation, if any."""
    root = ET.Element("testsuites", name="frontier-harness")
    suites: dict[str, ET.Element] = {}
    for lane in map(_lane, results):
        node = suites.get(lane.suite)
        if node is None:
            node = suites[lane.suite] = ET.SubElement(root, "testsuite", name=lane.suite, tests="0")
        _lane_cases(node, lane, counterexamples)
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


def _lane(result: LaneResult | SuiteResult) -> LaneResult:
    if isinstance(result, LaneResult):
        return result
    impls = {r.failure.impl for r in result.results if r.failure is not None}
    return LaneResult(impls.pop() if len(impls) == 1 else "", result)


def _lane_cases(node: ET.Element, lane: LaneResult, counterexamples: dict) -> None:
    """The lane's testcases: each property on each domain, each reference-only property, each missing case."""
    suffix = f" ({lane.impl})" if lane.impl else ""
    for r in lane.result.results:
        case = ET.SubElement(
            node,
            "testcase",
            classname=lane.suite,
            name=f"{r.property}[{r.domain}]{suffix}",
            time=f"{r.seconds:.3f}",
        )
        counts = ET.SubElement(case, "properties")
        for name, value in (
            ("implementation", lane.impl),
            ("histories", r.examples),
            ("rejected", r.rejected),
            ("hard cases", len(r.events)),
        ):
            ET.SubElement(counts, "property", name=name, value=str(value))
        if r.failure is not None:
            failure = ET.SubElement(case, "failure", message=r.failure.message)
            written = counterexamples.get((lane.suite, lane.impl, r.property, r.domain), "")
            failure.text = f"counterexample: {written}"
        elif r.verdict is Verdict.NOT_RUN:  # no verdict to claim: an error, never a pass
            ET.SubElement(case, "error", message=f"not run: {r.reason}")
        elif r.verdict is Verdict.NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=f"not applicable: {r.reason}")
    for name in lane.reference_only:
        case = ET.SubElement(node, "testcase", classname=lane.suite, name=f"{name}{suffix}")
        ET.SubElement(case, "skipped", message=f"{lane.impl}: {NO_ORACLE}")
    for missing in lane.result.missing_events:
        case = ET.SubElement(node, "testcase", classname=lane.suite, name=f"reaches: {missing}{suffix}")
        ET.SubElement(case, "failure", message=f"the generator never produced: {missing}")
    for unshown in lane.result.not_shown_events:
        case = ET.SubElement(node, "testcase", classname=lane.suite, name=f"reaches: {unshown}{suffix}")
        message = f"not shown in {lane.result.histories} histories: run --profile ci"
        ET.SubElement(case, "skipped", message=message)
    for cut in lane.result.not_run_events:
        case = ET.SubElement(node, "testcase", classname=lane.suite, name=f"reaches: {cut}{suffix}")
        ET.SubElement(case, "skipped", message="not run: the run was cut short")
