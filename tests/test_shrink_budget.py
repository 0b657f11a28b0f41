"""Under `ci` shrinking stops after a count of implementation calls, not seconds: the same command writes
byte-identical counterexample files on a quiet machine and on a loaded one. A wall-clock cap that stops
shrinking first is said, in the file and on the terminal, never a silent stop."""

from __future__ import annotations

import threading

import attrs

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from tests import planted
from tests.helpers import QUICK

PLANTED = "tests.planted:model_keeps_zero_diffs"
ARGV = ["check", "--suite", "collections", "--domain", "total", "--impl", PLANTED, "--profile", "ci"]


def _written(tmp, load: bool) -> dict[str, bytes]:
    stop = threading.Event()

    def busy() -> None:  # takes the interpreter from the run's thread, as a loaded CI machine takes the CPU
        while not stop.is_set():
            sum(range(10_000))

    loaders = [threading.Thread(target=busy, daemon=True) for _ in range(4 if load else 0)]
    for thread in loaders:
        thread.start()
    try:
        assert main([*ARGV, "--out", str(tmp)]) == 1
    finally:
        stop.set()
    return {path.name: path.read_bytes() for path in tmp.glob("*.itf.json")}


def test_ci_writes_byte_identical_files_on_a_quiet_and_a_loaded_machine(tmp_path):
    quiet = _written(tmp_path / "quiet", load=False)
    loaded = _written(tmp_path / "loaded", load=True)
    assert quiet and loaded == quiet


def test_a_wall_clock_cap_that_stops_shrinking_is_said_in_the_file_and_the_output(
    tmp_path, capsys, monkeypatch
):
    capped = attrs.evolve(QUICK, screening_histories=500, shrink_seconds=0.0)
    result = run_suite(
        SuiteRequest(
            get_suite("collections"), planted.model_keeps_zero_diffs(), PLANTED, capped, 3, ["total"]
        )
    )
    failure = result.results[0].failure
    assert failure is not None and failure.stopped is not None
    assert failure.stopped.startswith("shrinking stopped at its wall-clock cap of 0 s after ")
    (tmp_path / "pyproject.toml").write_text("[tool.frontier-harness.profiles.ci]\nshrink_seconds = 0.0\n")
    monkeypatch.chdir(tmp_path)
    assert main([*ARGV, "--out", str(tmp_path / "cx")]) == 1
    assert "shrinking stopped at its wall-clock cap of 0 s" in capsys.readouterr().out
    [path] = (tmp_path / "cx").glob("*.itf.json")
    assert '"shrinking": "shrinking stopped at its wall-clock cap' in path.read_text()
