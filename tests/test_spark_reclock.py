"""spark_impl reclocking on hand-written histories: every path of the assignment, against the model."""

from __future__ import annotations

import pytest

from frontier_harness.model.time.domains import PARTITION_MAX, parse_domain
from frontier_harness.model.time.domains import PartitionedTime as P
from frontier_harness.properties.checks.reclocking.reclock import observe
from frontier_harness.properties.engine.history import Action, History

pytestmark = pytest.mark.spark


def mint(upper, tick):
    return Action("mint", {"upper": tuple(upper), "tick": tick})


def update(data, time, diff=1):
    return Action("update", {"data": data, "time": time, "diff": diff})


HISTORIES = {
    "total": [
        # boundary: an update at the new upper stays pending; a skipped tick; inversion at a binding time
        [
            mint([3], 2),
            update("a", 2),
            update("b", 3),
            mint([9], 1),
            Action("invert", {"tick": 2}),
            Action("invert", {"tick": 3}),
            Action("read", {"tick": 2}),
        ],
        # compaction to a binding time, then closing the source assigns everything pending
        [
            mint([2], 1),
            mint([5], 3),
            update("a", 0),
            update("b", 4),
            Action("compact", {"to": 3}),
            Action("reclock", {}),
            update("c", 7),
            mint([], 4),
            Action("invert", {"closed": True}),
        ],
    ],
    "partitioned": [
        # a new partition appears; an update on partition 0 must not move when partition 1 changes
        [
            mint([P(0, 0, 2), P(1, PARTITION_MAX, 0)], 1),
            update("a", P(0, 0, 1)),
            update("b", P(1, 1, 0)),
            mint([P(0, 0, 2), P(1, 1, 3), P(2, PARTITION_MAX, 0)], 2),
            update("c", P(0, 2, 1)),
            Action("read", {"tick": 2}),
        ],
    ],
    "product(total,total)": [
        [
            mint([(2, 0), (0, 2)], 1),
            update("a", (1, 1)),
            update("b", (2, 2)),
            mint([(3, 3)], 2),
            Action("invert", {"tick": 2}),
        ],
    ],
}


@pytest.mark.parametrize("domain_name", sorted(HISTORIES))
def test_spark_reclocking_equals_the_model_on_hand_written_histories(spark_session, domain_name):
    from frontier_harness.spark_impl.reclocking.reclock import observe_reclock

    histories = [History(domain_name, tuple(actions)) for actions in HISTORIES[domain_name]]
    assert observe_reclock(parse_domain(domain_name), histories) == [observe(h) for h in histories]


def test_the_bench_job_reclocks_every_update_to_its_tick():
    """The benchmark measures real work: each offset `s` goes to tick `s // 100 + 1`, none pending."""
    from frontier_harness.properties.bench.reclocking import reclock_job

    rows = reclock_job(1_000).select("into_time", "from_time", "diff").collect()
    assert sorted(r["into_time"] for r in rows) == sorted(s // 100 + 1 for s in range(1_000))
    assert {r["from_time"] for r in rows} == {None}
    assert {r["diff"] for r in rows} == {1}
