"""The upgrade model's rules (`model/upgrade/`) on written metadata: each rule fires on its change with its
verdict, Spark's order decides which failure a restart raises, and a plan that did not write a checkpoint is
refused. Spark's real restarts pin the same rules in `tests/test_upgrade_matrix.py`."""

from __future__ import annotations

import copy

import pytest

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.upgrade.compare import compare, held_groups, merged
from frontier_harness.model.upgrade.schema import compatible, field, struct
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

WINDOW = struct([field("start", "timestamp"), field("end", "timestamp")])
NULLABLE = "spark.sql.streaming.statefulOperator.alwaysNullableOutput.enabled"
CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.streaming.multipleWatermarkPolicy": "min",
    NULLABLE: "true",
}


def key(name: str, kind="string", lineage=None, delay=None) -> dict:
    return {**field(name, kind), "lineage": lineage if lineage is not None else name, "delay_ms": delay}


def plan(**changes) -> dict:
    """A windowed count per key as a plan reads it; `changes` replace its parts."""
    op = {
        "id": 0,
        "name": "stateStoreSave",
        "partitions": 1,
        "key": [key("key"), key("window", WINDOW, "window(event_time, 10 s)", 5000)],
        "value": [field("count", "long", nullable=False)],
        "aggregates": ["count(1)"],
        "window": [10_000, 10_000, 0],
        "rows": ["isnotnull(event_time)"],
    }
    op.update(changes.pop("op", {}))
    base = {
        "origin": "plan",
        "sources": [{"kind": "file:json", "options": {"path": "/prod/in"}}],
        "operators": [op],
        "watermarks": [{"column": "event_time", "delay_ms": 5000, "below": []}],
        "conf": dict(CONF),
        "output_mode": "update",
        "output": [key("key"), {**key("n", "long", "count(1)")}],
        "output_rows": [],
    }
    base.update(changes)
    return base


def checkpoint(**changes) -> dict:
    """The same job's checkpoint as the reader gives it: names and types only, the files read, a held group."""
    recorded = plan(**changes)
    for op in recorded["operators"]:
        op["key"] = [{**f, "lineage": None, "nullable": True} for f in op["key"]]
        op["value"] = [{**f, "nullable": True} for f in op["value"]]
        op.update(aggregates=None, rows=None, window=[10_000, None, None])
        op["groups"] = [{"key": "a", "window": {"start": 20_000, "end": 30_000}}]
    recorded["sources"] = [
        {"kind": "file", "offset": '{"logOffset":1}', "files": ["file:///prod/in/b0.json"]}
    ]
    for part in ("watermarks", "output_mode", "output", "output_rows"):
        recorded[part] = None
    recorded.update(origin="checkpoint", watermark_ms=20_000, batch=2, committed=2)
    return recorded


def verdicts(old: dict, new: dict) -> list[tuple[str, str]]:
    return [(d.area, d.verdict.value) for d in compare(old, new).differences]


def test_spark_compares_state_schemas_by_type_and_order_never_by_name():
    stored = [field("key", "string"), field("window", WINDOW)]
    assert compatible(stored, [field("user", "string"), field("w", WINDOW)])
    assert not compatible(stored, [field("window", WINDOW), field("key", "string")])
    assert not compatible(stored, [field("key", "string")])
    nested = struct([field("start", "timestamp", nullable=False)])
    assert compatible([field("w", nested)], [field("w", WINDOW)]) is False  # a stored non-null field widened


def test_no_difference_is_safe_over_what_was_compared():
    comparison = compare(plan(), plan())
    assert comparison.outcome() is Verdict.SAFE and not comparison.differences
    assert comparison.compared == (
        "1 source(s)",
        "1 stateful operator(s), 3 state field(s)",
        "1 watermark delay(s)",
        "3 pinned setting(s)",
    )


def _op(**changes) -> dict:
    return {"op": changes}


CHANGES = [
    ("a key added", _op(key=[key("key"), key("data"), key("window", WINDOW, "window(event_time, 10 s)", 5000)]),
     [(Area.KEY, "restart fails")]),
    ("keys swapped", _op(key=[key("window", WINDOW, "window(event_time, 10 s)"), key("key")]),
     [(Area.KEY, "restart fails")]),
    ("a key renamed", _op(key=[key("user", lineage="key"), key("window", WINDOW, "window(event_time, 10 s)", 5000)]),
     [(Area.KEY, "safe")]),
    ("a key computed otherwise", _op(key=[key("key", lineage="lower(key)"), key("window", WINDOW, "window(event_time, 10 s)", 5000)]),
     [(Area.KEY, "restarts, results change")]),
    ("count to sum", _op(value=[field("sum", "long")], aggregates=["sum(offset)"]),
     [(Area.AGGREGATES, "restarts, results change")]),
    ("count to avg", _op(value=[field("sum", "double"), field("count", "long")], aggregates=["avg(offset)"]),
     [(Area.VALUE, "restart fails")]),
    ("a longer window", _op(window=[20_000, 20_000, 0], key=[key("key"), key("window", WINDOW, "window(event_time, 20 s)", 5000)]),
     [(Area.WINDOW, "restarts, results change")]),
    ("a filter before the aggregation", _op(rows=["isnotnull(event_time)", "NOT (data = z)"]),
     [(Area.INPUT, "restarts, results change")]),
    ("an operator added", {"operators": [plan()["operators"][0], {"id": 1, "name": "dedupe"}]},
     [(Area.OPERATORS, "restart fails")]),
    ("a source added", {"sources": [plan()["sources"][0]] * 2}, [(Area.SOURCES, "restart fails")]),
    ("the input moved", {"sources": [{"kind": "file:json", "options": {"path": "/staging/in"}}]},
     [(Area.SOURCE, "restarts, results change")]),
    ("another delay", {"watermarks": [{"column": "event_time", "delay_ms": 10_000, "below": []}]},
     [(Area.WATERMARK, "restarts, results change")]),
    ("more partitions", {"conf": {**CONF, "spark.sql.shuffle.partitions": "4"}},
     [(Area.SETTING, "safe")]),
    ("append mode", {"output_mode": "append"}, [(Area.OUTPUT_MODE, "restarts, results change")]),
    ("columns renamed", {"output": [key("user", lineage="key"), key("total", "long", "count(1)")]},
     [(Area.OUTPUT, "safe")]),
    ("a column computed otherwise", {"output": [key("key"), key("n", "long", "(count(1) * 2)")]},
     [(Area.OUTPUT, "restarts, results change")]),
]  # fmt: skip


@pytest.mark.parametrize("what,change,found", CHANGES, ids=[c[0] for c in CHANGES])
def test_each_rule_gives_its_verdict(what, change, found):
    assert verdicts(plan(), plan(**change)) == found


def test_without_spark_4_3s_nullable_state_a_non_null_count_cannot_become_a_nullable_sum():
    older = plan(conf={**CONF, NULLABLE: "false"})
    to_sum = plan(conf=older["conf"], op={"value": [field("sum", "long")], "aggregates": ["sum(offset)"]})
    assert verdicts(older, to_sum) == [(Area.VALUE, "restart fails")]


def test_the_watermark_policy_decides_the_results_only_with_several_watermarks():
    two = [{"column": "event_time", "delay_ms": 5000, "below": []}] * 2
    policy = {**CONF, "spark.sql.streaming.multipleWatermarkPolicy": "max"}
    assert verdicts(plan(watermarks=two), plan(watermarks=two, conf=policy)) == [
        (Area.SETTING, "restarts, results change")
    ]
    assert verdicts(plan(), plan(conf=policy)) == [(Area.SETTING, "safe")]


def test_a_restart_raises_the_first_failure_spark_meets():
    new = plan(sources=[plan()["sources"][0]] * 2, op={"value": [field("sum", "double")]})
    comparison = compare(plan(), new)
    assert [d.area for d in comparison.differences] == [Area.SOURCES, Area.VALUE]
    assert comparison.error().startswith("AssertionError: There are [1] sources")


def test_a_checkpoint_matches_fields_by_name_and_names_the_groups_it_holds():
    swapped = plan(op={"key": [key("window", WINDOW, "w", 5000), key("key")]})
    assert verdicts(checkpoint(), plan(op={"value": [field("sum", "long")], "aggregates": ["sum(x)"]})) == [
        (Area.AGGREGATES, "restarts, results change")
    ]
    assert verdicts(checkpoint(), swapped)[0] == (Area.KEY, "restart fails")
    assert (
        held_groups(checkpoint())
        == "the 1 group(s) held in state after batch 2 (key='a', window=[20000, 30000))"
    )
    moved = compare(checkpoint(), plan(sources=[{"kind": "file:json", "options": {"path": "/staging/in"}}]))
    assert [d.area for d in moved.differences] == [Area.SOURCE] and "b0.json" in moved.differences[0].rows
    assert compare(checkpoint(), plan()).not_compared  # output mode, columns, filters: not recorded, said so
    # a window's slide and start: a checkpoint holds windows, whose width is the duration alone
    assert any("the old window's slide" in note for note in compare(checkpoint(), plan()).not_compared)
    # from the plan alone, how the running query's checkpoint wrote its state schemas is not known
    assert any("alwaysNullableOutput" in note for note in compare(plan(), plan()).not_compared)
    assert not any(
        "alwaysNullableOutput" in note for note in compare(merged(plan(), checkpoint()), plan()).not_compared
    )
    # a Kafka source's topic: the checkpoint logs offsets per topic, not the option that chose them
    kafka = {"kind": "kafka", "options": {"subscribe": "orders"}}
    written = {**checkpoint(), "sources": [{"kind": "kafka", "offset": '{"events":{"0":5}}'}]}
    assert any(
        "the options of source(s) [0]" in note
        for note in compare(written, plan(sources=[kafka])).not_compared
    )


def test_a_plan_that_did_not_write_the_checkpoint_cannot_be_judged_with_it():
    other = plan(operators=[])
    with pytest.raises(CannotJudge, match="it is not the job that wrote the checkpoint"):
        merged(other, checkpoint())
    both = merged(plan(), checkpoint())
    assert both["operators"][0]["key"][0]["lineage"] == "key" and both["watermark_ms"] == 20_000


def test_a_source_of_another_kind_cannot_be_judged():
    kafka = plan(sources=[{"kind": "kafka", "options": {"subscribe": "events"}}])
    with pytest.raises(CannotJudge, match="source 0: file:json -> kafka"):
        compare(plan(), kafka)
    assert compare(copy.deepcopy(kafka), kafka).outcome() is Verdict.SAFE


def test_a_delay_no_state_key_records_is_named_as_not_compared():
    undelayed = checkpoint()
    for f in undelayed["operators"][0]["key"]:
        f["delay_ms"] = None
    comparison = compare(
        undelayed, plan(watermarks=[{"column": "event_time", "delay_ms": 9_000, "below": []}])
    )
    assert not [d for d in comparison.differences if d.area == Area.WATERMARK]
    assert any("the old watermark delay" in note for note in comparison.not_compared)


def test_an_operator_whose_state_the_model_does_not_read_cannot_be_judged():
    join = {"id": 0, "name": "symmetricHashJoin", "partitions": 1, "key": None, "value": None}
    with pytest.raises(
        CannotJudge, match=r"operator 0 \(symmetricHashJoin\): the model reads the state of aggregations"
    ):
        compare(plan(operators=[join]), plan(operators=[join]))


def test_a_watermark_added_or_removed_changes_the_results_and_a_checkpoint_says_whether_it_had_one():
    """Measured on Spark by the matrix (`counts->no_watermark`, `no_watermark->counts`); here each branch on
    written metadata: a plan with no `withWatermark` is known to have none, whatever its keys hold."""
    from frontier_harness.model.upgrade.state import delay_differences

    [removed] = delay_differences([5000], [], 20_000, True)
    assert "a watermark removed" in removed.rule and removed.what == "delays [5000 ms] -> []"
    deduplicated = {"key": [key("key")], "name": "dedupe"}
    unwatermarked = plan(op=deduplicated, watermarks=[])
    watermarked = plan(op=deduplicated)
    [added] = [d for d in compare(unwatermarked, watermarked).differences if d.area == Area.WATERMARK]
    assert "a watermark added" in added.rule
    # a checkpoint that recorded its delay on a window key: nothing unknown to name
    notes = compare(checkpoint(), plan()).not_compared
    assert not any("the old watermark delay" in n or "the options of source" in n for n in notes), notes


def spark3_checkpoint(**changes) -> dict:
    """`checkpoint()` as Spark 3.x writes it: no operator metadata (the operators' names unknown), and none of
    the pinned settings added since (`model.upgrade.output.ABSENT`)."""
    written = checkpoint(**changes)
    for op in written["operators"]:
        op["name"] = None
    written["conf"] = {k: v for k, v in written["conf"].items() if k != NULLABLE}
    return written


def test_on_a_checkpoint_without_operator_metadata_spark_checks_no_operator():
    """Measured on a checkpoint Spark 3.5 wrote (`tests/test_upgrade_matrix.py`): the same operators restart;
    one added fails the first batch loading a state it never wrote; one removed is never read again. A
    schema failure comes first, as Spark plans a batch before it runs it (not measured)."""
    deduplication = {"id": 1, "name": "dedupe", "partitions": 1, "key": [key("key")], "value": []}
    unchanged = plan(conf={k: v for k, v in CONF.items() if k != NULLABLE})
    assert compare(spark3_checkpoint(), unchanged).outcome() is Verdict.SAFE
    added = compare(spark3_checkpoint(), plan(operators=[plan()["operators"][0], deduplication]))
    assert (added.outcome(), added.error()) == (Verdict.RESTART_FAILS, "CANNOT_LOAD_STATE_STORE")
    assert "the old job fails its restart on the checkpoint too" in added.differences[0].rule
    keyed_and_added = plan(operators=[{**plan()["operators"][0], "key": [key("key")]}, deduplication])
    assert compare(spark3_checkpoint(), keyed_and_added).error() == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    removed = compare(spark3_checkpoint(), plan(operators=[]))
    [dropped] = [d for d in removed.differences if d.area != Area.SETTING]
    assert dropped.verdict is Verdict.RESULTS_CHANGE and "never updated or emitted again" in (
        dropped.rows or ""
    )
    assert any("no operator metadata" in note for note in removed.not_compared)


def test_a_checkpoint_with_operator_metadata_for_some_operators_only_cannot_be_judged():
    written = spark3_checkpoint()
    written["operators"].append({**written["operators"][0], "id": 1, "name": "dedupe"})
    with pytest.raises(CannotJudge, match="operator metadata for some operators and not for others"):
        compare(written, plan())


def test_a_plan_is_judged_with_a_checkpoint_without_operator_metadata_by_its_operator_ids():
    both = merged(plan(), spark3_checkpoint())
    assert both["operators"][0]["name"] is None and both["operators"][0]["key"][0]["lineage"] == "key"
    with pytest.raises(CannotJudge, match="it is not the job that wrote the checkpoint"):
        merged(plan(operators=[{**plan()["operators"][0], "id": 1}]), spark3_checkpoint())


def test_a_setting_an_older_checkpoint_did_not_record_is_restored_as_spark_restores_it():
    """Spark 4.3 restores `alwaysNullableOutput` false where a checkpoint lacks it: a non-null count cannot
    become a nullable sum, and the session's true is named as not applied."""
    summed = plan(op={"value": [field("sum", "long")]}, conf={**CONF, NULLABLE: "true"})
    written = spark3_checkpoint()
    written["operators"][0]["value"] = [field("count", "long", nullable=False)]  # as Spark 3.5 writes a count
    comparison = compare(written, summed)
    assert comparison.error() == "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"
    [setting] = [d for d in comparison.differences if d.area == Area.SETTING]
    assert setting.what.startswith(
        f"{NULLABLE}: false -> true (not applied: the checkpoint did not record it"
    )
