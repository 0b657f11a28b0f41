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


class HistoryTables:
    """A batch of histories as Arrow tables, filled row by row, built once: the history -> Arrow step
    every observer takes.

    `schemas` names each table's columns and their Arrow types; `append` adds a row to one
    table; `tables` builds them (`pa.table`, typed, so an empty table keeps its schema).

    >>> tables = HistoryTables({"updates": {"history_id": pa.int64(), "diff": pa.int64()}})
    >>> tables.append("updates", history_id=0, diff=1)
    >>> tables.tables()["updates"].to_pydict()
    {'history_id': [0], 'diff': [1]}
    >>> tables.append("reads", history_id=0)
    Traceback (most recent call last):
    ...
    KeyError: "no table 'reads': ['updates']"
    """

    def __init__(self, schemas: dict[str, dict[str, pa.DataType]]) -> None:
        self._schemas = schemas
        self._columns: dict[str, dict[str, list]] = {
            name: {col: [] for col in s} for name, s in schemas.items()
        }

    def append(self, table: str, **values: Any) -> None:
        """One row added to `table`; every column must be given."""
        if table not in self._columns:
            raise KeyError(f"no table {table!r}: {sorted(self._columns)}")
        for name, value in values.items():
            self._columns[table][name].append(value)

    def tables(self) -> dict[str, pa.Table]:
        """Every table, typed by its schema."""
        return {
            name: pa.table(
                {col: pa.array(values, type=self._schemas[name][col]) for col, values in cols.items()}
            )
            for name, cols in self._columns.items()
        }

    def frames(self) -> dict[str, DataFrame]:
        """Every table as a DataFrame (`to_frame`)."""
        return {name: to_frame(table) for name, table in self.tables().items()}


def columns_of(rows: pa.Table) -> dict[str, list]:
    """A result table's columns as Python lists, the Arrow -> Python step every observer's decode takes.

    >>> columns_of(pa.table({"step": [0, 1]}))
    {'step': [0, 1]}
    """
    return {name: rows.column(name).to_pylist() for name in rows.column_names}
