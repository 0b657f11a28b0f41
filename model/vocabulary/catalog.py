"""Words of the catalog capability's suites: timelines, temporal filters, dataflow expiration, prove.

A catalog history creates objects (`create_table{name}`, `create_source{name, kind,
timeline?, epoch_ms_timeline?, consistency_topic?}`, `create_constant{name, rows}`,
`create_view|create_mv|create_subscribe|select{name, plan, refresh?, up_to?}`,
`create_index{name, on}`), writes `insert{table, row, time, diff}`, and drives the
world: `tick{source, wall, reached}`, `skew{name, wall, by}`, `set_offset{offset}`,
`restart{wall}`, `read{name, wall, time}`; the temporal suite's `query{plan, until}`
evaluates a plan over what was inserted before it. A plan is a nested record
`{"node": PlanNode, fields...}` (`PlanField`), a refresh clause `{"every", "aligned_to"}`
or `{"at"}` (`RefreshField`). `time`, `diff` and `until` are the shared `Arg` keys.

Observations are keyed `(step, label)`: `TimelinesLabel`, `TemporalLabel`,
`ExpirationLabel` (some per dataflow: `per_dataflow(ExpirationLabel.DIFFS, "m0")` is
`"diffs m0"`) and `ProveLabel`; a read's value is contents or a `ReadResult`.

>>> CatalogAction("create_mv") is CatalogAction.CREATE_MV
True
>>> DATAFLOW_ACTIONS
('create_view', 'create_mv', 'create_subscribe', 'select', 'create_index')
>>> per_dataflow(ExpirationLabel.KEPT, "m0"), dataflow_of(ExpirationLabel.KEPT, "kept beyond life m0")
('kept beyond life m0', 'm0')
>>> {"node": PlanNode.GET, "name": "t"} == {"node": "get", "name": "t"}
True
"""

from __future__ import annotations

import attrs

from frontier_harness.model.vocabulary import Arg, HistoryLike, Word


class CatalogAction(Word):
    """A step of a catalog history (every catalog suite's actions; each suite uses some)."""

    CREATE_TABLE = "create_table"
    CREATE_SOURCE = "create_source"
    CREATE_CONSTANT = "create_constant"
    CREATE_VIEW = "create_view"
    CREATE_MV = "create_mv"
    CREATE_SUBSCRIBE = "create_subscribe"
    SELECT = "select"
    CREATE_INDEX = "create_index"
    INSERT = "insert"
    TICK = "tick"
    SKEW = "skew"
    SET_OFFSET = "set_offset"
    RESTART = "restart"
    READ = "read"
    QUERY = "query"


# The creations of leaves (they read nothing) and of dataflows (they read a plan or, an index, one object).
LEAF_ACTIONS = (CatalogAction.CREATE_TABLE, CatalogAction.CREATE_SOURCE, CatalogAction.CREATE_CONSTANT)
DATAFLOW_ACTIONS = (
    CatalogAction.CREATE_VIEW,
    CatalogAction.CREATE_MV,
    CatalogAction.CREATE_SUBSCRIBE,
    CatalogAction.SELECT,
    CatalogAction.CREATE_INDEX,
)
# The dataflows a replica maintains (and expires).
MAINTAINED_ACTIONS = (CatalogAction.CREATE_MV, CatalogAction.CREATE_INDEX, CatalogAction.CREATE_SUBSCRIBE)


class CatalogArg(Word):
    """Argument keys of catalog actions, besides the shared `Arg.TIME`, `Arg.DIFF` and `Arg.UNTIL`."""

    NAME = "name"
    KIND = "kind"
    TIMELINE = "timeline"
    EPOCH_MS_TIMELINE = "epoch_ms_timeline"
    CONSISTENCY_TOPIC = "consistency_topic"
    ROWS = "rows"
    PLAN = "plan"
    REFRESH = "refresh"
    UP_TO = "up_to"
    ON = "on"
    TABLE = "table"
    ROW = "row"
    SOURCE = "source"
    WALL = "wall"
    REACHED = "reached"
    BY = "by"
    OFFSET = "offset"


class SourceKind(Word):
    """A source's `kind` (`create_source{kind}`)."""

    KAFKA = "kafka"
    POSTGRES = "postgres"
    CDC = "cdc"
    LOAD_GENERATOR = "load_generator"


class ObjectKind(Word):
    """What a creation action makes: the kind of catalog object."""

    TABLE = "table"
    SOURCE = "source"
    CONSTANT = "constant"
    VIEW = "view"
    MV = "mv"
    INDEX = "index"
    SUBSCRIBE = "subscribe"
    SELECT = "select"


OBJECT_KINDS: dict[str, ObjectKind] = {
    CatalogAction.CREATE_TABLE: ObjectKind.TABLE,
    CatalogAction.CREATE_SOURCE: ObjectKind.SOURCE,
    CatalogAction.CREATE_CONSTANT: ObjectKind.CONSTANT,
    CatalogAction.CREATE_VIEW: ObjectKind.VIEW,
    CatalogAction.CREATE_MV: ObjectKind.MV,
    CatalogAction.CREATE_INDEX: ObjectKind.INDEX,
    CatalogAction.CREATE_SUBSCRIBE: ObjectKind.SUBSCRIBE,
    CatalogAction.SELECT: ObjectKind.SELECT,
}


class PlanNode(Word):
    """A plan record's `node`."""

    GET = "get"
    FILTER = "filter"
    PROJECT = "project"
    UNION = "union"
    JOIN = "join"
    TEMPORAL = "temporal"


class InlinedNode(Word):
    """The nodes a coordinator adds when it inlines a materialized view into a reader's plan (never in a
    history): `refresh{input, refresh}` moves each update to the MV's next refresh (`refresh` is the MV's
    `CatalogArg.REFRESH` clauses); `persisted{input}` reads the MV's own output, without the reader's `until`."""

    REFRESH = "refresh"
    PERSISTED = "persisted"


class PlanField(Word):
    """A plan record's fields: `get{name}`, `filter{input, predicates}`, `project{input, columns}`,
    `union{inputs}`, `join{left, right, on}`, `temporal{input, predicates}`."""

    NODE = "node"
    NAME = "name"
    INPUT = "input"
    INPUTS = "inputs"
    LEFT = "left"
    RIGHT = "right"
    ON = "on"
    PREDICATES = "predicates"
    COLUMNS = "columns"
    REFRESH = "refresh"  # an inlined `refresh` node's clauses


# The fields that hold one child plan (a union's `inputs` holds several).
CHILD_FIELDS = (PlanField.INPUT, PlanField.LEFT, PlanField.RIGHT)


class Comparison(Word):
    """A filter predicate's operator (`[column, op, value]`)."""

    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


class TemporalOp(Word):
    """A temporal predicate's operator (`[op, column, offset]`: `mz_now() op row[column] + offset`)."""

    GE = ">="
    LE = "<="
    LT = "<"


class RefreshField(Word):
    """A refresh clause's keys: `{every, aligned_to}` or `{at}`."""

    EVERY = "every"
    ALIGNED_TO = "aligned_to"
    AT = "at"


class TimelinesLabel(Word):
    """Timelines observations: a creation `rejected` (naming inputs) or `created`; each one's `output NAME`."""

    REJECTED = "rejected"
    CREATED = "created"
    OUTPUT = "output"


class TemporalLabel(Word):
    """Temporal observations, per query: its consolidated `output` and the `diffs` it processed."""

    OUTPUT = "output"
    DIFFS = "diffs"


class ExpirationLabel(Word):
    """Expiration observations: reads with and without expiration; per dataflow (`per_dataflow`) at each
    restart its rendering, its diffs processed and the diffs it kept beyond the replica's life."""

    READ_WITH = "read with expiration"
    READ_WITHOUT = "read without"
    DATAFLOW = "dataflow"
    DIFFS = "diffs"
    KEPT = "kept beyond life"


class ProveLabel(Word):
    """Prove observations: each read with and without expiration; at the end, the diffs kept."""

    READ = "read"
    READ_WITHOUT = "read without expiration"
    BEYOND = "diffs at or beyond the expiration"
    LATE = "diffs kept past the replica's life"


class ReadResult(Word):
    """A read's value when it returns no contents, and the tag of contents (prove: `("rows", rows)`)."""

    NOT_SERVED = "not served"
    REPLICA_EXPIRED = "replica expired"
    ROWS = "rows"


def per_dataflow(label: Word, name: str) -> str:
    """The label of `label`'s observation of the dataflow `name`: `"<label> <name>"`."""
    return f"{label} {name}"


def dataflow_of(label: Word, key: str) -> str | None:
    """The dataflow a `per_dataflow(label, name)` key names; None if `key` is not one of `label`'s."""
    prefix = f"{label} "
    return key[len(prefix) :] if key.startswith(prefix) else None


@attrs.frozen
class CatalogFeed:
    """What a catalog history feeds the world besides its objects, in the history's order: each `insert`
    as `(table, row, time, diff)`, each source's `tick`s as `(wall, reached)` and each object's `skew`s
    as `(wall, by)` by name, the expiration offset (the last `set_offset`; 0 without one) and the walls
    at which the replica (re)starts (its `restart`s). Every observer of a catalog history reads it here.

    >>> from types import SimpleNamespace as A
    >>> feed = catalog_feed(A(domain="total", actions=[
    ...     A(name="insert", args={"table": "t", "row": [1], "time": 2, "diff": 1}),
    ...     A(name="tick", args={"source": "g", "wall": 0, "reached": 5}),
    ...     A(name="restart", args={"wall": 7})]))
    >>> feed.inserts, feed.ticks, feed.starts
    ((('t', (1,), 2, 1),), {'g': ((0, 5),)}, (7,))
    """

    inserts: tuple[tuple[str, tuple, int, int], ...] = ()
    ticks: dict[str, tuple[tuple[int, int], ...]] = attrs.field(factory=dict)
    skews: dict[str, tuple[tuple[int, int], ...]] = attrs.field(factory=dict)
    offset: int = 0
    starts: tuple[int, ...] = ()


def catalog_feed(history: HistoryLike) -> CatalogFeed:
    """The history's `CatalogFeed` (the other actions create objects or read: each suite reads those)."""
    inserts, ticks, skews, offset, starts = [], dict[str, list](), dict[str, list](), 0, []
    for action in history.actions:
        a = action.args
        if action.name == CatalogAction.INSERT:
            inserts.append((a[CatalogArg.TABLE], tuple(a[CatalogArg.ROW]), a[Arg.TIME], a[Arg.DIFF]))
        elif action.name == CatalogAction.TICK:
            ticks.setdefault(a[CatalogArg.SOURCE], []).append((a[CatalogArg.WALL], a[CatalogArg.REACHED]))
        elif action.name == CatalogAction.SKEW:
            skews.setdefault(a[CatalogArg.NAME], []).append((a[CatalogArg.WALL], a[CatalogArg.BY]))
        elif action.name == CatalogAction.SET_OFFSET:
            offset = a[CatalogArg.OFFSET]
        elif action.name == CatalogAction.RESTART:
            starts.append(a[CatalogArg.WALL])
    frozen = {k: tuple(v) for k, v in ticks.items()}, {k: tuple(v) for k, v in skews.items()}
    return CatalogFeed(tuple(inserts), *frozen, offset, tuple(starts))
