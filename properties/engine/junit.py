"""JUnit XML for CI: one testcase per (suite, property, domain), plus one per missing hard case.

Each property's testcase carries its counts as `<properties>`: histories
checked, histories the model rejected, and hard cases reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

from frontier_harness.properties.engine.runner import SuiteResult


def write_junit(
    path: Path,
    results: Sequence[SuiteResult],
    counterexamples: dict,
    proofs: Sequence = (),
    corpus: Sequence = (),
) -> None:
    """`counterexamples` maps (suite, property, domain) to the file written; proofs and corpus: `verify`."""
    root = ET.Element("testsuites", name="frontier-harness")
    for suite in results:
        node = ET.SubElement(root, "testsuite", name=suite.suite, tests=str(len(suite.results)))
        for r in suite.results:
            case = ET.SubElement(
                node,
                "testcase",
                classname=suite.suite,
                name=f"{r.property}[{r.domain}]",
                time=f"{r.seconds:.3f}",
            )
            counts = ET.SubElement(case, "properties")
            for name, value in (
                ("histories", r.examples),
                ("rejected", r.rejected),
                ("hard cases", len(r.events)),
            ):
                ET.SubElement(counts, "property", name=name, value=str(value))
            if r.failure is not None:
                failure = ET.SubElement(case, "failure", message=r.failure.message)
                failure.text = (
                    f"counterexample: {counterexamples.get((suite.suite, r.property, r.domain), '')}"
                )
        for missing in suite.missing_events:
            case = ET.SubElement(node, "testcase", classname=suite.suite, name=f"reaches: {missing}")
            ET.SubElement(case, "failure", message=f"the generator never produced: {missing}")
    if proofs:
        node = ET.SubElement(root, "testsuite", name="prove", tests=str(len(proofs)))
        for proof in proofs:
            case = ET.SubElement(
                node, "testcase", classname="prove", name=proof.obligation.name, time=f"{proof.seconds:.3f}"
            )
            if proof.status != "proved":
                ET.SubElement(case, "failure", message=f"obligation {proof.status}")
    if corpus:
        node = ET.SubElement(root, "testsuite", name="corpus", tests=str(len(corpus)))
        for item in corpus:
            case = ET.SubElement(node, "testcase", classname="corpus", name=item.path.name)
            if not item.passed:
                ET.SubElement(case, "failure", message=item.message)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
