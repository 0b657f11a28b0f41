"""Deliberately broken TTL state processors and drivers: the ttl_spark_state suite must catch each.

A processor runs in Spark's Python workers and a restarted query in a driver process of its own, so a
planted bug is a processor class (importable by name, pickled by value) or a driver module the store is
handed. Each factory is importable as `--impl tests.planted_ttl_state:NAME`, so a counterexample replays.

- `copy_kept`: a copy of every value in a state without TTL, served once the TTL'd value expired;
- `puts_at_the_end`: puts and deletes buffered to the end of the group's batch, so a get after a put in
  the same batch reads the value before it;
- `restarts_an_hour_behind`: every restart's driver runs on a clock an hour behind the first's
  (`tests.ttl_clock_behind`, Debian's libfaketime): the batch timestamp goes back across a restart
  (`tests/test_spark_state_clock.py` runs one history with it: a faked JVM is ~25x slower).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark import cloudpickle
from pyspark.sql import Row

from frontier_harness.model.vocabulary.ttl import StateAction
from frontier_harness.properties.adapters.spark import SparkImplementation
from frontier_harness.spark_impl.ttl.state.processor import TtlProcessor
from frontier_harness.spark_impl.ttl.state.store import observe_ttl_spark_state

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Spark's Python workers cannot import tests/


class CopyKeepingProcessor(TtlProcessor):
    """Bug: a copy of every value in a state without TTL, served once the TTL'd value has expired."""

    def init(self, handle: Any) -> None:
        super().init(handle)
        self.copy = handle.getValueState("copy", "value string")

    def put(self, value: str) -> None:
        super().put(value)
        self.copy.update((value,))

    def delete(self) -> None:
        super().delete()
        self.copy.clear()

    def get(self) -> str | None:
        found = super().get()
        kept = self.copy.get()
        return found if found is not None or kept is None else kept[0]


class PutsAtTheEnd(TtlProcessor):
    """Bug: writes buffered to the end of the group's batch; a get answers from the state before them."""

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Row]:
        last = None  # the group's last write: ("put", value) or ("delete", None)
        for row in sorted(rows, key=lambda r: r.seq):
            if row.op == StateAction.GET:
                yield Row(
                    history_id=row.history_id, key=row.key, seq=row.seq, step=row.step, value=self.get()
                )
            else:
                last = (row.op, row.value)
        if last is not None:
            self.put(last[1]) if last[0] == StateAction.PUT else self.delete()


class Planted(SparkImplementation):
    """Spark's store with a planted `processor` or restart `driver`."""

    def __init__(self, processor: type = TtlProcessor, driver: str | None = None):
        super().__init__()
        self.processor, self.driver = processor, driver

    def observe_ttl_spark_state(self, domain: Any, histories: Sequence[Any]) -> list[dict]:
        more = {"driver": self.driver} if self.driver else {}
        return observe_ttl_spark_state(domain, histories, processor=self.processor, **more)


def copy_kept() -> Planted:
    return Planted(CopyKeepingProcessor)


def puts_at_the_end() -> Planted:
    return Planted(PutsAtTheEnd)


def restarts_an_hour_behind() -> Planted:
    return Planted(driver="tests.ttl_clock_behind")
