"""The store's requests as a `transformWithState` processor over one value state with a TTL.

Rows are requests of one `(history_id, key)` group: `put` updates the value state, `delete`
clears it, `get` answers with what the state holds now (Spark hides an expired value from
`get` before it removes it: `value` is null then). A batch applies a key's requests in their
`seq` order. The state's TTL (`ttlDurationMs`) counts from the batch timestamp of the batch that
last wrote it: Spark's processing-time clock, journaled as `batchTimestampMs` in `offsets/N`.

>>> TtlProcessor(2000).ttl_ms
2000
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from frontier_harness.model.vocabulary.ttl import StateAction

REQUESTS = "history_id long, key string, seq long, op string, value string, step long"
ANSWERS = "history_id long, key string, seq long, step long, value string"


class TtlProcessor(StatefulProcessor):
    """Put, get and delete over `value`, a value state whose entries expire `ttl_ms` after their write."""

    def __init__(self, ttl_ms: int) -> None:
        self.ttl_ms = ttl_ms

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.value = handle.getValueState("value", "value string", self.ttl_ms)

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Row]:
        """Each request of the group in `seq` order (rows: `transformWithState` hands `Row`s); a get's answer."""
        for row in sorted(rows, key=lambda r: r.seq):
            if row.op == StateAction.PUT:
                self.put(row.value)
            elif row.op == StateAction.DELETE:
                self.delete()
            elif row.op == StateAction.GET:
                yield Row(
                    history_id=row.history_id, key=row.key, seq=row.seq, step=row.step, value=self.get()
                )

    def put(self, value: str) -> None:
        self.value.update((value,))

    def delete(self) -> None:
        self.value.clear()

    def get(self) -> str | None:
        found = self.value.get()
        return None if found is None else found[0]

    def close(self) -> None:
        """Nothing to release."""
