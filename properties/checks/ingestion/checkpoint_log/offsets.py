"""A source's offsets in an offset log, as frontiers of a time domain (one per stream).

Spark stores each source's end offsets as the source's own JSON. Four shapes are read:

- frontier-harness's source: `{"frontier": [[lo, hi, offset], ...]}`, a Partitioned frontier;
- Kafka: `{"topic": {"0": 42, "1": 17}}`: per topic one stream, a Partitioned frontier with
  one point per listed partition and the partitions above the highest not yet seen;
- a plain number (rate, socket, memory sources): a Total frontier `{n}`;
- the file source's `{"logOffset": n}`: a Total frontier `{n}`.

A stream is named by the source's position (`"0"`), and for Kafka `"0:topic"`. Values
come back encoded (`Domain.encode`), ready for a history's arguments.

>>> streams("0", 7)
[('0', 'total', [7])]
>>> streams("1", {"orders": {"1": 5, "0": 3}})
[('1:orders', 'partitioned', [[0, 0, 3], [1, 1, 5], [2, 2147483647, 0]])]
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.domains import PARTITION_MAX, Partitioned, Total
from frontier_harness.model.errors import InvalidTime

KNOWN = (
    'frontier-harness {"frontier": [...]}, Kafka {"topic": {"partition": offset}}, a number, {"logOffset": n}'
)


class UnknownOffsets(ValueError):
    """Offsets in no shape this reader knows, or with values no domain accepts; the reader names the line."""


def streams(source: str, raw: Any) -> list[tuple[str, str, list]]:
    """`(stream, domain name, encoded frontier)` for one source's offsets; `UnknownOffsets` otherwise."""
    if _is_int(raw):
        return [(source, "total", [_total(raw)])]
    if isinstance(raw, dict) and set(raw) == {"logOffset"} and _is_int(raw["logOffset"]):
        return [(source, "total", [_total(raw["logOffset"])])]
    if isinstance(raw, dict) and set(raw) == {"frontier"} and isinstance(raw["frontier"], list):
        return [(source, "partitioned", [_partitioned(e) for e in raw["frontier"]])]
    if isinstance(raw, dict) and raw and all(_is_partition_map(v) for v in raw.values()):
        return [(f"{source}:{topic}", "partitioned", _kafka(raw[topic])) for topic in sorted(raw)]
    raise UnknownOffsets(f"offsets {raw!r} are in no shape this reader knows ({KNOWN})")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_partition_map(value: Any) -> bool:
    return (
        isinstance(value, dict) and bool(value) and all(k.isdigit() and _is_int(v) for k, v in value.items())
    )


def _total(value: int) -> int:
    try:
        return Total().encode(Total().validate(value))
    except InvalidTime as exc:
        raise UnknownOffsets(str(exc)) from exc


def _partitioned(element: Any) -> list:
    try:
        domain = Partitioned()
        return domain.encode(domain.decode(element))
    except (InvalidTime, TypeError) as exc:
        raise UnknownOffsets(f"frontier element {element!r}: {exc}") from exc


def _kafka(partitions: dict) -> list:
    known = sorted((int(p), offset) for p, offset in partitions.items())
    points = [_partitioned([p, p, offset]) for p, offset in known]
    rest = known[-1][0] + 1
    return points + ([[rest, PARTITION_MAX, 0]] if rest <= PARTITION_MAX else [])
