"""Spark is the oracle of the upgrade check's static half: for each change of `tests/jobs/upgrades.py`, the
old job writes a checkpoint over two batches, the new job restarts on it (`tests/upgrade_runs.py`), and
the verdict `upgrade` predicts, from the two plans (`--from`), from the checkpoint alone (`--checkpoint`)
and from both, is what Spark did: it raised that error, or it ran and the rows of the groups written after
the switch are (`safe`) or are not (`restarts, results change`) those the new job writes had it always
run. A disagreement is a bug in the prediction, never in Spark. The same changes restart on the checkpoint
Spark 3.5 wrote for the old job (`tests/recorded/spark35_counts.tar.gz`), where Spark 4.3 checks no operator and
restores the settings 3.5 did not record."""

from __future__ import annotations

import json

import attrs
import pytest

from frontier_harness.model.upgrade.compare import compare, merged
from frontier_harness.model.upgrade.output import ABSENT, restored
from frontier_harness.model.vocabulary.upgrade import Verdict
from frontier_harness.properties.adapters.upgrade import recorded_checkpoint, recorded_job
from tests.upgrade_runs import JOBS, always, differs, from_spark35, restarted, run, scratch
from tests.upgrade_runs import restored as restored_run

pytestmark = [pytest.mark.spark, pytest.mark.slow]
FAILS, CHANGE, SAFE = Verdict.RESTART_FAILS, Verdict.RESULTS_CHANGE, Verdict.SAFE


@attrs.frozen
class Case:
    old: str
    new: str
    verdict: Verdict
    error: str | None = None
    renamed: dict = attrs.field(factory=dict)  # the old job's columns under the new job's names
    group: tuple = ("key", "window")
    moved: bool = False
    unrecorded: str | None = None  # what the change is in that a checkpoint does not record


CASES = [
    Case("counts", "counts", SAFE),
    Case("counts", "filter_added", CHANGE, unrecorded="filters"),
    Case("counts", "projection_reordered", SAFE),
    Case("counts", "key_added", FAILS, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"),
    Case("counts", "key_removed", FAILS, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"),
    Case("counts", "key_renamed", SAFE, renamed={"key": "user"}, group=("user", "window")),
    Case("keyed_by_two", "keys_swapped", CHANGE, group=("key", "data", "window")),
    Case("counts", "count_to_sum", CHANGE),
    Case("counts", "count_to_average", FAILS, "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"),
    Case("counts", "aggregate_renamed", SAFE, renamed={"n": "total"}),
    Case("counts", "window_longer", CHANGE),
    Case("counts", "window_sliding", CHANGE, unrecorded="slide"),
    Case("counts", "sql_window", SAFE),
    Case("counts", "delay_longer", CHANGE),
    Case("counts", "delay_in_milliseconds", SAFE),
    Case("counts", "no_watermark", CHANGE),
    Case("no_watermark", "counts", CHANGE),
    Case("counts", "deduplication_added", FAILS, "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"),
    Case("counts", "aggregation_removed", FAILS, "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"),
    Case("aggregation_removed", "counts", FAILS, "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"),
    Case("counts", "more_partitions", SAFE),
    Case("counts", "rocksdb", SAFE),
    Case("two_watermarks", "policy_max", CHANGE),
    Case("counts", "policy_max_one_watermark", SAFE),
    Case("counts", "source_added", FAILS, "AssertionError"),
    Case("counts", "append_mode", CHANGE, unrecorded="output mode"),
    Case("counts", "counts", CHANGE, moved=True),
]
WORKING = scratch() / "working"
# What Spark 4.3 does otherwise on the checkpoint Spark 3.5 wrote: it checks no operator (3.5 wrote no
# operator metadata) and restores `alwaysNullableOutput` false (3.5 did not record it), so a count stays
# non-nullable and a tumbling window key non-nullable. Every other change of `counts` does what it does above.
ON_SPARK35 = {
    "count_to_sum": (FAILS, "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"),
    "window_sliding": (FAILS, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"),  # the slide unrecorded, the key not
    "deduplication_added": (FAILS, "CANNOT_LOAD_STATE_STORE"),
    "aggregation_removed": (CHANGE, None),
}
SPARK35_CASES = [
    attrs.evolve(c, verdict=ON_SPARK35[c.new][0], error=ON_SPARK35[c.new][1], unrecorded=None)
    if c.new in ON_SPARK35
    else c
    for c in CASES
    if c.old == "counts" and not c.moved
]


def _what_spark_did(spark, case: Case, ran) -> tuple[Verdict, str | None]:
    if ran.error is not None:
        return FAILS, ran.error
    changed = differs(ran, always(spark, case.new), case.group, case.renamed)
    return (CHANGE if changed else SAFE), None


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.old}->{c.new}" + ("-moved" if c.moved else "") for c in CASES]
)
def test_the_predicted_verdict_is_what_spark_does_on_the_restart(case, spark_session):
    root = restored_run(spark_session, case.old, WORKING, case.moved)
    _assert_predicted(spark_session, case, root, ("--from", "--checkpoint", "both"))


@pytest.mark.parametrize("case", SPARK35_CASES, ids=[f"{c.old}->{c.new}" for c in SPARK35_CASES])
def test_on_a_checkpoint_spark_3_5_wrote_the_predicted_verdict_is_what_spark_4_does(case, spark_session):
    root = from_spark35(scratch() / "spark35")
    _assert_predicted(spark_session, case, root, ("--checkpoint", "both"))


def _assert_predicted(spark_session, case: Case, root, hows: tuple[str, ...]) -> None:
    """Each of `hows`' prediction for `case`'s restart on `root`'s checkpoint is what Spark then does; the new
    job planned as `upgrade` plans it (with a checkpoint, under the settings the restart pins)."""
    old = recorded_job(f"{JOBS}:{case.old}", WORKING / "job")
    written = recorded_checkpoint(root / "checkpoint")
    pinned = recorded_job(f"{JOBS}:{case.new}", root / "job", restored(written["conf"]))
    predicted = {
        "--from": lambda: compare(old, recorded_job(f"{JOBS}:{case.new}", root / "job")),
        "--checkpoint": lambda: compare(written, pinned),
        "both": lambda: compare(merged(old, written), pinned),
    }
    spark = _what_spark_did(spark_session, case, restarted(spark_session, case.new, root))
    assert spark == (case.verdict, case.error), f"Spark did {spark}: the case's expectation is wrong"
    for how in hows:
        comparison = predicted[how]()
        if (
            how == "--checkpoint" and case.unrecorded
        ):  # a checkpoint does not record it: not compared, said so
            assert comparison.outcome() is SAFE and any(case.unrecorded in n for n in comparison.not_compared)
            continue
        lines = [d.line() for d in comparison.differences]
        error = comparison.error()  # an error class, or an exception and its message
        assert (comparison.outcome(), error and error.split(":")[0]) == spark, (how, lines)


def test_a_new_window_equal_to_an_old_one_continues_its_state_and_the_others_start_from_zero(spark_session):
    """Spark finds an aggregation's state by the value of its key (`model/upgrade/state.ORPHANED`): the old job's
    10-second tumbling window `[20 s, 30 s)` of `a` holds 1 (a@25) at the switch; after it, the new job's
    10-second windows sliding every 5 seconds count a@27 and a@28. The one equal to the old window continues it
    (3), the offset one `[25 s, 35 s)` starts from zero (2)."""
    root = restored_run(spark_session, "counts", WORKING)
    ran = restarted(spark_session, "window_sliding", root)
    assert ran.error is None, ran.error
    counts = {(dict(r)["key"], dict(r)["window"]): dict(r)["n"] for r in ran.runs[-1]}
    [continued] = [n for (key, window), n in counts.items() if key == "a" and _seconds(window) == (20, 30)]
    [fresh] = [n for (key, window), n in counts.items() if key == "a" and _seconds(window) == (25, 35)]
    assert (continued, fresh) == (3, 2), counts


def _seconds(window: tuple) -> tuple[int, int]:
    """A window row's `(start, end)` in seconds (`row_key` holds its instants as epoch milliseconds)."""
    bounds = dict(window)
    return bounds["start"] // 1000, bounds["end"] // 1000


def test_a_failed_restart_on_a_spark_3_5_checkpoint_leaves_it_unusable_to_the_old_job(spark_session):
    """`model/upgrade/state.py`'s rule for an operator added where no operator metadata was written: the new
    job's restart writes its operators into the checkpoint, fails loading the added one's state, and the old
    job then fails its restart on the checkpoint too."""
    root = from_spark35(scratch() / "spark35")
    assert restarted(spark_session, "deduplication_added", root).error == "CANNOT_LOAD_STATE_STORE"
    assert (
        run(spark_session, "counts", root).error == "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
    )


def test_a_restart_on_a_spark_3_5_checkpoint_sets_each_setting_it_lacks_as_the_model_restores_it(
    spark_session,
):
    """`model.upgrade.output.ABSENT`: read from the offsets the restart writes, the settings the checkpoint
    Spark 3.5 wrote did not record, whatever the new job sets them to (`unrecorded_settings`)."""
    root = from_spark35(scratch() / "spark35")
    lacking = set(json.loads((root / "checkpoint" / "offsets" / "2").read_text().splitlines()[1])["conf"])
    assert restarted(spark_session, "unrecorded_settings", root).error is None
    written = json.loads((root / "checkpoint" / "offsets" / "3").read_text().splitlines()[1])["conf"]
    assert {k: v for k, v in written.items() if k not in lacking} == ABSENT
