"""`bench`'s reporting: the calibration line it measures itself, `--json` recording it, and `--markdown` writing
one section per benchmark of the figures page, headed by the date, the cores, the load and the calibration."""

from __future__ import annotations

import datetime
import json
import types

import pytest

from frontier_harness.properties import bench
from frontier_harness.properties.bench import Figure, calibration
from frontier_harness.properties.cli import bench as bench_verb
from frontier_harness.properties.cli.main import main

FIXED = calibration.Calibration(0.412, 0.518, 1.25, 2)


@pytest.fixture
def fake_benchmarks(monkeypatch) -> dict[str, list[Figure]]:
    """`collections` and `ttl` as benchmarks that measure nothing: their figures are whatever the test sets."""
    measured = {"collections": [], "ttl": []}

    def modules(names):
        return [
            types.SimpleNamespace(
                __name__=f"frontier_harness.properties.bench.{n}", figures=lambda s, n=n: measured[n]
            )
            for n in bench.NAMES
            if n in names
        ]

    monkeypatch.setattr(bench, "modules", modules)
    monkeypatch.setattr(bench_verb, "measure", lambda: FIXED)
    return measured


def test_the_calibration_is_printed_and_recorded_beside_the_figures(fake_benchmarks, tmp_path, capsys):
    fake_benchmarks["collections"] = [
        Figure("naive", 2.0, "/s"),
        Figure("batched", 1357.0, "/s", baseline="naive"),
    ]
    assert main(["bench", "--only", "collections", "--json", str(tmp_path / "b.json")]) == 0
    assert FIXED.line() in capsys.readouterr().out
    figures = json.loads((tmp_path / "b.json").read_text())["figures"]
    assert [f["ratio"] for f in figures] == [None, 678.5]
    assert {json.dumps(f["calibration"]) for f in figures} == {
        '{"python_loop_s": 0.412, "jvm_start_s": 0.518, "load": 1.25, "cores": 2}'
    }


def test_markdown_writes_each_benchmarks_section_and_rewrites_only_those_that_ran(fake_benchmarks, tmp_path):
    page = tmp_path / "figures.md"
    fake_benchmarks["collections"] = [Figure("batched", 1357.0, "/s")]
    fake_benchmarks["ttl"] = [Figure("ttl_rate", 403.0, "/s")]
    assert main(["bench", "--only", "collections", "--only", "ttl", "--markdown", str(page)]) == 0
    first = page.read_text()
    assert first.count("<!-- begin bench ") == 2 and "| `batched` | 1,357 |" in first
    assert f"--scale 1`, {datetime.date.today().isoformat()}; {FIXED.line()}" in first
    fake_benchmarks["collections"] = [Figure("batched", 2000.0, "/s")]
    assert main(["bench", "--only", "collections", "--markdown", str(page)]) == 0
    again = page.read_text()
    assert "| `batched` | 2,000 |" in again and "1,357" not in again
    assert again.split("<!-- begin bench ttl -->")[1] == first.split("<!-- begin bench ttl -->")[1]


def test_the_calibration_measures_this_machine(monkeypatch):
    monkeypatch.setattr(calibration, "LOOP_RUNS", 1)
    monkeypatch.setattr(calibration, "JVM_RUNS", 1)
    measured = calibration.measure()
    assert measured.python_loop_s > 0 and measured.cores >= 1
    assert measured.jvm_start_s is None or measured.jvm_start_s > 0
    assert measured.line().startswith("calibration: python-loop ")
