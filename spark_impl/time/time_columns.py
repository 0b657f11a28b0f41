"""How each time domain lives in Spark: a data type and Column expressions.

`TimeColumns` is spark_impl's own encoding of a domain's order, written with
Spark built-ins (never by calling the model's `le`/`join`/`meet`):

- Total: `long`, ordered by `<=`.
- Product(A, B): `struct<a: A, b: B>`, ordered coordinate-wise.
- Partitioned: `struct<lo: long, hi: long, offset: long>`; `a <= b` iff
  `a.lo <= b.lo`, `b.hi <= a.hi` and `a.offset <= b.offset`; `join` is null when
  the intervals are disjoint.

Frontiers are `array<time>` columns; see `frontier_harness.spark_impl.time.frontiers`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.model.time.partitioned_time import PartitionedTime  # value types

ColumnOp = Callable[[Column, Column], Column]


@attrs.frozen
class TimeColumns:
    """A domain's Spark type, its order as Column expressions, and value conversion."""

    spark_type: T.DataType
    le: ColumnOp
    join: ColumnOp
    meet: ColumnOp
    to_row: Callable[[Any], Any]
    from_row: Callable[[Any], Any]

    def lt(self, a: Column, b: Column) -> Column:
        return self.le(a, b) & ~(a == b)


def time_columns(domain: Any) -> TimeColumns:
    """The Spark encoding of a model domain, dispatched on its name."""
    if domain.name == "total":
        return _TOTAL
    if domain.name == "partitioned":
        return _PARTITIONED
    if domain.name.startswith("product("):
        return _product(time_columns(domain.a), time_columns(domain.b))
    raise ValueError(f"spark_impl has no encoding for time domain {domain.name!r}")


_TOTAL = TimeColumns(
    spark_type=T.LongType(),
    le=lambda a, b: a <= b,
    join=lambda a, b: F.greatest(a, b),
    meet=lambda a, b: F.least(a, b),
    to_row=int,
    from_row=int,
)

_PARTITIONED_TYPE = T.StructType(
    [T.StructField(name, T.LongType(), False) for name in ("lo", "hi", "offset")]
)


def _partitioned_join(a: Column, b: Column) -> Column:
    lo, hi = F.greatest(a["lo"], b["lo"]), F.least(a["hi"], b["hi"])
    joined = F.struct(lo.alias("lo"), hi.alias("hi"), F.greatest(a["offset"], b["offset"]).alias("offset"))
    return F.when(lo <= hi, joined)


_PARTITIONED = TimeColumns(
    spark_type=_PARTITIONED_TYPE,
    le=lambda a, b: (a["lo"] <= b["lo"]) & (b["hi"] <= a["hi"]) & (a["offset"] <= b["offset"]),
    join=_partitioned_join,
    meet=lambda a, b: F.struct(
        F.least(a["lo"], b["lo"]).alias("lo"),
        F.greatest(a["hi"], b["hi"]).alias("hi"),
        F.least(a["offset"], b["offset"]).alias("offset"),
    ),
    to_row=lambda t: {"lo": t.lo, "hi": t.hi, "offset": t.offset},
    from_row=lambda r: PartitionedTime(r["lo"], r["hi"], r["offset"]),
)


def _product(first: TimeColumns, second: TimeColumns) -> TimeColumns:
    spark_type = T.StructType(
        [T.StructField("a", first.spark_type, False), T.StructField("b", second.spark_type, False)]
    )

    def join(x: Column, y: Column) -> Column:
        ja, jb = first.join(x["a"], y["a"]), second.join(x["b"], y["b"])
        return F.when(ja.isNotNull() & jb.isNotNull(), F.struct(ja.alias("a"), jb.alias("b")))

    return TimeColumns(
        spark_type=spark_type,
        le=lambda x, y: first.le(x["a"], y["a"]) & second.le(x["b"], y["b"]),
        join=join,
        meet=lambda x, y: F.struct(
            first.meet(x["a"], y["a"]).alias("a"), second.meet(x["b"], y["b"]).alias("b")
        ),
        to_row=lambda t: {"a": first.to_row(t[0]), "b": second.to_row(t[1])},
        from_row=lambda r: (first.from_row(r["a"]), second.from_row(r["b"])),
    )
