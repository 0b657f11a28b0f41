"""Spark's state schema compatibility rule, restated over Spark's JSON form of data types.

On a restart, `StateSchemaCompatibilityChecker.check` (Spark:
sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/state/StateSchemaCompatibilityChecker.scala,
SPARK-27237) accepts a new key (and value) schema when it equals the stored one, or when
`DataType.equalsIgnoreNameAndCompatibleNullability(new, stored)` holds: the same number of fields, in the
same order, of the same types, field names ignored, and a stored non-nullable field never made
nullable. Since Spark 4.3, with `spark.sql.streaming.statefulOperator.alwaysNullableOutput.enabled`
(pinned in `offsets/N`) every state schema is widened to fully nullable before it is written or compared
(`WidenStatefulOpNullability.widenStateSchema`).

>>> stored = [field("count", "long")]
>>> compatible(stored, [field("sum", "long")]), compatible(stored, [field("sum", "double"), field("count", "long")])
(True, False)
>>> compatible([field("n", "long", nullable=False)], [field("n", "long")])  # made nullable: refused
False
>>> shown([field("key", "string"), field("w", struct([field("start", "timestamp")]))])
'struct<key:string,w:struct<start:timestamp>>'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from frontier_harness.model.vocabulary.event_time import FieldKey

Fields = Sequence[Mapping[str, Any]]
SIMPLE_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}


def field(name: str, data_type: Any, nullable: bool = True) -> dict:
    """A field as the reader gives it (no lineage, no delay)."""
    return {FieldKey.NAME: name, FieldKey.TYPE: data_type, FieldKey.NULLABLE: nullable}


def struct(fields: Fields) -> dict:
    """The JSON struct type of `fields`."""
    return {
        "type": "struct",
        "fields": [
            {
                "name": f[FieldKey.NAME],
                "type": f[FieldKey.TYPE],
                "nullable": f[FieldKey.NULLABLE],
                "metadata": {},
            }
            for f in fields
        ],
    }


def compatible(stored: Fields, new: Fields) -> bool:
    """Whether Spark accepts schema `new` where `stored` was written (see the module docstring)."""
    return _compatible(struct(new), struct(stored))


def _compatible(new: Any, stored: Any) -> bool:
    kind = new.get("type") if isinstance(new, dict) else None
    if kind != (stored.get("type") if isinstance(stored, dict) else None):
        return False
    if kind == "struct":
        pairs = list(zip(new["fields"], stored["fields"]))
        return len(new["fields"]) == len(stored["fields"]) and all(
            (s["nullable"] or not n["nullable"]) and _compatible(n["type"], s["type"]) for n, s in pairs
        )
    if kind == "array":
        return (stored["containsNull"] or not new["containsNull"]) and _compatible(
            new["elementType"], stored["elementType"]
        )
    if kind == "map":
        return (
            (stored["valueContainsNull"] or not new["valueContainsNull"])
            and _compatible(new["keyType"], stored["keyType"])
            and _compatible(new["valueType"], stored["valueType"])
        )
    return bool(new == stored)


def as_nullable(fields: Fields) -> list[dict]:
    """`fields` widened to fully nullable (`DataType.asNullable`), as Spark 4.3 writes state schemas."""
    return [{**f, FieldKey.NULLABLE: True, FieldKey.TYPE: _nullable(f[FieldKey.TYPE])} for f in fields]


def _nullable(data_type: Any) -> Any:
    kind = data_type.get("type") if isinstance(data_type, dict) else None
    if kind == "struct":
        return {
            **data_type,
            "fields": [{**f, "nullable": True, "type": _nullable(f["type"])} for f in data_type["fields"]],
        }
    if kind == "array":
        return {**data_type, "containsNull": True, "elementType": _nullable(data_type["elementType"])}
    if kind == "map":
        return {
            **data_type,
            "valueContainsNull": True,
            "keyType": _nullable(data_type["keyType"]),
            "valueType": _nullable(data_type["valueType"]),
        }
    return data_type


def shown(fields: Fields) -> str:
    """`fields` as Spark's simple string of a struct (`struct<key:string,count:bigint>`)."""
    return _shown(struct(fields))


def _shown(data_type: Any) -> str:
    if not isinstance(data_type, dict):
        return SIMPLE_NAMES.get(str(data_type), str(data_type))
    kind = data_type.get("type")
    if kind == "struct":
        return "struct<" + ",".join(f"{f['name']}:{_shown(f['type'])}" for f in data_type["fields"]) + ">"
    if kind == "array":
        return f"array<{_shown(data_type['elementType'])}>"
    if kind == "map":
        return f"map<{_shown(data_type['keyType'])},{_shown(data_type['valueType'])}>"
    return str(kind)


def same_types(old: Fields, new: Fields) -> bool:
    """Whether two schemas have the same types in the same order, names and nullability aside."""
    return len(old) == len(new) and all(
        _shown(o[FieldKey.TYPE]) == _shown(n[FieldKey.TYPE]) for o, n in zip(old, new)
    )
