"""A pytest plugin that writes what a run would collect: each test's node id and why a marker skips it.

Loaded by `tests/test_claims.py` in a `--collect-only` run (`-p tests.collected_tests`), it writes a JSON
object to the file `FRONTIER_HARNESS_COLLECTED` names: node id -> the reasons its markers give for not
running it (a `skip`, a `skipif` whose condition holds, an `xfail` with `run=False`), empty when nothing
stops it. A skip decided inside the test (`pytest.skip(...)` at run time) is not a marker and is not seen.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

OUTPUT = "FRONTIER_HARNESS_COLLECTED"
NIGHTLY = "nightly"


def marker_skips(item: pytest.Item) -> list[str]:
    """Why `item`'s markers stop it running, one reason a marker; empty when none does (`slow` does not:
    `.ci/run`'s second part runs it).

    >>> from types import SimpleNamespace
    >>> marks = [pytest.mark.slow, pytest.mark.skipif(False, reason="never"), pytest.mark.skipif(True, reason="no X")]
    >>> marks += [pytest.mark.xfail(reason="flaky"), pytest.mark.xfail(run=False, reason="hangs"), pytest.mark.skip]
    >>> marker_skips(SimpleNamespace(iter_markers=lambda: [m.mark for m in marks + [pytest.mark.nightly]]))
    ['skipif: no X', 'xfail(run=False): hangs', 'skip: ', 'nightly: .ci/run leaves it to the nightly run']
    """
    reasons = []
    for mark in item.iter_markers():
        said = mark.kwargs.get("reason") or next((a for a in mark.args if isinstance(a, str)), "")
        holds = any(isinstance(c, str) or c for c in mark.args)  # a string condition may hold: counted
        if mark.name == "skip" or (mark.name == "skipif" and holds):
            reasons.append(f"{mark.name}: {said}")
        elif mark.name == "xfail" and not mark.kwargs.get("run", True):
            reasons.append(f"xfail(run=False): {said}")
        elif mark.name == "nightly":
            reasons.append(f"{NIGHTLY}: .ci/run leaves it to the nightly run")
    return reasons


def pytest_collection_finish(session: pytest.Session) -> None:
    output = os.environ.get(OUTPUT)
    if output:
        collected = {item.nodeid: marker_skips(item) for item in session.items}
        Path(output).write_text(json.dumps(collected, indent=1, sort_keys=True))
