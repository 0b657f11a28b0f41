"""A stream-stream join job's plan as the stateful suite needs it, read from Spark's plan objects, and the join
jobs the suite refuses (each in one line, `JobContractError`, before any trial).

`join_plan(spec, session, job)` builds the job's `transform(left, right)` over the stateful source's two
sides (never started) and reads, from what Spark plans (a classic session):

- the join (`StreamingSymmetricHashJoinExec`): its type (`Inner`, `LeftOuter`, `RightOuter`), its equality
  keys (record columns, the same on both sides), and its time-range condition as Spark solves it: the
  state value watermark catalyst's `StreamingJoinHelper.getStateValueWatermark` gives each side under an
  event-time watermark E, read from a second plan whose two inputs both carry a (0 ms) watermark, so the
  bounds are read whichever sides the job watermarks. On the millisecond grid the records are on, a strict
  bound `c` is the inclusive bound `c + 1 ms`: Spark's state watermark is the same;
- each side's `withWatermark` delay (the `EventTimeWatermark` under that side of the join, on the records'
  `event_time`), None when the side has none;
- the output columns holding each side's `data` (aliases followed down to each side's source), which
  name a joined row by the two records it joins;
- for a count over the join (`counted`: an append-mode `count(*)` per join key and window of one side's
  event time, Spark's aggregation operator 0 and the join 1), the window, the side whose raw `event_time` the
  window reads and the join key it groups by (each grouping expression followed down to the sides' sources)
  and the output columns holding the key, the window and the count.

Refused (one line each): a Spark Connect session, an outer join in update mode (Spark refuses it; an inner
join emits the same rows in either mode), a job with another stateful operator than the one join but a count over it (another
aggregate or grouping, a window over a derived time, over a side without a watermark, or sliding with a duration not a
multiple of its slide, update mode; a window over an outer join's null side is the inner join Spark's optimizer makes of
it, and is read as one), a full outer or semi join, a key
that is not a record column (the same on both sides) or is `event_time`, a condition on another column than
`event_time` beyond the keys' equality, a filter before or after the join, an outer join without a watermark on both sides (neither side's
state is ever evicted, so its unmatched rows are never emitted: the model states it, the suite does not judge
it), a watermark on another column than `event_time` or over anything but the side's records, and an output
that drops a side's `data`.
"""

from __future__ import annotations

from typing import Any

import attrs

from frontier_harness.model.vocabulary.event_time import FieldKey, OperatorKey, OutputMode, Recorded
from frontier_harness.spark_impl.event_time.plan_metadata import (
    _ATTRIBUTE,
    STATE_WRITERS,
    _delay_ms,
    definitions,
    is_window,
    kind,
    plan_metadata,
    preorder,
    render,
    seq,
)
from frontier_harness.spark_impl.event_time.stateful_plan import (
    RAW_EVENT_TIME,
    RECORD_COLUMNS,
    STATEFUL,
    UNDER_A_WATERMARK,
    first_line,
    output_mode,
    windowing_filters,
)
from frontier_harness.spark_impl.streaming.event_source import NAME, EventSource
from frontier_harness.spark_impl.streaming.job import JobContractError, joined

JOIN = "StreamingSymmetricHashJoinExec"
AGGREGATION = "StateStoreSaveExec"
# Spark's join types the model states, as the model names them (`model.event_time.join.JoinType`).
TYPES = {"Inner": "inner", "LeftOuter": "leftOuter", "RightOuter": "rightOuter"}
HELPER = "org.apache.spark.sql.catalyst.analysis.StreamingJoinHelper"
FAR = 10**12  # an event-time watermark (ms) to solve the condition at: beyond every bound, and a Java long


def join_plan(spec: str, session: Any, job: Any) -> dict:
    """The join job's plan (see the module docstring): `how`, `keys`, `lower`, `upper`, `delays` (left,
    right), `output_mode`, `data_columns`, `columns`, `counted`; or `JobContractError`."""
    mode = output_mode(spec, job)
    if getattr(session, "_jvm", None) is None:
        raise JobContractError(spec, "the stateful suite does not run through Spark Connect (--remote)")
    session.dataSource.register(EventSource)
    out = _transformed(spec, session, job, watermarked=False)
    execution = out._jdf.queryExecution().queryExecutionForExplain()
    analyzed = execution.analyzed()
    physical = _the_join(spec, preorder(execution.executedPlan()))
    how = TYPES.get(physical.joinType().toString())
    if how is None:
        raise JobContractError(
            spec, f"a {physical.joinType().toString()} stream-stream join is not supported"
        )
    logical = next(n for n in preorder(analyzed) if kind(n) == "Join")
    defs = definitions(preorder(analyzed))
    if how != "inner" and mode != OutputMode.APPEND:
        raise JobContractError(spec, f"a {how} join runs in append mode only (Spark refuses {mode!r})")
    delays = [_side_delay(spec, child, defs) for child in (logical.left(), logical.right())]
    if how != "inner" and None in delays:
        raise JobContractError(
            spec,
            f"a {how} join with a watermark on one side only: neither side's state is ever evicted, so its "
            "unmatched rows are never emitted (watermark both sides)",
        )
    keys = _keys(spec, physical)
    counted = None
    if any(kind(n) == AGGREGATION for n in preorder(execution.executedPlan())):
        counted = _counted(spec, Counting(session, out, analyzed, logical, defs), keys, delays, how, mode)
    windowing = set() if counted is None else set(counted.pop("windowing"))
    if any(render(n.condition().toString(), defs) not in windowing for n in _filters(analyzed)):
        raise JobContractError(
            spec,
            "a filter before or after a stream-stream join is not supported: the suite joins every record",
        )
    lower, upper = _range(spec, session, job)
    return {
        "how": how,
        "keys": keys,
        "lower": lower,
        "upper": upper,
        "delays": delays,
        "output_mode": mode,
        "data_columns": [] if counted else _data_columns(spec, analyzed, logical, defs),
        "columns": list(out.columns),
        "counted": counted,
    }


def _filters(analyzed: Any) -> list:
    return [n for n in preorder(analyzed) if kind(n) == "Filter"]


@attrs.frozen
class Counting:
    """What `_counted` reads a count over the join from: the session, the job's output frame, its analyzed
    plan, the logical join and the plan's alias definitions."""

    session: Any
    out: Any
    analyzed: Any
    join: Any
    defs: dict


def _counted(
    spec: str, plan: Counting, keys: list[str], delays: list[int | None], how: str, mode: str
) -> dict:
    """A count per join key and window over the join: its window (`[duration, slide, start]` ms), the side
    whose raw `event_time` it windows, the join key it groups by (`_grouping`), its output columns
    (key, window, count) and the filters Spark's TimeWindowing rule writes (`windowing`); or the refusal
    naming why the suite cannot count it."""
    recorded = plan_metadata(plan.session, plan.out)
    [operator] = [op for op in recorded[Recorded.OPERATORS] if op[OperatorKey.NAME] == "stateStoreSave"]
    window = operator[OperatorKey.WINDOW]
    if window is None or operator[OperatorKey.AGGREGATES] != ["count(1)"]:
        raise JobContractError(
            spec,
            "an aggregation over a join: only count(*) grouped by a join key and a window of one side's "
            f"event_time is supported, not {operator[OperatorKey.AGGREGATES]} "
            f"{'over a window' if window else 'without a window'}",
        )
    if window[0] % window[1]:
        raise JobContractError(
            spec,
            "a sliding window over a join whose duration is not a multiple of its slide is not supported",
        )
    fields = operator[OperatorKey.KEY]
    if not any(RAW_EVENT_TIME in (f[FieldKey.LINEAGE] or "") for f in fields if is_window(f[FieldKey.TYPE])):
        raise JobContractError(
            spec,
            "a window over a column derived from event_time is not supported over a join: window a side's event_time",
        )
    side, key = _grouping(spec, plan, keys, how)
    if delays[0 if side == "left" else 1] is None:
        raise JobContractError(
            spec,
            f"the count windows the {side} side's event_time, which has no watermark: Spark emits no window",
        )
    if mode != OutputMode.APPEND:
        raise JobContractError(spec, f"a count over a join runs in append mode only here, not {mode!r}")
    return {
        "window": window,
        "side": side,
        "key": key,
        "columns": _counted_columns(spec, recorded[Recorded.OUTPUT], key),
        "windowing": sorted(windowing_filters(operator)),
    }


def _counted_columns(spec: str, output: list[dict], key: str) -> list[str]:
    """The output columns holding the count's key, window and count."""
    tests = (
        lambda f: f[FieldKey.LINEAGE] == key,
        lambda f: is_window(f[FieldKey.TYPE]),
        lambda f: f[FieldKey.LINEAGE] == "(count(1))",
    )
    columns = [next((f[FieldKey.NAME] for f in output if test(f)), None) for test in tests]
    if None in columns:
        raise JobContractError(
            spec,
            f"a count over a join must output its key, window and count, not {[f[FieldKey.NAME] for f in output]}",
        )
    return columns  # type: ignore[return-value]


def _grouping(spec: str, plan: Counting, keys: list[str], how: str) -> tuple[str, str]:
    """The side whose `event_time` the count's window reads and the join key it groups by (each grouping
    expression followed down through the aliases to the sides' sources): a column of either side under an
    inner join, where the keys are equal, of the windowed side under an outer one, where the other's is null
    on an unmatched row."""
    sources = {
        side: _source_columns(child)
        for side, child in (("left", plan.join.left()), ("right", plan.join.right()))
    }
    aggregate = next(n for n in preorder(plan.analyzed) if kind(n) == "Aggregate")
    read = [
        {
            (side, columns[i])
            for side, columns in sources.items()
            for i in _reached(e.toString(), plan.defs)
            if i in columns
        }
        for e in seq(aggregate.groupingExpressions())
    ]
    timed = [r for r in read if any(name == "event_time" for _, name in r)]
    grouped = [r for r in read if r not in timed]
    windowed = {side for r in timed for side, name in r if name == "event_time"}
    if len(timed) != 1 or len(windowed) != 1:
        raise JobContractError(spec, "an aggregation over a join must window one side's event_time")
    [side] = windowed
    sides = ("left", "right") if how == "inner" else (side,)
    if (
        len(grouped) != 1
        or len(grouped[0]) != 1
        or next(iter(grouped[0])) not in {(s, k) for s in sides for k in keys}
    ):
        named = sorted(f"{s}.{n}" for r in grouped for s, n in r)
        raise JobContractError(
            spec,
            f"a count over a join must group by one join key ({', '.join(keys)}) of {' or '.join(sides)}, not {named}",
        )
    return side, next(iter(grouped[0]))[1]


def _source_columns(child: Any) -> dict[int, str]:
    """The columns of the source under one side of the join: attribute id -> name."""
    relation = next(n for n in preorder(child) if kind(n) in ("StreamingRelationV2", "StreamingRelation"))
    return {a.exprId().id(): a.name() for a in seq(relation.output())}


def _reached(text: str, defs: dict, depth: int = 0) -> set[int]:
    """Every attribute id an expression's text reads, through the aliases that define them."""
    found = set()
    for match in _ATTRIBUTE.finditer(text):
        exprid = int(match.group(2))
        found.add(exprid)
        if exprid in defs and depth < 32:
            found |= _reached(defs[exprid], defs, depth + 1)
    return found


def _transformed(spec: str, session: Any, job: Any, watermarked: bool) -> Any:
    def load(side: str) -> Any:
        stream = session.readStream.format(NAME).option("path", "/nonexistent").option("side", side).load()
        return stream.withWatermark("event_time", "0 seconds") if watermarked else stream

    try:
        return joined(job, load)
    except Exception as exc:
        raise JobContractError(
            spec, f"transform(left, right) raised {type(exc).__name__}: {first_line(exc)}"
        ) from exc


def _the_join(spec: str, physical: list) -> Any:
    """The one join; besides it, at most one aggregation, above it (a count per window over the join)."""
    joins = [n for n in physical if kind(n) == JOIN]
    others = [n for n in physical if kind(n) in STATE_WRITERS and kind(n) != JOIN]
    above = len(joins) == 1 and len(others) == 1 and kind(others[0]) == AGGREGATION
    if len(joins) != 1 or (others and not (above and physical.index(others[0]) < physical.index(joins[0]))):
        found = ", ".join(
            [*(["a join"] * len(joins)), *(STATEFUL.get(o.shortName(), o.shortName()) for o in others)]
        )
        raise JobContractError(
            spec,
            "a join job holds one stream-stream join and no other stateful operator but an aggregation over "
            f"it, not {found or 'none'}",
        )
    return joins[0]


def _side_delay(spec: str, child: Any, defs: dict) -> int | None:
    """The delay of the `withWatermark` under one side of the join, None without one."""
    marks = [n for n in preorder(child) if kind(n) == "EventTimeWatermark"]
    if not marks:
        return None
    mark = marks[0]
    if len(marks) > 1 or render(mark.eventTime().toString(), defs) != "event_time":
        raise JobContractError(spec, "withWatermark must name the side's event_time column, once a side")
    below = {kind(n) for n in preorder(mark)[1:]} - UNDER_A_WATERMARK
    if below:
        raise JobContractError(
            spec, f"withWatermark over {', '.join(sorted(below))}: apply it to the side's records first"
        )
    return int(_delay_ms(mark))


def _keys(spec: str, join: Any) -> list[str]:
    pairs = [
        (left.toString(), right.toString())
        for left, right in zip(seq(join.leftKeys()), seq(join.rightKeys()))
    ]
    names = []
    for left, right in pairs:
        named = [m.group(1) if (m := _ATTRIBUTE.fullmatch(k)) else k for k in (left, right)]
        if named[0] != named[1] or named[0] not in RECORD_COLUMNS or named[0] == "event_time":
            raise JobContractError(
                spec,
                f"the join keys {left} = {right}: only a record column other than event_time, equal on both "
                "sides, is supported",
            )
        names.append(named[0])
    return names


def _range(spec: str, session: Any, job: Any) -> tuple[int | None, int | None]:
    """The condition's bounds as inclusive ms (`right + lower <= left <= right + upper`), by Spark's solving
    of it for each side's state watermark at E = `FAR` in a plan whose both sides carry a watermark."""
    execution = _transformed(spec, session, job, watermarked=True)._jdf.queryExecution()
    join = _the_join(spec, preorder(execution.queryExecutionForExplain().executedPlan()))
    condition = join.condition().full()
    if condition.isDefined():
        other = sorted({a.name() for a in seq(condition.get().references())} - {"event_time"})
        if other:
            raise JobContractError(
                spec,
                f"the join condition reads {', '.join(other)}: only the keys' equality and a range of "
                "event_time are supported",
            )
    helper = _static(session._jvm, HELPER)
    far = session._jvm.scala.Some(FAR)
    found = []
    for own, other_side in ((join.left(), join.right()), (join.right(), join.left())):
        mark = helper.getStateValueWatermark(own.outputSet(), other_side.outputSet(), condition, far)
        found.append(int(mark.get()) - FAR if mark.isDefined() else None)
    left, right = found
    return (None if left is None else left + 1, None if right is None else -right - 1)


def _static(jvm: Any, name: str) -> Any:
    for part in name.split("."):
        jvm = getattr(jvm, part)
    return jvm


def _data_columns(spec: str, analyzed: Any, join: Any, defs: dict) -> list[str]:
    """The output columns holding the left's and the right's `data`."""
    sources = [
        next(i for i, name in _source_columns(child).items() if name == "data")
        for child in (join.left(), join.right())
    ]
    found: list[list[str]] = [[], []]
    for attribute in seq(analyzed.output()):
        origin = _origin(attribute.exprId().id(), defs)
        for i, source in enumerate(sources):
            if origin == source:
                found[i].append(attribute.name())
    if any(len(names) != 1 for names in found):
        raise JobContractError(
            spec,
            "the join's output must keep each side's data column once (under any name): the suite names a "
            f"joined row by the records it joins; found left {found[0]}, right {found[1]}",
        )
    return [found[0][0], found[1][0]]


def _origin(exprid: int, defs: dict) -> int:
    """The attribute an output attribute passes on, aliases followed down."""
    seen = set()
    while exprid in defs and exprid not in seen:
        seen.add(exprid)
        match = _ATTRIBUTE.fullmatch(defs[exprid])
        if match is None:
            return exprid
        exprid = int(match.group(2))
    return exprid
