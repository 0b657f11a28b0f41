"""Arrow both ways: histories reach Spark as `pyarrow.Table`s and results return by `toArrow()`.

Row-by-row Python does not scale; Arrow batches do (DESIGN.md, batched checking).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_type

from frontier_harness.spark_impl.session import spark


def arrow_type(spark_type: T.DataType) -> pa.DataType:
    """The Arrow type Spark reads back as `spark_type`."""
    return to_arrow_type(spark_type)


def to_frame(table: pa.Table) -> DataFrame:
    """A DataFrame of an Arrow table, schema given explicitly (Spark Connect cannot infer one from zero rows)."""
    return spark().createDataFrame(table, schema=from_arrow_schema(table.schema))


def append_row(columns: dict[str, list], **values: Any) -> None:
    """One row added to a table held as columns (`{name: values}`), the shape `pa.table` takes.

    >>> table = {"a": [], "b": []}
    >>> append_row(table, a=1, b="x")
    >>> table
    {'a': [1], 'b': ['x']}
    """
    for name, value in values.items():
        columns[name].append(value)
