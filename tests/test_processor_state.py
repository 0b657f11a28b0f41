"""A user's processor's state as a trial reads it (`spark_impl/event_time/processor_state.py`), from a real
query's checkpoint: an `applyInPandasWithState` group's state reads as one value state and its event-time
timeout as a timer, as a `transformWithStateInPandas` processor's value states and timers do."""

from __future__ import annotations

import pytest

from frontier_harness.spark_impl.event_time import processor_state
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
    assert names == (processor_state.GROUP_STATE,)
    assert {e for e in found if e[1] == '{"key":"a"}'} == {
        (processor_state.GROUP_STATE, '{"key":"a"}', '{"count":2,"due":20000}'),
        (processor_state.TIMERS, '{"key":"a"}', 20 * S),
    }, found
    assert not {e for e in found if e[1] == '{"key":"b"}'}, found
    assert ("b", 10 * S, 1, last) in q.emitted(), q.emitted()
