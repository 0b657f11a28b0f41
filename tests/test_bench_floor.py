"""`bench`'s floor for the trial suites (issue 51): trials per minute as a fraction of what the same
histories cost Spark alone, and where the rest goes, from spans the trial machinery recorded."""

from __future__ import annotations

import json
import re

import pytest

from frontier_harness.properties.bench.floor import CATEGORIES, JUDGING, OTHER
from frontier_harness.properties.cli.main import main

ROWS = [name.replace(" ", "_") for name, _, _ in CATEGORIES] + [JUDGING, OTHER]


@pytest.mark.slow  # a bench run: the judged trials and their floor
@pytest.mark.spark
def test_bench_streaming_reports_the_floor_and_where_the_rest_goes_from_measured_spans(
    spark_session, tmp_path, capsys
):
    out = tmp_path / "bench.json"
    assert main(["bench", "--only", "streaming", "--scale", "0.01", "--json", str(out)]) == 0
    figures = {f["name"]: f for f in json.loads(out.read_text())["figures"]}
    floor, judged = figures["streaming_floor_trials_per_minute"], figures["streaming_job_trials_per_minute"]
    assert judged["baseline"] == floor["name"] and judged["ratio"] == judged["value"] / floor["value"]
    assert floor["value"] > 0 and judged["ratio"] > 0
    over = {
        name.split(".", 1)[1]: f for name, f in figures.items() if name.startswith("streaming_over_floor_s.")
    }
    assert list(over) == ROWS  # the table's shape: one row per category, in order
    spans = {
        row: tuple(map(int, re.findall(r"\((\d+) spans\)", f["note"]))) for row, f in over.items()
    }  # (judged spans, floor spans), from the spans the trials recorded
    assert all(judged_n > 0 for judged_n, _ in (spans[r] for r in ("driver_starts", "waits", "reads")))
    assert all(floor_n > 0 for _, floor_n in (spans[r] for r in ("driver_starts", "waits")))
    assert spans["oracle_jobs"][0] > 0 and spans["reads"][1] == 0  # the floor reads nothing
    # the rows sum to the judged run's seconds over the floor's: the fraction's complement, whole
    seconds = {name: float(re.search(r"in (\d+(?:\.\d+)?) s", f["note"]).group(1)) for name, f in (
        ("judged", judged), ("floor", floor))}  # fmt: skip
    assert sum(f["value"] for f in over.values()) == pytest.approx(
        seconds["judged"] - seconds["floor"], abs=1.0
    )
    assert "frontier-harness bench (scale 0.01)" in capsys.readouterr().out  # the same figures, printed


def history(*actions: tuple):
    from frontier_harness.properties.engine.history import Action, History

    return History("partitioned", tuple(Action(name, args) for name, args in actions))


PRODUCE, RESTART = ("produce", {"partition": 0, "data": "r"}), ("restart", {})
# A crash that leaves the query down until a restart; one down at the end, which the final step restarts;
# an availableNow query, started at every trigger, and run once more after its crash's restart.
CRASHES = [
    history(PRODUCE, ("trigger", {}), PRODUCE, ("trigger", {"fault": "after_offsets"}), RESTART),
    history(PRODUCE, ("trigger", {"fault": "after_sink"}), PRODUCE, ("trigger", {})),
    history(("query", {"trigger": "availableNow"}), PRODUCE, ("trigger", {"fault": "after_offsets"}),
            RESTART, PRODUCE, ("trigger", {})),
]  # fmt: skip


@pytest.mark.spark
def test_the_floor_starts_the_query_as_often_as_the_trials_do_without_crashes_or_reads(spark_session):
    from frontier_harness.spark_impl.spans import DRIVER_START, QUERY_START, READ, STOP, WAIT, recording
    from frontier_harness.spark_impl.streaming.trial import run_trials

    with recording() as trials:
        observed = run_trials(CRASHES)
    assert all(any(label == "crash" for _, label in obs) for obs in observed)  # each crash fired
    with recording() as floor:
        assert run_trials(CRASHES, floor=True) == [{}, {}, {}]  # nothing read
    assert floor.count(QUERY_START) == trials.count(DRIVER_START) > len(CRASHES)
    assert floor.count(STOP) == trials.count(STOP) and floor.count(WAIT) > 0
    assert floor.count(DRIVER_START) == floor.count(READ) == 0 and trials.count(READ) > 0
