"""The default run judges every implementation: the model's pairing catches a one-line bug in each model module.

`check` without `--impl` runs a suite against the model in process as well as
against its default implementation, with the properties whose reference is
independent of the model (an oracle, laws, an intrinsic property). Each test
here plants one bug in one model module (every binding of the broken function
replaced, as an edit of the module would) and runs the model's pairing of the
default run, the Spark pairing left out, with a small profile: the pairing fails.
"""

from __future__ import annotations

import io
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree

import attrs
import pytest
from rich.console import Console

from frontier_harness.model.catalog import expiration, timeline_rules
from frontier_harness.model.errors import TimelineError
from frontier_harness.model.ingestion import ingestion
from frontier_harness.model.reclocking import remap, summary
from frontier_harness.model.time import antichain
from frontier_harness.model.ttl import codec
from frontier_harness.model.ttl import store as model_store
from frontier_harness.properties.checks.registry import SUITES, get_suite
from frontier_harness.properties.cli import main as cli
from frontier_harness.properties.cli import run as runs
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.cli.verify import summary_table
from frontier_harness.properties.engine import report
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.junit import write_junit
from frontier_harness.properties.engine.pairings import MODEL, NO_ORACLE, PairingResult
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.results import PropertyResult, SuiteResult

# Small and quick: a planted bug is caught in a few hundred histories and shrunk within the suite's count of
# implementation calls (`shrink_calls`, as `ci` shrinks: the same size on any machine, loaded or not).
SMALL = attrs.evolve(
    PROFILES["dev"],
    max_examples=30,
    screening_histories=300,
    derandomize=True,
    shrink_by_calls=True,
    shrink_seconds=900.0,
)


def model_lane(suite: str, domains: list[str] | None = None) -> PairingResult:
    """The model's pairing of `check --suite SUITE` (no `--impl`), run as `check` runs it; Spark's is left out."""
    args = cli.build_parser().parse_args(["check", "--suite", suite])
    out = Console(file=io.StringIO())
    pairings = runs.against(args, out, [get_suite(suite)])
    assert [pairing.impl_name for pairing in pairings][0] == MODEL, pairings
    return runs.run_pairing(pairings[0], out, SMALL, 0, domains)


def plant(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, broken: Callable) -> None:
    """`module.name` replaced by `broken` wherever it is bound (modules that imported it by name too)."""
    original = getattr(module, name)
    monkeypatch.setattr(module, name, broken)
    for loaded in list(sys.modules.values()):
        if getattr(loaded, name, None) is original:
            monkeypatch.setattr(loaded, name, broken)


def failed(result: PairingResult) -> list[str]:
    return [f"{r.property}[{r.domain}]" for r in result.result.results if not r.passed]


# ------------------------------------------------------------------ the planted bugs, one per module


def crash_loses_the_open_wal_segment(self: model_store.TtlStore) -> model_store.Durable:
    return model_store.Durable(self.manifest, self.wal[:-1], self.clock.floor)  # bug: was self.wal


def frontier_keeps_negative_counts(self: antichain.MutableAntichain) -> antichain.Antichain:
    return antichain.Antichain.of(self.domain, [t for t, c in self._counts.items() if c != 0])  # bug: c > 0


def two_timelines_pass(owner: str, timelines: dict) -> Any:
    present = {name: t for name, t in timelines.items() if t is not None}
    distinct = set(present.values())
    if len(distinct) > 2:  # bug: > 1
        raise TimelineError(owner, present)
    return next(iter(distinct), None)


def inputs_never_ahead(inputs_upper: int, expiration_: int) -> int:
    return expiration_  # bug: inputs_upper if inputs_upper > expiration else expiration


def summary_before(summaries, time: int):
    before = [s for t, s in summaries if t < time]  # bug: t <= time
    if not before:
        return summary.Summary()
    return before[-1]


def binding_at_the_frontier_counts(into_time: int, frontier: antichain.Antichain) -> bool:
    return not frontier.less_equal(into_time - 1)  # bug: into_time


def resume_from_the_remap_alone(durable: ingestion.Durable) -> antichain.Antichain:
    return durable.remap.upper  # bug: combine_uppers(durable.data.upper, durable.remap.upper)


def attributes_without_flags(reader, features) -> tuple[int, int | None, int]:
    flags, create_ts, expire_ts = ORIGINAL_READ_ATTRIBUTES(reader, features)
    return 0, create_ts, expire_ts  # bug: flags (a tombstone read back as a value)


ORIGINAL_READ_ATTRIBUTES = codec._read_attributes

PLANTED = [
    # (suite, module, function, broken, domains)
    ("ttl", model_store.TtlStore, "crash", crash_loses_the_open_wal_segment, ["total"]),
    (
        "mutable_antichain",
        antichain.MutableAntichain,
        "frontier",
        property(frontier_keeps_negative_counts),
        ["total"],
    ),
    ("timelines", timeline_rules, "single_timeline", two_timelines_pass, None),
    ("expiration", expiration, "inputs_bound", inputs_never_ahead, None),
    ("restart", summary, "summary_at", summary_before, ["total"]),
    ("remap", remap, "binding_before", binding_at_the_frontier_counts, ["total"]),
    ("resumption", ingestion, "timestamp_resumption", resume_from_the_remap_alone, ["total"]),
    ("ttl_codec", codec, "_read_attributes", attributes_without_flags, None),
]


@pytest.mark.parametrize(
    "suite, owner, name, broken, domains", PLANTED, ids=[f"{p[0]}-{p[2]}" for p in PLANTED]
)
def test_the_default_runs_model_lane_catches_a_planted_bug(monkeypatch, suite, owner, name, broken, domains):
    plant(monkeypatch, owner, name, broken)
    result = model_lane(suite, domains)
    assert failed(result), f"{suite}: the model pairing passed with {name} broken"
    smallest = min((len(r.failure.history.actions) for r in result.result.results if r.failure), default=None)
    assert smallest is not None and smallest <= 30, smallest


# ------------------------------------------------------------------ which pairings a run has


def lanes_of(argv: list[str]) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    args = cli.build_parser().parse_args(["check", *argv])
    suites = [get_suite(s) for s in (args.suite or SUITES)]
    return [
        (
            pairing.suite.name,
            pairing.impl_name,
            tuple(p.name for p in pairing.suite.properties),
            pairing.reference_only,
        )
        for pairing in runs.against(args, Console(file=io.StringIO()), suites)
    ]


def test_without_impl_a_suite_with_an_independent_reference_runs_against_the_model_and_its_default():
    assert lanes_of(["--suite", "ttl"]) == [
        ("ttl", "model", ("reads_match_store_without_compaction",), ()),
        ("ttl", "spark", ("reads_match_store_without_compaction",), ()),
    ]
    assert lanes_of(["--suite", "mutable_antichain"]) == [
        (
            "mutable_antichain",
            "model",
            ("frontier_is_minimal_positive_counts",),
            ("observations_match_model",),
        ),
        (
            "mutable_antichain",
            "spark",
            ("frontier_is_minimal_positive_counts", "observations_match_model"),
            (),
        ),
    ]


def test_a_suite_whose_only_reference_is_the_model_shows_it_as_the_reference():
    assert lanes_of(["--suite", "collections"]) == [
        ("collections", "model", (), ("observations_match_model",)),
        ("collections", "spark", ("observations_match_model",), ()),
    ]


def test_every_suite_the_model_can_run_has_a_model_lane_and_impl_narrows_to_one():
    default = {(s, impl) for s, impl, _, _ in lanes_of([])}
    # the model has no observe_streaming nor observe_stateful (a user's job), nor a Spark engine for
    # observe_ttl_spark_state, nor a PostgreSQL for observe_cdc, nor observe_upgrade (a user's job)
    assert {s for s, impl in default if impl == MODEL} == set(SUITES) - {
        "streaming",
        "stateful",
        "cdc",
        "upgrade",
        "ttl_spark_state",
    }
    assert {s for s, impl in default if impl == "spark"} == {
        s.name for s in SUITES.values() if s.default_impl == "spark"
    }
    assert {impl for _, impl, _, _ in lanes_of(["--impl", "model"])} == {MODEL}
    assert {impl for _, impl, _, _ in lanes_of(["--impl", "spark"])} == {"spark"}


# The declarations: what each suite compares with (a change here is a decision, not a refactoring).
INDEPENDENT = {
    "laws": "laws",
    "collections": None,
    "mutable_antichain": "oracle",
    "resumption": "laws",
    "durable_resumption": None,
    "streaming": "laws",
    "stateful": "laws",
    "cdc": None,
    "upgrade": None,
    "checkpoint": "laws",
    "ttl": "oracle",
    "ttl_compaction": None,
    "ttl_codec": "laws",
    "ttl_spark_state": None,
    "reclock": None,
    "remap": "laws",
    "restart": "laws",
    "summary": "oracle",
    "prove": "intrinsic",
    "timelines": "oracle",
    "temporal": None,
    "expiration": "intrinsic",
}


def test_each_suite_declares_what_its_properties_compare_with():
    from frontier_harness.properties.engine.pairings import reference_of

    declared = {
        s.name: next((reference_of(s, p).value for p in s.properties if reference_of(s, p).independent), None)
        for s in SUITES.values()
    }
    assert declared == INDEPENDENT


# ------------------------------------------------------------------ the table and JUnit: one row per implementation


def _result(suite: str, prop: str, domain: str, ok: bool = True) -> PropertyResult:
    failure = None if ok else _counterexample(suite, prop)
    return PropertyResult(suite, prop, domain, 10, 0.1, Counter({"a hard case": 1}), 0, failure)


def _counterexample(suite: str, prop: str) -> Counterexample:
    return Counterexample(suite=suite, property=prop, history=History("total", ()), impl="spark", message="m")


def test_the_table_and_junit_have_one_row_per_implementation(tmp_path):
    pairings = [
        PairingResult(
            "model", SuiteResult("ttl_codec", (_result("ttl_codec", "laws", "total"),), ()), ("agrees",)
        ),
        PairingResult(
            "spark",
            SuiteResult(
                "ttl_codec",
                (_result("ttl_codec", "laws", "total"), _result("ttl_codec", "agrees", "total", ok=False)),
                (),
            ),
        ),
        PairingResult("model", SuiteResult("collections", (), ()), ("matches",)),
    ]
    console = Console(file=io.StringIO(), width=200)
    console.print(report.results_table(pairings))
    rows = [[c.strip() for c in line.split("│")[1:4]] for line in console.file.getvalue().splitlines()]
    assert [r for r in rows if r and r[0] in ("ttl_codec", "collections")] == [
        ["ttl_codec", "model", "laws"],
        ["ttl_codec", "model", "agrees"],
        ["ttl_codec", "spark", "laws"],
        ["ttl_codec", "spark", "agrees"],
        ["collections", "model", "matches"],
    ]
    assert console.file.getvalue().count(NO_ORACLE) == 2
    path = tmp_path / "junit.xml"
    write_junit(path, pairings, {("ttl_codec", "spark", "agrees", "total"): "cx.itf.json"})
    root = ElementTree.parse(path).getroot()
    cases = {
        (suite.get("name"), case.get("name")): [child.tag for child in case if child.tag != "properties"]
        for suite in root
        for case in suite
    }
    assert cases == {
        ("ttl_codec", "laws[total] (model)"): [],
        ("ttl_codec", "agrees (model)"): ["skipped"],
        ("ttl_codec", "laws[total] (spark)"): [],
        ("ttl_codec", "agrees[total] (spark)"): ["failure"],
        ("collections", "matches (model)"): ["skipped"],
    }
    assert "cx.itf.json" in path.read_text()
    console = Console(file=io.StringIO(), width=200)
    console.print(summary_table(pairings, (), ()))
    verify_rows = [line for line in console.file.getvalue().splitlines() if "│ suite" in line]
    assert [row.split("│")[2].strip() for row in verify_rows] == [
        "ttl_codec (model)",
        "ttl_codec (spark)",
        "collections (model)",
    ]
    assert NO_ORACLE in verify_rows[2] and "FAILED" in verify_rows[1]


def test_impl_model_narrows_the_run_to_the_model(tmp_path, capsys):
    junit = tmp_path / "j.xml"
    argv = [
        "check",
        "--suite",
        "mutable_antichain",
        "--impl",
        "model",
        "--profile",
        "dev",
        "--domain",
        "total",
    ]
    assert main([*argv, "--max-examples", "5", "--screening", "50", "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert "mutable_antichain against model" in out and "against spark" not in out
    text = junit.read_text()
    assert 'name="frontier_is_minimal_positive_counts[total] (model)"' in text
    assert 'name="observations_match_model (model)"><skipped' in text and "(spark)" not in text


def test_the_default_run_judges_the_model_and_spark(tmp_path, capsys):
    """The real default run (Spark started) of a suite with both kinds of reference: four rows, one skipped."""
    junit = tmp_path / "j.xml"
    argv = ["check", "--suite", "ttl_codec", "--profile", "dev", "--out", str(tmp_path / "cx")]
    counts = ["--max-examples", "3", "--batched-examples", "2", "--screening", "20", "--junit", str(junit)]
    assert main([*argv, *counts]) == 0
    out = capsys.readouterr().out
    assert "ttl_codec against model" in out and "ttl_codec against spark" in out
    root = ElementTree.parse(junit).getroot()
    names = sorted(case.get("name") for case in root.iter("testcase"))
    assert names == [
        "agrees_with_model (model)",
        "agrees_with_model[total] (spark)",
        "round_trip_and_corruption[total] (model)",
        "round_trip_and_corruption[total] (spark)",
    ]
