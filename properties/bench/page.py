"""docs/figures.md: the one page of measured figures, each section written by the command that measures it.

A section lies between `<!-- begin NAME -->` and `<!-- end NAME -->`. Writing one
replaces it where it stands, or appends it; the other sections stay as they were,
so `frontier-harness bench --only reclocking --markdown docs/figures.md` renews the
reclocking figures alone. Every section opens with the command, the date, and the
calibration line (the machine's speed then, its load and its core count).

>>> from frontier_harness.properties.bench.calibration import Calibration
>>> text = with_section("", "demo", "| a | 1 |", "`demo`", Calibration(0.4, 0.5, 1.0, 2), "2025-01-02")
>>> print(text)
# Measured figures
<BLANKLINE>
Generated: never edit by hand. Each section is rewritten by the command it names.
<BLANKLINE>
<!-- begin demo -->
## demo
<BLANKLINE>
`demo`, 2025-01-02; calibration: python-loop 0.400 s, jvm-start 0.500 s, load 1.00 on 2 cores
<BLANKLINE>
| a | 1 |
<!-- end demo -->
<BLANKLINE>
>>> with_section(text, "demo", "| a | 2 |", "`demo`", Calibration(0.4, 0.5, 1.0, 2), "2025-01-03").count("begin demo")
1
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from pathlib import Path

from frontier_harness.properties.bench.calibration import Calibration

TITLE = "# Measured figures\n\nGenerated: never edit by hand. Each section is rewritten by the command it names.\n"


def write_section(path: Path, name: str, body: str, command: str, calibration: Calibration) -> None:
    """Writes section `name` of the page at `path` (made if absent), headed by `command` and `calibration`."""
    old = path.read_text() if path.exists() else ""
    path.write_text(with_section(old, name, body, command, calibration, datetime.date.today().isoformat()))


def with_section(page: str, name: str, body: str, command: str, calibration: Calibration, date: str) -> str:
    """`page` with section `name` replaced, or appended."""
    where = f"{command}, {date}; {calibration.line()}"
    section = f"<!-- begin {name} -->\n## {name}\n\n{where}\n\n{body.strip()}\n<!-- end {name} -->\n"
    pattern = re.compile(rf"<!-- begin {re.escape(name)} -->\n.*?<!-- end {re.escape(name)} -->\n", re.DOTALL)
    if pattern.search(page):
        return pattern.sub(lambda _: section, page)
    return (page or TITLE).rstrip("\n") + "\n\n" + section


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table.

    >>> print(table(["a", "b"], [[1, "x"]]))
    | a | b |
    | --- | --- |
    | 1 | x |
    """
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(str(cell) for cell in line) + " |" for line in lines)
