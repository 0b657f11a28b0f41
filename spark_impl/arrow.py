"""Arrow both ways: histories reach Spark as `pyarrow.Table`s and results return by `toArrow()`.

Row-by-row Python does not scale; Arrow batches do (DESIGN.md, batched checking).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_type


def arrow_type(spark_type: T.DataType) -> pa.DataType:
    """The Arrow type Spark reads back as `spark_type`."""
    return to_arrow_type(spark_type)
