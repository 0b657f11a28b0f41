"""A user's processor's state as a trial reads it (`spark_impl/event_time/processor_state.py`), from a real
query's checkpoint: an `applyInPandasWithState` group's state reads as one value state and its event-time
timeout as a timer, as a `transformWithStateInPandas` processor's value states and timers do; its list and
map states read as each key's whole list and map."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle, TimerValues

from frontier_harness.spark_impl.event_time import processor_state
from frontier_harness.spark_impl.streaming.query import PROVIDER
from frontier_harness.spark_impl.ttl.state.query import ROCKSDB
from tests.jobs.stateful import GroupCounts
from tests.memory_query import MemoryQuery, row

pytestmark = pytest.mark.spark
S = 1_000


def test_an_apply_in_pandas_with_state_group_reads_as_a_value_state_and_its_timeout_as_a_timer(
    spark_session, tmp_path
):
    """`GroupCounts` (tests.jobs.stateful, `count_until_window_end`): key `a` counted twice, its timeout at
    20 s (the end of its first record's window); key `b`'s timeout fired (the watermark passed its 10 s in the
    last batch): its state removed, no timer left for it."""
    q = MemoryQuery(spark_session, tmp_path, GroupCounts(str(tmp_path / "job")).transform).start()
    q.feed(row("b", 2 * S, "b1"), row("a", 12 * S, "a1"))
    q.feed(row("a", 14 * S, "a2"), row("w", 16 * S, "moves E past b's 10 s"))
    q.stop()
    last = max(q.eviction())
    names = processor_state.variables(q.checkpoint, 0)
    [found] = processor_state.entries(spark_session, [(q.checkpoint, last, 0, names)])
    assert names == processor_state.GROUP
    assert {e for e in found if e[1] == '{"key":"a"}'} == {
        (processor_state.GROUP_STATE, '{"key":"a"}', '{"count":2,"due":20000}'),
        (processor_state.TIMERS, '{"key":"a"}', 20 * S),
    }, found
    assert not {e for e in found if e[1] == '{"key":"b"}'}, found
    assert ("b", 10 * S, 1, last) in q.emitted(), q.emitted()


class Seen(StatefulProcessor):
    """A key's records: their `data` in a list state, in arrival order, and each one's event time (ms) in a map
    state keyed by `data`."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.datas = handle.getListState("datas", "data string")
        self.times = handle.getMapState("times", "data string", "t long")

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: TimerValues) -> Iterator[Any]:
        for frame in rows:
            for data, t in zip(frame["data"], frame["event_time"]):
                self.datas.appendValue((data,))
                self.times.updateValue((data,), (t.value // 1_000_000,))
        return iter(())

    def close(self) -> None:
        """Nothing to release."""


def seen(records: Any) -> Any:
    return records.groupBy("key").transformWithStateInPandas(Seen(), "key string", "Append", "None")


def test_a_processors_list_and_map_states_read_as_each_keys_list_in_order_and_its_map_sorted(
    spark_session, tmp_path
):
    """`Seen` (no timers: time mode `None`) over two batches: key `a` gets `a2` then `a1`. Its list state reads
    as its whole list in arrival order, its map state as its entries sorted by key: a change to any element
    changes the key's entry, which is what a trial compares across a SIGKILL
    (`processor_reached.STATE_ACROSS_KILL`). No timers are read: Spark refuses to read them in that mode."""
    q = MemoryQuery(spark_session, tmp_path, seen, conf={PROVIDER: ROCKSDB}).start()
    q.feed(row("a", 2 * S, "a2"), row("b", 3 * S, "b1"))
    q.feed(row("a", 1 * S, "a1"))
    q.stop()
    names = processor_state.variables(q.checkpoint, 0)
    assert sorted(names) == [("datas", processor_state.LIST), ("times", processor_state.MAP)], names
    first, last = processor_state.entries(
        spark_session, [(q.checkpoint, 0, 0, names), (q.checkpoint, max(q.eviction()), 0, names)]
    )
    a = '{"key":"a"}'
    assert {e for e in first if e[1] == a} == {
        ("datas", a, '[{"data":"a2"}]'),
        ("times", a, '[{"key":{"data":"a2"},"value":{"t":2000}}]'),
    }, first
    assert {e for e in last if e[1] == a} == {
        ("datas", a, '[{"data":"a2"},{"data":"a1"}]'),
        ("times", a, '[{"key":{"data":"a1"},"value":{"t":1000}},{"key":{"data":"a2"},"value":{"t":2000}}]'),
    }, last
    assert ("datas", '{"key":"b"}', '[{"data":"b1"}]') in last, last
