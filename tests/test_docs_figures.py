"""Figures that change with the code are never typed into prose: README.md and docs/*.md hold no measured
duration and no ratio outside code spans and blocks. They live in docs/figures.md, whose every section the
command it names wrote, headed by the date and the calibration line of the machine that measured it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures.md"
PROSE = [ROOT / "README.md", *(d for d in sorted((ROOT / "docs").glob("*.md")) if d != FIGURES)]
DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|min)(?!\w)")
RATIO = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[x×](?!\w)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
SECTION = re.compile(r"<!-- begin (.+?) -->\n## \1\n\n(.*?)\n\n.*?<!-- end \1 -->", re.DOTALL)


def typed_figures(markdown: str) -> list[str]:
    """The durations and ratios `markdown` states in prose (code blocks and spans left out)."""
    prose = CODE.sub(" ", markdown)
    return [m.group(0) for pattern in (DURATION, RATIO) for m in pattern.finditer(prose)]


@pytest.mark.parametrize("doc", PROSE, ids=lambda d: d.name)
def test_no_measured_figure_is_typed_into_prose(doc):
    assert not typed_figures(doc.read_text()), "move it to docs/figures.md's command, and link there"


def test_a_typed_figure_is_found_and_code_is_not():
    found = typed_figures("ran in 4 min 46 s, 1.27x the sort, ~0.4 s a job and 20 ms a call")
    assert found == ["4 min", "46 s", "0.4 s", "20 ms", "1.27x"]
    assert typed_figures("`--scale 0.5s` and\n```\n12 s\n```\n3 suites, 5 sets, a 2x2 grid, x86") == []


def test_every_section_of_the_figures_page_names_its_command_and_calibration():
    sections = SECTION.findall(FIGURES.read_text())
    assert sections, "docs/figures.md has no generated section"
    for name, heading in sections:
        command = (
            "`python ci/first_file_times.py" if name.startswith("first") else "`frontier-harness bench --only"
        )
        assert heading.startswith(command), (name, heading)
        assert re.search(r", \d{4}-\d\d-\d\d; calibration: python-loop [\d.]+ s, ", heading), (name, heading)
