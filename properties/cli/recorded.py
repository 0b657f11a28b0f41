"""What Spark recorded in a checkpoint, as a table: what a restart of the query is keyed on.

`validate-checkpoint --state` prints it beside the laws, from the one reader of Spark's own metadata
(`frontier_harness.spark_impl.event_time.checkpoint_metadata`, through
`frontier_harness.properties.adapters.upgrade.recorded_checkpoint`) that `upgrade --checkpoint` compares
with a new job: each source (its kind, and the files a file source's log names), each stateful operator
(its id, name, partitions, state key and value schemas, the watermark delay its key records), the
journaled watermark and the settings `offsets/N` pins.

>>> from rich.console import Console
>>> op = {"id": 0, "name": "dedupe", "partitions": 2, "key": [{"name": "k", "type": "string", "nullable": True}],
...       "value": [], "groups": []}
>>> recorded = {"sources": [{"kind": "file", "files": ["a.json"]}], "operators": [op], "conf": {"x": "1"},
...             "watermark_ms": 0, "batch": 3}
>>> console = Console(width=200)
>>> with console.capture() as captured:
...     console.print(recorded_table(recorded))
>>> "operator 0: dedupe" in captured.get(), "key struct<k:string>" in captured.get()
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from frontier_harness.model.upgrade.schema import shown
from frontier_harness.model.vocabulary.event_time import FieldKey, OperatorKey, Recorded, SourceKey


def recorded_table(recorded: Mapping[str, Any]) -> Table:
    """One row per source and per stateful operator, then the watermark and the pinned settings."""
    table = Table(title="recorded by Spark (what a restart is keyed on; `upgrade --checkpoint` compares it)")
    for column in ("what", "recorded"):
        table.add_column(column)
    for i, source in enumerate(recorded[Recorded.SOURCES]):
        files = source.get(SourceKey.FILES)
        table.add_row(
            f"source {i}",
            str(source[SourceKey.KIND]) + (f", {len(files)} file(s) read" if files is not None else ""),
        )
    for op in recorded[Recorded.OPERATORS]:
        key, value = op.get(OperatorKey.KEY), op.get(OperatorKey.VALUE)
        delays = sorted({f[FieldKey.DELAY_MS] for f in key or () if f.get(FieldKey.DELAY_MS) is not None})
        parts = [f"{op[OperatorKey.PARTITIONS]} partitions"]
        parts += [f"key {shown(key)}"] if key is not None else []
        parts += [f"value {shown(value)}"] if value is not None else []
        parts += [f"watermark delay {delays} ms"] if delays else []
        parts += [f"{len(op.get(OperatorKey.GROUPS) or ())} group(s) held"]
        name = op[OperatorKey.NAME] or "kind unknown (no operator metadata: Spark 3.x wrote it)"
        table.add_row(f"operator {op[OperatorKey.ID]}: {name}", "; ".join(parts))
    table.add_row(
        f"watermark (offsets/{recorded.get(Recorded.BATCH)})", f"{recorded.get(Recorded.WATERMARK_MS)} ms"
    )
    table.add_row("pinned settings", f"{len(recorded.get(Recorded.CONF) or {})}")
    return table
