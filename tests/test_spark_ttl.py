"""The TTL store on Spark: Parquet SSTs and manifest, compaction equal to the model's, the codecs agree.

Spark-side planted bug: `<` in the Spark compaction filter, caught by the
ttl_compaction suite with a small counterexample that replays
(`--impl tests.test_spark_ttl:spark_lt_in_compaction_filter`).
"""

from __future__ import annotations

import json

import attrs
import pytest

from model.errors import ClockRegression, CorruptSst, InvalidRow, InvalidTtl
from model.ttl import codec as model_codec
from model.ttl.row import Row
from properties.adapters.spark import SparkImplementation
from properties.history import Action, History
from properties.runner import run_suite
from properties.suite import compare
from properties.suites import get_suite, ttl
from spark_impl import ttl_codec, ttl_store
from tests.helpers import QUICK, write_and_replay

NEVER = 2**63 - 1


class Clock:
    def __init__(self, ms=0):
        self.ms = ms

    def __call__(self):
        return self.ms


def spark_lt_in_compaction_filter():
    """Bug on the Spark side: the compaction filter tests `expire_ts < now`."""

    def broken(flags, expire_ts, now):
        return ~ttl_store.is_tombstone(flags) & (expire_ts < now)

    class Impl(SparkImplementation):
        def observe_ttl_compaction(self, domain, histories):
            original = ttl_store.expired_for_compaction
            ttl_store.expired_for_compaction = broken
            try:
                return ttl_store.observe_ttl_compaction(domain, histories)
            finally:
                ttl_store.expired_for_compaction = original

    return Impl()


# --- codec: no Spark needed ---


def _model_rows(rows):
    return [Row(k, v, s, c, e) for k, v, s, c, e in rows]


@pytest.mark.parametrize("version", [0, 1])
def test_each_codec_reads_what_the_other_wrote(version):
    create = (None, None) if version == 0 else (5, 6)
    expire = (NEVER, NEVER) if version == 0 else (9, NEVER)
    rows = [(b"a", b"1", 1, create[0], expire[0]), (b"b", None, 2 + 2**63, create[1], expire[1])]
    ours = ttl_codec.encode_sst(rows, 7, version)
    theirs = model_codec.encode_sst(_model_rows(rows), 7, version)
    assert ours == theirs
    assert model_codec.decode_sst("x", ours)[1] == tuple(_model_rows(rows))
    assert ttl_codec.decode_sst("x", theirs)[1] == rows


def test_codec_errors_are_typed_and_name_sst_and_offset():
    data = ttl_codec.encode_sst([(b"a", b"1", 1, 5, NEVER)], 5)
    with pytest.raises(CorruptSst, match="'s1' at byte 43"):
        ttl_codec.decode_sst("s1", data[:44] + bytes([data[44] ^ 1]) + data[45:])
    with pytest.raises(InvalidRow, match="65536"):
        ttl_codec.encode_sst([(b"k" * 65536, b"", 1, 0, NEVER)], 0)
    with pytest.raises(InvalidRow, match="v0 carries no timestamps"):
        ttl_codec.encode_sst([(b"k", b"", 1, 0, NEVER)], 0, version=0)


def test_the_codec_suite_holds_for_the_spark_impl_codec():
    result = run_suite(
        get_suite("ttl_codec"),
        SparkImplementation(),
        "spark",
        attrs.evolve(QUICK, spark_examples=40, spark_screening_histories=1000),
        seed=0,
    )
    assert result.passed, [r.failure.message for r in result.results if r.failure]


# --- the store and compaction on Spark ---


@pytest.mark.spark
def test_store_files_reads_and_reopen(spark_session, tmp_path):
    clock = Clock(0)
    store = ttl_store.SparkTtlStore.open(tmp_path, clock)
    store.put(b"a", b"old")
    store.flush()
    store.compact(store.source_names())  # the last run holds a=old
    clock.ms = 3
    store.put(b"a", b"new", 2)
    store.flush()
    clock.ms = 5
    store.put(b"b", b"x")
    store.flush()  # compaction's now is 5: a=new expired
    store.compact(store.source_names()[:2])  # both L0 SSTs, not the last run
    assert store.get(b"a") is None and store.scan() == [(b"b", b"x")]
    run = store.manifest["runs"][0]
    assert run["has_ttl"] is False and run["creation_timestamp"] == 5
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [s["name"] for s in manifest["runs"]] == ["sst-4", "sst-1"]
    clock.ms = 8
    store.put(b"c", b"y", expire_at=20)  # unflushed: only in the WAL
    store = ttl_store.SparkTtlStore.open(tmp_path, clock)
    assert store.floor == 8 and store.scan(b"b") == [(b"b", b"x"), (b"c", b"y")]
    clock.ms = 7
    with pytest.raises(ClockRegression):
        store.put(b"d", b"z")
    with pytest.raises(InvalidTtl):
        ttl_store.SparkTtlStore.open(tmp_path, Clock(9)).put(b"d", b"z", 0)


SCENARIOS = [
    [
        ("put", {"key": "a", "value": "old"}),
        ("flush", {}),
        ("compact", {"start": 0, "length": 99}),
        ("put", {"key": "a", "value": "new", "ttl": 1}),
        ("flush", {}),
        ("tick", {"ms": 1}),
        ("put", {"key": "b", "value": "x"}),
        ("flush", {}),
        ("compact", {"start": 0, "length": 0}),
        ("delete", {"key": "b"}),
        ("crash", {"ms": 0}),
        ("periodic", {}),
    ],
]


@pytest.mark.spark
def test_the_spark_store_equals_the_reference_on_the_hard_scenario(spark_session):
    histories = [
        History("total", (Action("open", {"interval": 0}),) + tuple(Action(n, a) for n, a in s))
        for s in SCENARIOS
    ]
    for history, observed in zip(histories, ttl_store.observe_ttl(None, histories)):
        outcome = compare(ttl.observe(history), observed)
        assert outcome.ok, outcome.message


@pytest.mark.spark
def test_spark_compaction_equals_the_model(spark_session):
    result = run_suite(
        get_suite("ttl_compaction"),
        SparkImplementation(),
        "spark",
        attrs.evolve(QUICK, spark_examples=4, spark_screening_histories=1000, screening_batch=1000),
        seed=0,
    )
    assert result.passed, [r.failure.message for r in result.results if r.failure]
    assert result.missing_events == ()


@pytest.mark.spark
def test_planted_spark_lt_in_compaction_filter_is_caught_small_and_replays(spark_session, tmp_path):
    impl_name = "tests.test_spark_ttl:spark_lt_in_compaction_filter"
    suite = get_suite("ttl_compaction")
    result = run_suite(
        suite,
        spark_lt_in_compaction_filter(),
        impl_name,
        attrs.evolve(QUICK, spark_examples=6, batch_size=4),
        seed=0,
    )
    failure = result.results[0].failure
    assert failure is not None
    assert len(failure.history.actions) <= 3, failure.history
    assert write_and_replay(failure, tmp_path, impl_name) == 1
