"""Timeline rules: which timeline a source gets, and a dataflow reads from at most one (seed `timelines.md`).

>>> single_timeline("v", {"t": EpochMilliseconds(), "c": None})
EpochMilliseconds()
"""

from __future__ import annotations

from collections.abc import Mapping

from frontier_harness.model.catalog.timeline import Counter, EpochMilliseconds, External, Timeline, User
from frontier_harness.model.errors import InvalidSourceOption, TimelineError
from frontier_harness.model.vocabulary.catalog import CatalogArg, SourceKind

SOURCE_KINDS = tuple(SourceKind)


def is_epoch(timeline: Timeline | None) -> bool:
    """Whether `timeline` is EpochMilliseconds (the only one comparable to wall-clock time).

    >>> is_epoch(EpochMilliseconds()), is_epoch(User("x")), is_epoch(None)
    (True, False, False)
    """
    return isinstance(timeline, EpochMilliseconds)


def source_timeline(
    kind: str,
    name: str,
    *,
    timeline: str | None = None,
    epoch_ms_timeline: bool = False,
    consistency_topic: tuple[str, str] | None = None,
) -> Timeline:
    """The timeline of a source of `kind` called `name`, given its `WITH` options.

    `timeline='x'` gives `User('x')` for any kind; a CDC source is `External(name)`
    unless `epoch_ms_timeline`; a Kafka source with a Debezium consistency topic
    `(broker, topic)` is `Counter`; everything else is `EpochMilliseconds`.
    Choice: the three options are mutually exclusive (a typed error names them).

    >>> source_timeline("cdc", "orders"), source_timeline("cdc", "orders", epoch_ms_timeline=True)
    (External(name='orders'), EpochMilliseconds())
    >>> source_timeline("kafka", "k", consistency_topic=("b1", "t1"))
    Counter(broker='b1', topic='t1')
    """
    _check_source_options(kind, timeline, epoch_ms_timeline, consistency_topic)
    if timeline is not None:
        return User(timeline)
    if kind == SourceKind.CDC and not epoch_ms_timeline:
        return External(name)
    if consistency_topic is not None:
        return Counter(*consistency_topic)
    return EpochMilliseconds()


def _check_source_options(kind, timeline, epoch_ms_timeline, consistency_topic) -> None:
    if kind not in SOURCE_KINDS:
        raise InvalidSourceOption(kind, CatalogArg.KIND, f"expected one of {', '.join(SOURCE_KINDS)}")
    given = {
        CatalogArg.TIMELINE: timeline,
        CatalogArg.EPOCH_MS_TIMELINE: epoch_ms_timeline or None,
        CatalogArg.CONSISTENCY_TOPIC: consistency_topic,
    }
    named = sorted(k for k, v in given.items() if v is not None)
    if len(named) > 1:
        raise InvalidSourceOption(kind, named, "these options are mutually exclusive")
    if epoch_ms_timeline and kind != SourceKind.CDC:
        raise InvalidSourceOption(kind, CatalogArg.EPOCH_MS_TIMELINE, "only a cdc source takes it")
    if consistency_topic is not None and kind != SourceKind.KAFKA:
        raise InvalidSourceOption(kind, CatalogArg.CONSISTENCY_TOPIC, "only a kafka source takes it")


def single_timeline(owner: str, timelines: Mapping[str, Timeline | None]) -> Timeline | None:
    """The one timeline of `owner`'s inputs (`None` if none has one); else a `TimelineError`.

    `timelines` maps every transitive input to its timeline (`None` for constants).
    The error names every input that has a timeline, with that timeline.

    >>> single_timeline("v", {"a": EpochMilliseconds(), "b": External("b")})
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.TimelineError: multiple timelines within one dataflow are not supported: 'v' depends on 'a' (EpochMilliseconds()), 'b' (External(name='b'))
    """
    present = {name: t for name, t in timelines.items() if t is not None}
    distinct = set(present.values())
    if len(distinct) > 1:
        raise TimelineError(owner, present)
    return next(iter(distinct), None)
