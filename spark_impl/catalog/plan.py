"""View plans evaluated on Spark DataFrames, a whole batch of different plans in one job.

Plans arrive as the plain JSON records of `frontier_harness.model.vocabulary.catalog`
(`get`, `filter`, `project`, `union`, `join`, `temporal`), plus two nodes the
coordinator adds when it inlines a materialized view (`frontier_harness.spark_impl.catalog.expiration`):
`refresh{input, refresh}` moves each update to the schedule's next refresh at or
after its time (dropping it when none is left) and `persisted{input}` evaluates its
input without the reader's `until` (an MV's output is its own). Every history has its
own plan, so a plan travels as data: `program` lists its nodes in post-order
(children first, the root last), each naming its inputs by position. One row per
query holds its program; it meets its history's rows (one row per history, a
broadcast join) and `aggregate` runs the program node by node, the accumulator
holding every node's output updates. So a batch is one projection whatever its
plans' depths and shapes, then one grouping consolidates every query's output
and counts its diffs: one Spark job per batch, one `toArrow()`.

Updates are `struct<data, time, diff>`: `data` an `array<long>` row, time Total.
Join is bilinear (times join with `greatest`, diffs multiply); a temporal filter
yields `+d` at `max(t, lower)` and `-d` at `upper_exclusive` when that is later,
nothing when the interval is empty, and drops every diff at or after `until`.
Only built-in functions: no UDFs, no model algorithms.

The catalog half (`observe_timelines`) plans on the driver like a coordinator:
it resolves timelines from the creation statements, rejects multi-timeline
dataflows naming every input, and inlines views, MVs and indexes into one plan
over the leaves, which Spark then evaluates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from frontier_harness.model.catalog.timeline import Counter, EpochMilliseconds, External, User  # value types
from frontier_harness.model.vocabulary import ActionLike, Arg, HistoryLike
from frontier_harness.model.vocabulary.catalog import (
    CHILD_FIELDS,
    DATAFLOW_ACTIONS,
    LEAF_ACTIONS,
    CatalogAction,
    CatalogArg,
    Comparison,
    InlinedNode,
    PlanField,
    PlanNode,
    RefreshField,
    SourceKind,
    TemporalLabel,
    TemporalOp,
    TimelinesLabel,
    per_dataflow,
)
from frontier_harness.spark_impl.arrow import columns_of, to_frame
from frontier_harness.spark_impl.column_cache import per_session

ROW = pa.list_(pa.int64())
OPS = tuple(Comparison)

# ---------------------------------------------------------------- column operators


def upper_exclusive(op: Column, bound: Column) -> Column:
    """The first time an upper-bound predicate fails: `bound + 1` for `<=`, `bound` for `<`."""
    return F.when(op == TemporalOp.LE, bound + 1).otherwise(bound)


def compare(op: Column, a: Column, b: Column) -> Column:
    """`a op b` for an operator held in a column."""
    result = F.lit(False)
    for name, holds in (
        (Comparison.EQ, a == b),
        (Comparison.NE, a != b),
        (Comparison.LT, a < b),
        (Comparison.LE, a <= b),
        (Comparison.GT, a > b),
        (Comparison.GE, a >= b),
    ):
        result = F.when(op == name, holds).otherwise(result)
    return result


def column(data: Column, index: Column) -> Column:
    """`data[index]` (0-based), null when out of range."""
    return F.get(data, index)


def temporal_events(data: Column, time: Column, diff: Column, predicates: Column, until: Column) -> Column:
    """`array<struct<time, diff>>`: `+diff` at the validity start, `-diff` at its end; empty: nothing.

    `predicates` is an `array<struct<op, col, off>>` (`op` in `>=`, `<=`, `<`; the bound is
    `data[col] + off`); events at or after `until` (null: none) are dropped.
    """
    bound = lambda p: column(data, p["col"]) + p["off"]  # noqa: E731
    start = F.aggregate(
        predicates,
        time,
        lambda acc, p: F.when(p["op"] == TemporalOp.GE, F.greatest(acc, bound(p))).otherwise(acc),
    )
    end = F.aggregate(
        predicates,
        F.lit(None).cast("long"),
        lambda acc, p: F.when(
            p["op"] != TemporalOp.GE, F.least(acc, upper_exclusive(p["op"], bound(p)))
        ).otherwise(acc),
    )
    events = F.array(
        F.struct(start.alias("time"), diff.alias("diff")), F.struct(end.alias("time"), (-diff).alias("diff"))
    )
    nonempty = end.isNull() | (end > start)
    return F.filter(
        events, lambda e: nonempty & e["time"].isNotNull() & (until.isNull() | (e["time"] < until))
    )


def next_refresh(clauses: Column, time: Column) -> Column:
    """The first refresh of any clause at or after `time` (null when none is left).

    A clause is `every` (with `aligned_to`: `time + (aligned_to - time) mod every`) or `at` (itself if
    not past).
    """

    def refresh(c: Column) -> Column:
        every, aligned_to, at = c[RefreshField.EVERY], c[RefreshField.ALIGNED_TO], c[RefreshField.AT]
        return F.when(every.isNotNull(), time + F.pmod(aligned_to - time, every)).when(at >= time, at)

    return F.aggregate(clauses, F.lit(None).cast("long"), lambda acc, c: F.least(acc, refresh(c)))


# ---------------------------------------------------------------- plans as programs

ROW_STRUCT = pa.struct([("data", ROW), ("time", pa.int64()), ("diff", pa.int64())])
INPUT_ROW = pa.struct(
    [("name", pa.string()), ("step", pa.int64()), ("data", ROW), ("time", pa.int64()), ("diff", pa.int64())]
)
FILTER_PRED = pa.struct([("col", pa.int64()), ("op", pa.string()), ("val", pa.int64())])
TEMPORAL_PRED = pa.struct([("op", pa.string()), ("col", pa.int64()), ("off", pa.int64())])
ON_PAIR = pa.struct([("l", pa.int64()), ("r", pa.int64())])
REFRESH_CLAUSE = pa.struct([(str(f), pa.int64()) for f in RefreshField])  # a clause dict converts by its keys
NODE = pa.struct(
    [
        ("kind", pa.string()),
        ("name", pa.string()),
        ("ins", pa.list_(pa.int32())),
        ("fpreds", pa.list_(FILTER_PRED)),
        ("cols", pa.list_(pa.int64())),
        ("on", pa.list_(ON_PAIR)),
        ("tpreds", pa.list_(TEMPORAL_PRED)),
        ("schedule", pa.list_(REFRESH_CLAUSE)),
        ("until", pa.int64()),
    ]
)
OUTPUTS = "array<array<struct<data:array<bigint>,time:bigint,diff:bigint>>>"


@attrs.frozen
class Query:
    """Evaluate `plan` over the rows of `history_id` inserted before `step`, with `until` (None: none)."""

    key: int
    history_id: int
    step: int
    plan: dict
    until: int | None = None


class Programs:
    """Plans as programs, held as Arrow columns: each plan's nodes in post-order, one list per plan.

    Children come first and the root last; a node names its inputs by their position in
    its plan's list. `persisted{input}` is no node: its input is read without `until`.

    >>> programs = Programs()
    >>> programs.add({"node": "filter", "input": {"node": "get", "name": "t"}, "predicates": [[0, ">", 1]]})
    >>> [(n["kind"], n["ins"]) for n in programs.array().to_pylist()[0]]
    [('get', []), ('filter', [0])]
    """

    def __init__(self) -> None:
        self.columns: dict[str, list] = {name: [] for name in NODE.names}
        self.offsets = [0]

    def add(self, plan: dict, until: int | None = None) -> None:
        self._visit(plan, until, self.offsets[-1])
        self.offsets.append(len(self.columns["kind"]))

    def array(self) -> pa.ListArray:
        nodes = pa.StructArray.from_arrays(
            [pa.array(self.columns[f.name], f.type) for f in NODE], fields=list(NODE)
        )
        return pa.ListArray.from_arrays(pa.array(self.offsets, pa.int32()), nodes)

    def _visit(self, plan: dict, until: int | None, base: int) -> int:
        kind = plan[PlanField.NODE]
        if kind == InlinedNode.PERSISTED:
            return self._visit(plan[PlanField.INPUT], None, base)
        if kind == PlanNode.GET:
            ins: list | tuple = ()
        elif kind == PlanNode.UNION:
            ins = [self._visit(p, until, base) for p in plan[PlanField.INPUTS]]
        elif kind == PlanNode.JOIN:
            ins = (
                self._visit(plan[PlanField.LEFT], until, base),
                self._visit(plan[PlanField.RIGHT], until, base),
            )
        else:
            ins = (self._visit(plan[PlanField.INPUT], until, base),)
        c = self.columns
        c["kind"].append(kind)
        c["name"].append(plan.get(PlanField.NAME))
        c["ins"].append(ins)
        preds = [tuple(p) for p in plan[PlanField.PREDICATES]] if PlanField.PREDICATES in plan else ()
        c["fpreds"].append(preds if kind == PlanNode.FILTER else ())
        c["cols"].append(plan.get(PlanField.COLUMNS, ()))
        c["on"].append([tuple(p) for p in plan[PlanField.ON]] if kind == PlanNode.JOIN else ())
        c["tpreds"].append(preds if kind == PlanNode.TEMPORAL else ())
        c["schedule"].append(plan[PlanField.REFRESH] if kind == InlinedNode.REFRESH else ())
        c["until"].append(until)
        return len(c["kind"]) - 1 - base


def rows_table(rows: Sequence[tuple]) -> pa.Table:
    """Input rows `(history_id, step, name, data, time, diff)` as an Arrow table, one row per history."""
    rows = sorted(rows, key=lambda r: r[0])  # stable: a history's rows keep their order
    hids: list[Any] = []
    offsets: list[int] = []
    for i, r in enumerate(rows):
        if not hids or r[0] != hids[-1]:
            hids.append(r[0])
            offsets.append(i)
    offsets.append(len(rows))
    columns = list(zip(*rows)) or [()] * 6
    items = pa.StructArray.from_arrays(
        [pa.array(columns[i], f.type) for i, f in zip((2, 1, 3, 4, 5), INPUT_ROW)], fields=list(INPUT_ROW)
    )
    return pa.table(
        {
            "history_id": pa.array(hids, pa.int64()),
            "rows": pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items),
        }
    )


def queries_table(queries: Sequence[Query]) -> pa.Table:
    """One row per query: its key, history, step and program."""
    programs = Programs()
    for q in queries:
        programs.add(q.plan, q.until)
    return pa.table(
        {
            "key": pa.array([q.key for q in queries], pa.int64()),
            "history_id": pa.array([q.history_id for q in queries], pa.int64()),
            "qstep": pa.array([q.step for q in queries], pa.int64()),
            "program": programs.array(),
        }
    )


def outputs(rows: pa.Table, queries: Sequence[Query]) -> DataFrame | None:
    """Per query `(key, out)`: `out` its output updates, not consolidated; every query in one projection.

    Each query row meets its history's rows (a broadcast join) and runs its program
    with `aggregate`: the accumulator holds each node's output, node `i` at position `i`.
    """
    if not queries:
        return None
    inputs = to_frame(rows)
    frame = to_frame(queries_table(queries)).join(F.broadcast(inputs), "history_id", "left")
    return frame.select("key", program_output(inputs.schema["rows"].dataType.simpleString()))


@per_session
def program_output(rows_type: str) -> Column:
    """`out`: each query row's `program` run over its history's `rows` (of Spark type `rows_type`), the
    last node's output; built once per session."""
    rows_col = F.coalesce(F.col("rows"), F.array().cast(rows_type))
    zero = F.array().cast(OUTPUTS)
    results = F.aggregate(
        "program", zero, lambda acc, n: F.concat(acc, F.array(node_output(acc, n, rows_col, F.col("qstep"))))
    )
    return F.element_at(results, -1).alias("out")


def evaluate_queries(rows: pa.Table, queries: Sequence[Query]) -> DataFrame | None:
    """Every query's output updates `(key, data, time, diff)`, not consolidated."""
    frame = outputs(rows, queries)
    if frame is None:
        return None
    return frame.select("key", F.explode("out").alias("u")).select("key", "u.data", "u.time", "u.diff")


def _row(data: Column, time: Column, diff: Column) -> Column:
    return F.struct(data.alias("data"), time.alias("time"), diff.alias("diff"))


def node_output(acc: Column, n: Column, rows: Column, qstep: Column) -> Column:
    """Node `n`'s output updates, its inputs read from `acc` (the outputs of the nodes before it).

    `get` reads its history's rows of its name inserted before the query; `filter` keeps rows whose
    predicates hold; `project` picks columns; `union` concatenates; `join` crosses left and right rows
    with equal keys (times join with `greatest`, diffs multiply); `temporal` gives each row's two
    events; `refresh` moves each update to its next refresh, dropping it when none is left.
    """
    kind, first, second = n["kind"], F.get(acc, F.get(n["ins"], 0)), F.get(acc, F.get(n["ins"], 1))
    get = F.transform(
        F.filter(rows, lambda r: (r["name"] == n["name"]) & (r["step"] < qstep)),
        lambda r: _row(r["data"], r["time"], r["diff"]),
    )
    keep = F.filter(
        first,
        lambda r: F.forall(n["fpreds"], lambda p: compare(p["op"], column(r["data"], p["col"]), p["val"])),
    )
    project = F.transform(
        first, lambda r: _row(F.transform(n["cols"], lambda c: column(r["data"], c)), r["time"], r["diff"])
    )
    union = F.flatten(F.transform(n["ins"], lambda i: F.get(acc, i)))
    join = F.flatten(
        F.transform(
            first,
            lambda left: F.transform(
                F.filter(
                    second,
                    lambda right: F.forall(
                        n["on"], lambda p: column(left["data"], p["l"]) == column(right["data"], p["r"])
                    ),
                ),
                lambda right: _row(
                    F.concat(left["data"], right["data"]),
                    F.greatest(left["time"], right["time"]),
                    left["diff"] * right["diff"],
                ),
            ),
        )
    )
    temporal = F.flatten(
        F.transform(
            first,
            lambda r: F.transform(
                temporal_events(r["data"], r["time"], r["diff"], n["tpreds"], n["until"]),
                lambda e: _row(r["data"], e["time"], e["diff"]),
            ),
        )
    )
    refresh = F.filter(
        F.transform(first, lambda r: _row(r["data"], next_refresh(n["schedule"], r["time"]), r["diff"])),
        lambda r: r["time"].isNotNull(),
    )
    return (
        F.when(kind == PlanNode.GET, get)
        .when(kind == PlanNode.FILTER, keep)
        .when(kind == PlanNode.PROJECT, project)
        .when(kind == PlanNode.UNION, union)
        .when(kind == PlanNode.JOIN, join)
        .when(kind == PlanNode.TEMPORAL, temporal)
        .otherwise(refresh)
    )


def consolidated_with_counts(frame: DataFrame) -> DataFrame:
    """Per key: the consolidated updates (`n` null) and one row with the number of diffs processed (`n`)."""
    nothing = F.lit(None)
    counted = F.concat(
        F.transform(
            "out", lambda u: F.struct(u["data"], u["time"], u["diff"], nothing.cast("long").alias("n"))
        ),
        F.array(
            F.struct(
                nothing.cast("array<bigint>").alias("data"),
                nothing.cast("long").alias("time"),
                nothing.cast("long").alias("diff"),
                F.size("out").cast("long").alias("n"),
            )
        ),
    )
    return (
        frame.select("key", F.explode(counted).alias("u"))
        .select("key", "u.*")
        .groupBy("key", "data", "time")
        .agg(F.sum("diff").alias("diff"), F.max("n").alias("n"))
        .where((F.col("diff") != 0) | F.col("n").isNotNull())
    )


def _read(frame: DataFrame | None) -> dict[int, tuple[set, int]]:
    """`{key: (set of (data, time, diff), diffs processed)}` from `consolidated_with_counts`."""
    if frame is None:
        return {}
    table = consolidated_with_counts(frame).toArrow()
    out: dict[int, tuple[set, int]] = {}
    cols = columns_of(table)
    for key, data, time, diff, n in zip(cols["key"], cols["data"], cols["time"], cols["diff"], cols["n"]):
        rows, count = out.get(key, (set(), 0))
        if n is None:
            rows.add((tuple(data), time, diff))
        else:
            count = n
        out[key] = (rows, count)
    return out


# ---------------------------------------------------------------- the temporal suite


def observe_temporal(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Per `query` step: its consolidated output and the number of diffs it processed (temporal suite)."""
    rows: list[tuple] = []
    queries: list[Query] = []
    keys: list[tuple[int, int]] = []
    for hid, history in enumerate(histories):
        for step, action in enumerate(history.actions):
            a = action.args
            if action.name == CatalogAction.INSERT:
                rows.append(
                    (hid, step, a[CatalogArg.TABLE], list(a[CatalogArg.ROW]), a[Arg.TIME], a[Arg.DIFF])
                )
            elif action.name == CatalogAction.QUERY:
                until = a.get(Arg.UNTIL) or ()
                queries.append(
                    Query(len(queries), hid, step, a[CatalogArg.PLAN], until[0] if until else None)
                )
                keys.append((hid, step))
    results = _read(outputs(rows_table(rows), queries))
    observed: list[dict] = [{} for _ in histories]
    for q, (hid, step) in zip(queries, keys):
        updates, count = results.get(q.key, (set(), 0))
        observed[hid][(step, TemporalLabel.OUTPUT)] = frozenset(updates)
        observed[hid][(step, TemporalLabel.DIFFS)] = frozenset({(count,)})
    return observed


# ---------------------------------------------------------------- the timelines suite


def leaf_timeline(action: ActionLike) -> Any:
    """The timeline a leaf's creation statement gives it (None for constants)."""
    a = action.args
    if action.name == CatalogAction.CREATE_TABLE:
        return EpochMilliseconds()
    if action.name != CatalogAction.CREATE_SOURCE:
        return None
    if a.get(CatalogArg.TIMELINE) is not None:
        return User(a[CatalogArg.TIMELINE])
    if a[CatalogArg.KIND] == SourceKind.CDC and not a.get(CatalogArg.EPOCH_MS_TIMELINE):
        return External(a[CatalogArg.NAME])
    if a.get(CatalogArg.CONSISTENCY_TOPIC) is not None:
        return Counter(*a[CatalogArg.CONSISTENCY_TOPIC])
    return EpochMilliseconds()


def get_plan(name: str) -> dict:
    """The plan that reads `name`: `get{name}`."""
    return {PlanField.NODE: PlanNode.GET, PlanField.NAME: name}


def _children(plan: dict) -> list[dict]:
    """A plan's child plans: a union's `inputs`, then `input`, `left`, `right`."""
    return list(plan.get(PlanField.INPUTS, [])) + [plan[k] for k in CHILD_FIELDS if k in plan]


def inline(plan: dict, defined: dict) -> dict:
    """The plan with every view/MV replaced by its (inlined) body, so it reads leaves only."""
    node = plan[PlanField.NODE]
    if node == PlanNode.GET:
        return defined.get(plan[PlanField.NAME], plan)
    children: dict[str, Any] = {k: inline(v, defined) for k, v in plan.items() if k in CHILD_FIELDS}
    if node == PlanNode.UNION:
        children[PlanField.INPUTS] = [inline(p, defined) for p in plan[PlanField.INPUTS]]
    return {**plan, **children}


def reads(plan: dict) -> set[str]:
    """The names a plan reads."""
    if plan[PlanField.NODE] == PlanNode.GET:
        return {plan[PlanField.NAME]}
    return set().union(*(reads(p) for p in _children(plan)))


def plan_catalog(history: HistoryLike) -> tuple[dict, dict, list]:
    """Driver-side planning: `(rejected {step: {(name, timeline)}}, accepted {step: (name, plan)}, rows)`."""
    timelines: dict[str, Any] = {}
    defined: dict[str, dict] = {}
    rejected: dict[int, set[tuple[str, str]]] = {}
    accepted: dict[int, tuple[str, dict]] = {}
    rows: list[tuple[str, list]] = []
    for step, action in enumerate(history.actions):
        a = action.args
        if action.name in LEAF_ACTIONS:
            timelines[a[CatalogArg.NAME]] = leaf_timeline(action)
            rows += [(a[CatalogArg.NAME], list(r)) for r in a.get(CatalogArg.ROWS, ())]
            continue
        if action.name not in DATAFLOW_ACTIONS:
            continue
        plan = get_plan(a[CatalogArg.ON]) if action.name == CatalogAction.CREATE_INDEX else a[CatalogArg.PLAN]
        body = inline(plan, defined)
        named = {(n, repr(timelines[n])) for n in reads(body) if timelines[n] is not None}
        if len({t for _, t in named}) > 1:
            rejected[step] = named
            continue
        accepted[step] = (a[CatalogArg.NAME], body)
        if action.name in (CatalogAction.CREATE_VIEW, CatalogAction.CREATE_MV):
            defined[a[CatalogArg.NAME]] = body
    return rejected, accepted, rows


def observe_timelines(domain: object, histories: Sequence[HistoryLike]) -> list[dict]:
    """Per dataflow creation: rejected (naming every input and its timeline) or created; each one's output."""
    rows: list[tuple] = []
    queries: list[Query] = []
    observed: list[dict] = []
    names: list[tuple[int, int, str]] = []
    for hid, history in enumerate(histories):
        rejected, accepted, constants = plan_catalog(history)
        obs = {(step, TimelinesLabel.REJECTED): frozenset(named) for step, named in rejected.items()}
        obs.update(
            {(step, TimelinesLabel.CREATED): frozenset({(name,)}) for step, (name, _) in accepted.items()}
        )
        observed.append(obs)
        rows += [(hid, 0, name, row, 0, 1) for name, row in constants]
        rows += [
            (
                hid,
                0,
                a.args[CatalogArg.TABLE],
                list(a.args[CatalogArg.ROW]),
                a.args[Arg.TIME],
                a.args[Arg.DIFF],
            )
            for a in history.actions
            if a.name == CatalogAction.INSERT
        ]
        for name, body in accepted.values():
            queries.append(Query(len(queries), hid, 1, body))
            names.append((hid, len(history.actions), name))
    results = _read(outputs(rows_table(rows), queries))
    for q, (hid, end, name) in zip(queries, names):
        observed[hid][(end, per_dataflow(TimelinesLabel.OUTPUT, name))] = frozenset(
            results.get(q.key, (set(), 0))[0]
        )
    return observed
