"""A source's offsets in an offset log, as frontiers of a time domain (one per stream).

Spark stores each source's end offsets as the source's own JSON. The shapes of every
source Spark ships, and ours, are read:

- frontier-harness's source: `{"frontier": [[lo, hi, offset], ...]}`, a Partitioned frontier;
- Kafka: `{"topic": {"0": 42, "1": 17}}`: per topic one stream, a Partitioned frontier with
  one point per listed partition and the partitions above the highest not yet seen;
- a plain number (rate, socket, memory sources): a Total frontier `{n}`;
- the file source's `{"logOffset": n}`: a Total frontier `{n}`;
- frontier-harness's CDC source's `{"lsn": n}` (a commit end LSN): a Total frontier `{n}`;
- `rate-micro-batch`'s `{"offset": n, "timestamp": ms}`: a `product(total,total)` frontier
  `{(n, ms)}` (both grow with every batch).

A source's offsets in any other shape (a third-party source) raise `UnknownOffsets`: the
reader names that source as unchecked and still checks its batches and commits. A known
shape with a value no domain accepts (a negative offset) is `InvalidOffsets`: bad input.

A stream is named by the source's position (`"0"`), and for Kafka `"0:topic"`. Values
come back encoded (`Domain.encode`), ready for a history's arguments.

>>> streams("0", 7)
[('0', 'total', [7])]
>>> streams("1", {"orders": {"1": 5, "0": 3}})
[('1:orders', 'partitioned', [[0, 0, 3], [1, 1, 5], [2, 2147483647, 0]])]
>>> streams("0", {"lsn": 6456936})
[('0', 'total', [6456936])]
>>> streams("0", {"offset": 7, "timestamp": 1000})
[('0', 'product(total,total)', [[7, 1000]])]
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.errors import InvalidTime
from frontier_harness.model.time.domains import PARTITION_MAX, Partitioned, Total
from frontier_harness.model.vocabulary.streaming import SourceOffsets

KNOWN = (
    'frontier-harness {"frontier": [...]}, Kafka {"topic": {"partition": offset}}, a number, '
    '{"logOffset": n}, the CDC source {"lsn": n}, rate-micro-batch {"offset": n, "timestamp": ms}'
)
RATE_MICRO_BATCH = "product(total,total)"


class UnknownOffsets(ValueError):
    """Offsets in no shape this reader knows (a third-party source's): reported unchecked, not an error."""


class InvalidOffsets(ValueError):
    """Offsets in a known shape with a value no domain accepts; the reader names the file and line."""


def streams(source: str, raw: Any) -> list[tuple[str, str, list]]:
    """`(stream, domain name, encoded frontier)` for one source's offsets; `UnknownOffsets` otherwise."""
    if _is_int(raw):
        return [(source, "total", [_total(raw)])]
    for key in ("logOffset", "lsn"):
        if isinstance(raw, dict) and set(raw) == {key} and _is_int(raw[key]):
            return [(source, "total", [_total(raw[key])])]
    if isinstance(raw, dict) and set(raw) == {"offset", "timestamp"} and all(map(_is_int, raw.values())):
        return [(source, RATE_MICRO_BATCH, [[_total(raw["offset"]), _total(raw["timestamp"])]])]
    ours = SourceOffsets.FRONTIER
    if isinstance(raw, dict) and set(raw) == {ours} and isinstance(raw[ours], list):
        return [(source, "partitioned", [_partitioned(e) for e in raw[ours]])]
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
        raise InvalidOffsets(str(exc)) from exc


def _partitioned(element: Any) -> list:
    try:
        domain = Partitioned()
        return domain.encode(domain.decode(element))
    except (InvalidTime, TypeError) as exc:
        raise InvalidOffsets(f"frontier element {element!r}: {exc}") from exc


def _kafka(partitions: dict) -> list:
    known = sorted((int(p), offset) for p, offset in partitions.items())
    points = [_partitioned([p, p, offset]) for p, offset in known]
    rest = known[-1][0] + 1
    return points + ([[rest, PARTITION_MAX, 0]] if rest <= PARTITION_MAX else [])
