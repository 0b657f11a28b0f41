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
  event time, Spark's aggregation operator 0 and the join 1), the window, the side whose `event_time` the
  window reads (its grouping expression followed down to that side's source) and the output columns holding
  the key, the window and the count.

Refused (one line each): a Spark Connect session, an outer join in update mode (Spark refuses it; an inner
join emits the same rows in either mode), a job with another stateful operator than the one join but a count over it (another
aggregate or grouping, update mode, a count by an outer join's null side), a full outer or semi join, a key
that is not a record column (the same on both sides) or is `event_time`, a condition on another column than
`event_time` beyond the keys' equality, a filter before or after the join, an outer join without a watermark on both sides (neither side's
state is ever evicted, so its unmatched rows are never emitted: the model states it, the suite does not judge
it), a watermark on another column than `event_time` or over anything but the side's records, and an output
that drops a side's `data`.
"""

from __future__ import annotations

from typing import Any

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
    right), `output_mode`, `data_columns`, `columns`; or `JobContractError`."""
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
    counted = _counted(spec, session, out, analyzed, logical, defs) if _aggregated(execution) else None
    windowing = set() if counted is None else {counted.pop("windowing")}
    if any(render(n.condition().toString(), defs) not in windowing for n in _filters(analyzed)):
        raise JobContractError(
            spec,
            "a filter before or after a stream-stream join is not supported: the suite joins every record",
        )
    if how != "inner" and mode != OutputMode.APPEND:
        raise JobContractError(spec, f"a {how} join runs in append mode only (Spark refuses {mode!r})")
    delays = [_side_delay(spec, child, defs) for child in (logical.left(), logical.right())]
    if how != "inner" and None in delays:
        raise JobContractError(
            spec,
            f"a {how} join with a watermark on one side only: neither side's state is ever evicted, so its "
            "unmatched rows are never emitted (watermark both sides)",
        )
    lower, upper = _range(spec, session, job)
    if counted is not None and (
        mode != OutputMode.APPEND or how not in ("inner", TYPES[f"{counted['side'].title()}Outer"])
    ):
        raise JobContractError(
            spec,
            f"a count over the join ({how}) in {mode} mode is not supported: over an inner join, or an outer join counted "
            "by its outer side's event time, in append mode",
        )
    return {
        "how": how,
        "keys": _keys(spec, physical),
        "lower": lower,
        "upper": upper,
        "delays": delays,
        "output_mode": mode,
        "data_columns": [] if counted else _data_columns(spec, analyzed, logical, defs),
        "columns": list(out.columns),
        "counted": counted,
    }


def _aggregated(execution: Any) -> bool:
    return any(kind(n) == AGGREGATION for n in preorder(execution.executedPlan()))


def _filters(analyzed: Any) -> list:
    return [n for n in preorder(analyzed) if kind(n) == "Filter"]


def _counted(spec: str, session: Any, out: Any, analyzed: Any, join: Any, defs: dict) -> dict:
    """A count per key and window over the join: its window (`[duration, slide, start]` ms), the side whose
    event time it windows, its output columns (key, window, count) and the filter Spark's TimeWindowing rule
    writes (`windowing`); or the refusal naming why the suite cannot count it."""
    recorded = plan_metadata(session, out)
    [operator] = [op for op in recorded[Recorded.OPERATORS] if op[OperatorKey.NAME] == "stateStoreSave"]
    fields = operator[OperatorKey.KEY]
    grouped = sorted(f[FieldKey.LINEAGE] for f in fields if not is_window(f[FieldKey.TYPE]))
    if (
        operator[OperatorKey.WINDOW] is None
        or operator[OperatorKey.AGGREGATES] != ["count(1)"]
        or grouped != ["key"]
    ):
        raise JobContractError(
            spec,
            "an aggregation over a join: only count(*) grouped by the join's key and a window of one side's "
            f"event_time is supported, not {operator[OperatorKey.AGGREGATES]} by {grouped} and "
            f"{'a window' if operator[OperatorKey.WINDOW] else 'no window'}",
        )
    output = recorded[Recorded.OUTPUT]
    columns = [
        next((f[FieldKey.NAME] for f in output if test(f)), None)
        for test in (
            lambda f: f[FieldKey.LINEAGE] == "key",
            lambda f: is_window(f[FieldKey.TYPE]),
            lambda f: f[FieldKey.LINEAGE] == "(count(1))",
        )
    ]
    if None in columns:
        raise JobContractError(
            spec,
            f"a count over a join must output its key, window and count, not {[f[FieldKey.NAME] for f in output]}",
        )
    [windowing] = windowing_filters(operator) or [""]
    return {
        "window": operator[OperatorKey.WINDOW],
        "side": _windowed_side(spec, analyzed, join, defs),
        "columns": columns,
        "windowing": windowing,
    }


def _windowed_side(spec: str, analyzed: Any, join: Any, defs: dict) -> str:
    """The side of the join whose `event_time` the aggregation's window reads (aliases followed down)."""
    times = []
    for child in (join.left(), join.right()):
        relation = next(n for n in preorder(child) if kind(n) in ("StreamingRelationV2", "StreamingRelation"))
        times.append(next(a.exprId().id() for a in seq(relation.output()) if a.name() == "event_time"))
    aggregate = next(n for n in preorder(analyzed) if kind(n) == "Aggregate")
    reached = {i for e in seq(aggregate.groupingExpressions()) for i in _reached(e.toString(), defs)}
    sides = [side for side, t in zip(("left", "right"), times) if t in reached]
    if len(sides) != 1:
        raise JobContractError(spec, "an aggregation over a join must window one side's event_time")
    return sides[0]


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
    sources = []
    for child in (join.left(), join.right()):
        relation = next(n for n in preorder(child) if kind(n) in ("StreamingRelationV2", "StreamingRelation"))
        sources.append(next(a.exprId().id() for a in seq(relation.output()) if a.name() == "data"))
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
