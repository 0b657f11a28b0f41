"""View plans evaluated on Spark DataFrames, a whole batch of different plans in one job.

Plans arrive as the plain JSON records of `properties.catalog_actions`
(`get`, `filter`, `project`, `union`, `join`, `temporal`), plus two nodes the
coordinator adds when it inlines a materialized view (`spark_impl.expiration`):
`refresh{input, refresh}` moves each update to the schedule's next refresh at or
after its time (dropping it when none is left) and `persisted{input}` evaluates its
input without the reader's `until` (an MV's output is its own). Every history has its
own plan, so plans are grouped by *shape*: `lift` moves each plan's parameters
(names, columns, operators, constants) into slots `p0, p1, ...` of a per-query
parameter row, leaving a tree of node kinds with slot numbers. Each shape becomes
one DataFrame pipeline reading its slots as columns; the pipelines are unioned
and read back with one `toArrow()`.

Frames are `(key, P, data, time, diff)`: `key` identifies the query, `P` is the
struct of its parameters (and `until`), `data` an `array<long>` row, time Total.
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

from model.timeline import Counter, EpochMilliseconds, External, User  # value types
from spark_impl.arrow import to_frame

ROW = pa.list_(pa.int64())
OPS = ("==", "!=", "<", "<=", ">", ">=")

# ---------------------------------------------------------------- column operators


def upper_exclusive(op: Column, bound: Column) -> Column:
    """The first time an upper-bound predicate fails: `bound + 1` for `<=`, `bound` for `<`."""
    return F.when(op == "<=", bound + 1).otherwise(bound)


def compare(op: Column, a: Column, b: Column) -> Column:
    """`a op b` for an operator held in a column."""
    result = F.lit(False)
    for name, holds in (
        ("==", a == b),
        ("!=", a != b),
        ("<", a < b),
        ("<=", a <= b),
        (">", a > b),
        (">=", a >= b),
    ):
        result = F.when(op == name, holds).otherwise(result)
    return result


def column(data: Column, index: Column) -> Column:
    """`data[index]` (0-based), null when out of range."""
    return F.get(data, index)


def temporal_events(data: Column, time: Column, diff: Column, predicates: Column, until: Column) -> Column:
    """`array<struct<time, diff>>`: `+diff` at the validity start, `-diff` at its end; empty interval: nothing.

    `predicates` is an `array<struct<op, col, off>>` (`op` in `>=`, `<=`, `<`; the bound is `data[col] + off`);
    events at or after `until` (null: none) are dropped.
    """
    bound = lambda p: column(data, p["col"]) + p["off"]  # noqa: E731
    start = F.aggregate(
        predicates, time, lambda acc, p: F.when(p["op"] == ">=", F.greatest(acc, bound(p))).otherwise(acc)
    )
    end = F.aggregate(
        predicates,
        F.lit(None).cast("long"),
        lambda acc, p: F.when(p["op"] != ">=", F.least(acc, upper_exclusive(p["op"], bound(p)))).otherwise(
            acc
        ),
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

    A clause is `every` (with `aligned_to`: `time + (aligned_to - time) mod every`) or `at` (itself if not past).
    """

    def refresh(c: Column) -> Column:
        return F.when(c["every"].isNotNull(), time + F.pmod(c["aligned_to"] - time, c["every"])).when(
            c["at"] >= time, c["at"]
        )

    return F.aggregate(clauses, F.lit(None).cast("long"), lambda acc, c: F.least(acc, refresh(c)))


# ---------------------------------------------------------------- plans as node tables

FILTER_PRED = pa.struct([("col", pa.int64()), ("op", pa.string()), ("val", pa.int64())])
TEMPORAL_PRED = pa.struct([("op", pa.string()), ("col", pa.int64()), ("off", pa.int64())])
ON_PAIR = pa.struct([("l", pa.int64()), ("r", pa.int64())])
REFRESH_CLAUSE = pa.struct([("every", pa.int64()), ("aligned_to", pa.int64()), ("at", pa.int64())])
EDGE_TYPES = {
    "key": pa.int64(),
    "child": pa.int64(),
    "parent": pa.int64(),
    "role": pa.string(),
    "level": pa.int64(),
    "kind": pa.string(),
    "fpreds": pa.list_(FILTER_PRED),
    "cols": pa.list_(pa.int64()),
    "on": pa.list_(ON_PAIR),
    "tpreds": pa.list_(TEMPORAL_PRED),
    "refresh": pa.list_(REFRESH_CLAUSE),
    "until": pa.int64(),
}
GET_TYPES = {
    "key": pa.int64(),
    "history_id": pa.int64(),
    "qstep": pa.int64(),
    "node": pa.int64(),
    "name": pa.string(),
}


@attrs.frozen
class Query:
    """Evaluate `plan` over the rows of `history_id` inserted before `step`, with `until` (None: none)."""

    key: int
    history_id: int
    step: int
    plan: dict
    until: int | None = None


class NodeTables:
    """Plans flattened into `gets` (leaves, level 0) and `edges` (child -> parent, parent's level and parameters).

    Levels are padded with `pass` nodes so every child sits exactly one level below its
    parent, and every root at the batch's top level: level `i` is computed from level `i-1` only.
    """

    def __init__(self) -> None:
        self.gets: list[dict] = []
        self.edges: list[dict] = []
        self.roots: list[tuple[Query, int, int]] = []
        self.next_id = 0

    def add(self, q: Query) -> None:
        node, level = self._visit(q, q.plan, q.until)
        self.roots.append((q, node, level))

    def top(self) -> int:
        return max((level for _, _, level in self.roots), default=0)

    def finish(self) -> None:
        """Pads every root to the top level."""
        top = self.top()
        self.roots = [(q, self._pad(q, node, level, top), top) for q, node, level in self.roots]

    def _new(self) -> int:
        self.next_id += 1
        return self.next_id

    def _visit(self, q: Query, plan: dict, until: int | None) -> tuple[int, int]:
        kind = plan["node"]
        if kind == "persisted":
            return self._visit(q, plan["input"], None)
        if kind == "get":
            node = self._new()
            self.gets.append(
                {
                    "key": q.key,
                    "history_id": q.history_id,
                    "qstep": q.step,
                    "node": node,
                    "name": plan["name"],
                }
            )
            return node, 0
        if kind == "union":
            children = [(p, "L") for p in plan["inputs"]]
        elif kind == "join":
            children = [(plan["left"], "L"), (plan["right"], "R")]
        else:
            children = [(plan["input"], "L")]
        visited = [(self._visit(q, p, until), role) for p, role in children]
        level = max(lv for (_, lv), _ in visited) + 1
        node = self._new()
        for (child, lv), role in visited:
            self._edge(q, self._pad(q, child, lv, level - 1), node, role, level, plan, until)
        return node, level

    def _pad(self, q: Query, node: int, level: int, to: int) -> int:
        while level < to:
            parent = self._new()
            level += 1
            self._edge(q, node, parent, "L", level, {"node": "pass"}, None)
            node = parent
        return node

    def _edge(
        self, q: Query, child: int, parent: int, role: str, level: int, plan: dict, until: int | None
    ) -> None:
        kind = plan["node"]
        self.edges.append(
            {
                "key": q.key,
                "child": child,
                "parent": parent,
                "role": role,
                "level": level,
                "kind": kind,
                "fpreds": [{"col": c, "op": op, "val": v} for c, op, v in plan["predicates"]]
                if kind == "filter"
                else [],
                "cols": list(plan["columns"]) if kind == "project" else [],
                "on": [{"l": a, "r": b} for a, b in plan["on"]] if kind == "join" else [],
                "tpreds": [{"op": op, "col": c, "off": o} for op, c, o in plan["predicates"]]
                if kind == "temporal"
                else [],
                "refresh": [
                    {"every": c.get("every"), "aligned_to": c.get("aligned_to"), "at": c.get("at")}
                    for c in plan.get("refresh") or ()
                ]
                if kind == "refresh"
                else [],
                "until": until,
            }
        )


def _table(records: list[dict], types: dict) -> pa.Table:
    return pa.table({name: pa.array([r[name] for r in records], type=t) for name, t in types.items()})


def rows_table(rows: Sequence[tuple]) -> pa.Table:
    """Input rows `(history_id, step, name, data, time, diff)` as an Arrow table."""
    names = ("history_id", "step", "name", "data", "time", "diff")
    types = (pa.int64(), pa.int64(), pa.string(), ROW, pa.int64(), pa.int64())
    return pa.table({n: pa.array([r[i] for r in rows], type=t) for i, (n, t) in enumerate(zip(names, types))})


def evaluate_queries(rows: pa.Table, queries: Sequence[Query]) -> DataFrame | None:
    """Every query's output updates `(key, data, time, diff)`, not consolidated, in one pipeline of `top` levels."""
    if not queries:
        return None
    tables = NodeTables()
    for q in queries:
        tables.add(q)
    tables.finish()
    inputs, gets = to_frame(rows), to_frame(_table(tables.gets, GET_TYPES))
    edges = to_frame(_table(tables.edges, EDGE_TYPES)) if tables.edges else None
    level = (
        inputs.join(gets, on=["history_id", "name"])
        .where(F.col("step") < F.col("qstep"))
        .select("key", "node", "data", "time", "diff")
    )
    columns = level_columns()
    for i in range(1, tables.top() + 1):
        level = evaluate_level(
            level, edges.where(F.col("level") == i).withColumnRenamed("child", "node"), columns
        )
    return level.select("key", "data", "time", "diff")


def level_columns() -> dict[str, Column]:
    """The column expressions every level applies (built once per job: each costs a round trip to the JVM).

    `jk`: a join parent's key of a row; `pairs`: a group's left rows crossed with its right rows (with one unit
    row for other parents: times join, diffs multiply); `keep`: a filter's predicates; `data`: a projection;
    `events`: the `(time, diff)` a row becomes (a temporal filter's two events, a refresh's move, or itself).
    """
    kind, data, time = F.col("kind"), F.col("data"), F.col("time")
    is_join = kind == "join"
    side = F.when(F.col("role") == "L", F.col("on")["l"]).otherwise(F.col("on")["r"])
    unit = F.array(
        F.struct(
            F.array().cast("array<bigint>").alias("data"),
            F.lit(None).cast("long").alias("time"),
            F.lit(1).cast("long").alias("diff"),
        )
    )
    rs = F.when(is_join, F.col("rs")).otherwise(unit)
    refreshed = F.when(kind == "refresh", next_refresh(F.col("refresh"), time)).otherwise(time)
    return {
        "is_join": is_join,
        "jk": F.when(is_join, F.transform(side, lambda c: column(data, c))),
        "pairs": F.flatten(
            F.transform(
                "ls",
                lambda left: F.transform(
                    rs,
                    lambda r: F.struct(
                        F.concat(left["data"], r["data"]).alias("data"),
                        F.greatest(left["time"], r["time"]).alias("time"),
                        (left["diff"] * r["diff"]).alias("diff"),
                    ),
                ),
            )
        ),
        "keep": (kind != "filter")
        | F.forall("fpreds", lambda p: compare(p["op"], column(data, p["col"]), p["val"])),
        "data": F.when(kind == "project", F.transform("cols", lambda c: column(data, c))).otherwise(data),
        "events": F.when(
            kind == "temporal", temporal_events(data, time, F.col("diff"), F.col("tpreds"), F.col("until"))
        ).otherwise(
            F.filter(F.array(F.struct(refreshed.alias("time"), "diff")), lambda e: e["time"].isNotNull())
        ),
    }


def evaluate_level(below: DataFrame, edges: DataFrame, c: dict[str, Column]) -> DataFrame:
    """The outputs of one level's nodes from the level below: one join, one grouping, one explode.

    Rows reach their parent; a join parent groups its left and right rows by join key and
    crosses them (times join, diffs multiply); every other parent keeps rows one by one
    (each its own group) and applies its filter, projection, temporal filter or refresh
    (`c` is `level_columns()`).
    """
    row = F.struct("data", "time", "diff")
    grouped = (
        below.join(edges, on=["key", "node"])
        .groupBy(
            "key",
            "parent",
            c["jk"].alias("jk"),
            F.when(~c["is_join"], F.monotonically_increasing_id()).alias("uid"),
        )
        .agg(
            *[F.first(name).alias(name) for name in ("kind", "fpreds", "cols", "tpreds", "refresh", "until")],
            F.collect_list(F.when(F.col("role") == "L", row)).alias("ls"),
            F.collect_list(F.when(F.col("role") == "R", row)).alias("rs"),
        )
    )
    out = (
        grouped.select(
            "key",
            F.col("parent").alias("node"),
            "kind",
            "fpreds",
            "cols",
            "tpreds",
            "refresh",
            "until",
            F.explode(c["pairs"]).alias("u"),
        )
        .select("*", "u.data", "u.time", "u.diff")
        .drop("u")
    )
    out = out.where(c["keep"]).withColumn("data", c["data"])
    return out.select("key", "node", "data", F.explode(c["events"]).alias("e")).select(
        "key", "node", "data", "e.time", "e.diff"
    )


def consolidated_with_counts(updates: DataFrame) -> DataFrame:
    """Per key: the consolidated updates (`n` null) and one row with the number of diffs processed (`n`)."""
    merged = (
        updates.groupBy("key", "data", "time")
        .agg(F.sum("diff").alias("diff"))
        .where(F.col("diff") != 0)
        .withColumn("n", F.lit(None).cast("long"))
    )
    counts = updates.groupBy("key").agg(F.count(F.lit(1)).alias("n"))
    nothing = F.lit(None)
    return merged.unionByName(
        counts.select(
            "key",
            nothing.cast("array<bigint>").alias("data"),
            nothing.cast("long").alias("time"),
            nothing.cast("long").alias("diff"),
            "n",
        )
    )


def _read(frame: DataFrame | None) -> dict[int, tuple[set, int]]:
    """`{key: (set of (data, time, diff), diffs processed)}` from `consolidated_with_counts`."""
    if frame is None:
        return {}
    table = consolidated_with_counts(frame).toArrow()
    out: dict[int, tuple[set, int]] = {}
    cols = [table.column(n).to_pylist() for n in ("key", "data", "time", "diff", "n")]
    for key, data, time, diff, n in zip(*cols):
        rows, count = out.get(key, (set(), 0))
        if n is None:
            rows.add((tuple(data), time, diff))
        else:
            count = n
        out[key] = (rows, count)
    return out


# ---------------------------------------------------------------- the temporal suite


def observe_temporal(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Per `query` step: its consolidated output and the number of diffs it processed (see the temporal suite)."""
    rows, queries, keys = [], [], []
    for hid, history in enumerate(histories):
        for step, action in enumerate(history.actions):
            a = action.args
            if action.name == "insert":
                rows.append((hid, step, a["table"], list(a["row"]), a["time"], a["diff"]))
            elif action.name == "query":
                until = a.get("until") or ()
                queries.append(Query(len(queries), hid, step, a["plan"], until[0] if until else None))
                keys.append((hid, step))
    results = _read(evaluate_queries(rows_table(rows), queries))
    observed: list[dict] = [{} for _ in histories]
    for q, (hid, step) in zip(queries, keys):
        updates, count = results.get(q.key, (set(), 0))
        observed[hid][(step, "output")] = frozenset(updates)
        observed[hid][(step, "diffs")] = frozenset({(count,)})
    return observed


# ---------------------------------------------------------------- the timelines suite


def leaf_timeline(action: Any) -> Any:
    """The timeline a leaf's creation statement gives it (None for constants)."""
    a = action.args
    if action.name == "create_table":
        return EpochMilliseconds()
    if action.name != "create_source":
        return None
    if a.get("timeline") is not None:
        return User(a["timeline"])
    if a["kind"] == "cdc" and not a.get("epoch_ms_timeline"):
        return External(a["name"])
    if a.get("consistency_topic") is not None:
        return Counter(*a["consistency_topic"])
    return EpochMilliseconds()


def inline(plan: dict, defined: dict) -> dict:
    """The plan with every view/MV replaced by its (inlined) body, so it reads leaves only."""
    node = plan["node"]
    if node == "get":
        return defined.get(plan["name"], plan)
    children = {k: inline(v, defined) for k, v in plan.items() if k in ("input", "left", "right")}
    if node == "union":
        children["inputs"] = [inline(p, defined) for p in plan["inputs"]]
    return {**plan, **children}


def reads(plan: dict) -> set[str]:
    """The names a plan reads."""
    if plan["node"] == "get":
        return {plan["name"]}
    parts = plan.get("inputs", []) + [plan[k] for k in ("input", "left", "right") if k in plan]
    return set().union(*(reads(p) for p in parts))


def plan_catalog(history: Any) -> tuple[dict, dict, list]:
    """Driver-side planning: `(rejected {step: {(name, timeline)}}, accepted {step: (name, leaf plan)}, leaf rows)`."""
    timelines, defined, rejected, accepted, rows = {}, {}, {}, {}, []
    for step, action in enumerate(history.actions):
        a = action.args
        if action.name in ("create_table", "create_source", "create_constant"):
            timelines[a["name"]] = leaf_timeline(action)
            rows += [(a["name"], list(r)) for r in a.get("rows", ())]
            continue
        if action.name == "insert" or action.name not in (
            "create_view",
            "create_mv",
            "create_subscribe",
            "select",
            "create_index",
        ):
            continue
        plan = {"node": "get", "name": a["on"]} if action.name == "create_index" else a["plan"]
        body = inline(plan, defined)
        named = {(n, repr(timelines[n])) for n in reads(body) if timelines[n] is not None}
        if len({t for _, t in named}) > 1:
            rejected[step] = named
            continue
        accepted[step] = (a["name"], body)
        if action.name in ("create_view", "create_mv"):
            defined[a["name"]] = body
    return rejected, accepted, rows


def observe_timelines(domain: Any, histories: Sequence[Any]) -> list[dict]:
    """Per dataflow creation: rejected (naming every input and its timeline) or created; each created one's output."""
    rows, queries, observed, names = [], [], [], []
    for hid, history in enumerate(histories):
        rejected, accepted, constants = plan_catalog(history)
        obs = {(step, "rejected"): frozenset(named) for step, named in rejected.items()}
        obs.update({(step, "created"): frozenset({(name,)}) for step, (name, _) in accepted.items()})
        observed.append(obs)
        rows += [(hid, 0, name, row, 0, 1) for name, row in constants]
        rows += [
            (hid, 0, a.args["table"], list(a.args["row"]), a.args["time"], a.args["diff"])
            for a in history.actions
            if a.name == "insert"
        ]
        for name, body in accepted.values():
            queries.append(Query(len(queries), hid, 1, body))
            names.append((hid, len(history.actions), name))
    results = _read(evaluate_queries(rows_table(rows), queries))
    for q, (hid, end, name) in zip(queries, names):
        observed[hid][(end, f"output {name}")] = frozenset(results.get(q.key, (set(), 0))[0])
    return observed
