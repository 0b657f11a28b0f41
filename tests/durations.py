"""The slow tests' durations in the last measured run, so a `--run-slow` run starts the longest first.

One worker more than the cores shares the slow tests (`.ci/run`'s second part: `--dist load
--maxschedchunk 1 -n $(($(nproc) + 1))`, each worker handed the next test when it frees up). In collection order, a ten-minute test collected last
starts when the other worker is nearly done and the run waits on it alone; longest first, the last tests
to start are the shortest, and the workers end within a short test of each other (LPT scheduling).
`ordered` sorts the slow tests by `durations.json` (a test it does not know first: a new test may be
long), the rest after them in collection order. The file is measured, never typed:

    python -m tests.durations .frontier-harness/junit-slow.xml   # after `.ci/run` (or any --run-slow run)

>>> ordered(["a", "b", "c", "d"], {"b": 10, "c": 300}, slow={"a", "b", "c"})
['a', 'c', 'b', 'd']
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")
ROUNDING = 10  # seconds: a test's figure moves only when its duration does, not with every run's noise


def known() -> dict[str, int]:
    """The durations on file, by node id (none when the file is missing)."""
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def ordered(ids: Iterable[str], durations: Mapping[str, int], slow: set[str]) -> list[str]:
    """`ids` with the slow ones first, unknown then longest first, and the others after them, in order."""
    ids = list(ids)
    first = sorted((i for i in ids if i in slow), key=lambda i: -durations.get(i, float("inf")))
    return first + [i for i in ids if i not in slow]


def node_id(classname: str, name: str, root: Path) -> str:
    """A JUnit test case's pytest node id: its class name's longest prefix that is a module under `root`.

    >>> node_id("tests.test_readme", "test_every_command[a.b]", Path(__file__).parent.parent)
    'tests/test_readme.py::test_every_command[a.b]'
    """
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        module = Path(*parts[:cut]).with_suffix(".py")
        if (root / module).exists():
            return "::".join([module.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}"


def measured(junit: Path, root: Path) -> dict[str, int]:
    """Each test case of a JUnit file that ran (not skipped), its time rounded up to `ROUNDING` seconds."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("skipped") is None:
            seconds = float(case.get("time") or 0)
            found[node_id(case.get("classname", ""), case.get("name", ""), root)] = int(
                -(-seconds // ROUNDING) * ROUNDING
            )
    return found


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.durations JUNIT_XML (of a --run-slow run)")
    found = measured(Path(sys.argv[1]), Path(__file__).resolve().parent.parent)
    DURATIONS.write_text(json.dumps(dict(sorted(found.items())), indent=0) + "\n")
    print(f"{DURATIONS}: {len(found)} tests, {sum(found.values())} s in all")
