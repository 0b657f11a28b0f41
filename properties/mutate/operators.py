"""Mutation operators: the mistakes time-handling code makes, one class each.

An operator looks at one AST node (and where it sits) and offers replacements
for it; each replacement is one mutant. `show(operator, source)` lists what an
operator makes of a snippet, as `original -> mutated`.

>>> [op.name for op in OPERATORS]  # doctest: +NORMALIZE_WHITESPACE
['compare', 'min-max', 'least-greatest', 'meet-join', 'off-by-one', 'drop-filter', 'drop-key',
 'and-or', 'empty-frontier']
"""

from __future__ import annotations

import ast
import copy
import re
from typing import ClassVar, TypeGuard, TypeVar

import attrs

from frontier_harness.properties.mutate.syntax import (
    Scope,
    Site,
    call_name,
    copy_at,
    is_constant,
    short,
    walk,
)


@attrs.frozen
class Replacement:
    """What replaces a node, and how the change reads: `original -> mutated`."""

    node: ast.AST
    original: str
    mutated: str


class Operator:
    """Offers replacements for a node; the base offers none."""

    name: ClassVar[str] = ""

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        return []


N = TypeVar("N", bound=ast.AST)


def _swapped(node: N, **changes: object) -> N:
    new = copy.deepcopy(node)
    for field, value in changes.items():
        setattr(new, field, value)
    return new


class CompareSwap(Operator):
    """`<` <-> `<=`, `>` <-> `>=`, `==` <-> `!=`: a boundary included or excluded, a test inverted.

    >>> show(CompareSwap(), "lo <= t < hi")
    ['lo <= t < hi -> lo < t < hi', 'lo <= t < hi -> lo <= t <= hi']
    """

    name = "compare"
    SWAP: ClassVar[dict] = {
        ast.Lt: ast.LtE,
        ast.LtE: ast.Lt,
        ast.Gt: ast.GtE,
        ast.GtE: ast.Gt,
        ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq,
    }

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        if not isinstance(node, ast.Compare):
            return []
        out = []
        for i, op in enumerate(node.ops):
            if type(op) in self.SWAP:
                ops = [*node.ops[:i], self.SWAP[type(op)](), *node.ops[i + 1 :]]
                new = _swapped(node, ops=ops)
                out.append(Replacement(new, _compare_text(node), _compare_text(new)))
        return out


def _compare_text(node: ast.Compare) -> str:
    parts = [short(node.left, 28)]
    for op, right in zip(node.ops, node.comparators):
        parts += [ast.unparse(ast.Compare(ast.Name("a"), [op], [ast.Name("b")]))[2:-2], short(right, 28)]
    return " ".join(parts)


class MinMax(Operator):
    """`min` <-> `max` (builtins, Spark's `F.min`/`F.max` and `F.array_min`/`F.array_max`).

    >>> show(MinMax(), "min(a, b) + F.max('t')")
    ['min(a, b) -> max(a, b)', "F.max('t') -> F.min('t')"]
    """

    name = "min-max"
    SWAP: ClassVar[dict] = {"min": "max", "max": "min", "array_min": "array_max", "array_max": "array_min"}

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        return _renamed_call(node, site, self.SWAP, builtins=("min", "max"))


class LeastGreatest(Operator):
    """`F.least` <-> `F.greatest`: the earlier of two times taken for the later.

    >>> show(LeastGreatest(), "F.least(a['lo'], b['lo'])")
    ["F.least(a['lo'], b['lo']) -> F.greatest(a['lo'], b['lo'])"]
    """

    name = "least-greatest"

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        return _renamed_call(node, site, {"least": "greatest", "greatest": "least"}, builtins=())


def _renamed_call(node: ast.AST, site: Site, swap: dict, builtins: tuple) -> list[Replacement]:
    """A call of `name(...)` (a builtin not shadowed) or `base.name(...)` with the name swapped."""
    if not isinstance(node, ast.Call):
        return []
    func = node.func
    if isinstance(func, ast.Name) and func.id in builtins and func.id not in site.scope.names:
        new_func: ast.AST = ast.Name(swap[func.id], ast.Load())
    elif isinstance(func, ast.Attribute) and func.attr in swap and isinstance(func.value, ast.Name):
        new_func = ast.Attribute(copy.deepcopy(func.value), swap[func.attr], ast.Load())
    else:
        return []
    new = _swapped(node, func=copy_at(new_func, func))
    return [Replacement(new, short(node), short(new))]


class MeetJoin(Operator):
    """`meet` <-> `join` where both are in scope: the earlier frontier taken for the later.

    In scope means: both are names of the module (`meet(...)`), or `base.meet`
    and `base.join` are both used on the same base, or `base` is an imported
    module that defines both.

    >>> show(MeetJoin(), "tc.meet(a, b)\\ntc.join(a, b)\\n', '.join(xs)")
    ['tc.meet -> tc.join', 'tc.join -> tc.meet']
    """

    name = "meet-join"
    SWAP: ClassVar[dict] = {"meet": "join", "join": "meet"}

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        scope = site.scope
        if isinstance(node, ast.Name) and node.id in self.SWAP and self.SWAP[node.id] in scope.names:
            new: ast.AST = ast.Name(self.SWAP[node.id], ast.Load())
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in self.SWAP
            and isinstance(node.value, ast.Name)
            and _has_both(scope, node.value.id, node.attr)
        ):
            new = ast.Attribute(copy.deepcopy(node.value), self.SWAP[node.attr], ast.Load())
        else:
            return []
        if not isinstance(getattr(node, "ctx", None), ast.Load):
            return []
        return [Replacement(copy_at(new, node), short(node), short(new))]


def _has_both(scope: Scope, base: str, attr: str) -> bool:
    other = MeetJoin.SWAP[attr]
    return (base, other) in scope.attribute_pairs or {attr, other} <= scope.module_names(base)


# Identifiers that name a time (split on "_"): a frontier (`since`, `upper`) is an array, not one.
TIME_WORDS = frozenset(
    {"time", "ts", "offset", "now", "until", "tick", "bound", "lo", "hi", "wall", "expire", "expiration"}
    | {"arrival", "refresh", "lsn", "start", "end", "t"}
)


def is_time_name(name: str) -> bool:
    """Whether an identifier names a time: one of its `_`-separated words is a time word.

    >>> [is_time_name(n) for n in ("read_time", "expire_ts", "history_id", "times", "t")]
    [True, True, False, False, True]
    """
    return bool(TIME_WORDS & set(re.split(r"_+", name.lower())))


class OffByOne(Operator):
    """`+ 1` / `- 1` added to a time expression, or removed from an expression: an off-by-one.

    A time expression is a name, attribute, `x["key"]` or `F.col("name")` whose
    name is a time (`is_time_name`).

    >>> show(OffByOne(), "F.when(t <= since, None).otherwise(tick - 1)")
    ['t -> t + 1', 't -> t - 1', 'tick - 1 -> tick']
    """

    name = "off-by-one"

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        if _is_plus_minus_one(node) and not is_constant(node.left):
            return [Replacement(copy.deepcopy(node.left), short(node), short(node.left))]
        if not _is_time_expression(node, site.scope) or not _in_value_position(node, site.parent):
            return []
        return [
            Replacement(copy_at(new, node), short(node), short(new))
            for new in (ast.BinOp(copy.deepcopy(node), op, ast.Constant(1)) for op in (ast.Add(), ast.Sub()))
        ]


def _is_plus_minus_one(node: ast.AST | None) -> TypeGuard[ast.BinOp]:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
        and type(node.right.value) is int
    )


def _is_time_expression(node: ast.AST, scope: Scope) -> TypeGuard[ast.expr]:
    """A time-named value: not a function, class or constant (`NEVER`) of the module, nor an import's."""
    if isinstance(node, ast.Name):
        return is_time_name(node.id) and node.id not in scope.defined and not node.id.isupper()
    if isinstance(node, ast.Attribute):
        imported = isinstance(node.value, ast.Name) and node.value.id in scope.modules
        return is_time_name(node.attr) and not imported
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and isinstance(key.value, str) and is_time_name(key.value)
    if (
        isinstance(node, ast.Call)
        and call_name(node) == "col"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
    ):
        return isinstance(node.args[0].value, str) and is_time_name(node.args[0].value)
    return False


def _in_value_position(node: ast.AST, parent: ast.AST | None) -> bool:
    """Read as a value: not assigned to, not called, not the base of an attribute or subscript."""
    if not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
        return False
    if isinstance(parent, ast.Call) and parent.func is node:
        return False
    if isinstance(parent, ast.Attribute | ast.Subscript) and parent.value is node:
        return False
    if isinstance(parent, ast.comprehension):
        return parent.iter is node
    return not isinstance(parent, ast.Starred) and not _is_plus_minus_one(parent)


class DropFilter(Operator):
    """A `where`/`filter` dropped: rows (or elements, or list items) that should be excluded stay in.

    >>> show(DropFilter(), "df.where(F.col('diff') != 0)")
    ["df.where(F.col('diff') != 0) -> df"]
    >>> show(DropFilter(), "[t for t in ts if t < u]")
    ['if t < u -> (no condition)']
    """

    name = "drop-filter"

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        if isinstance(node, ast.comprehension):
            return [
                Replacement(
                    _swapped(node, ifs=node.ifs[:i] + node.ifs[i + 1 :]), f"if {short(c)}", "(no condition)"
                )
                for i, c in enumerate(node.ifs)
            ]
        kept = _unfiltered(node, site.scope)
        return [Replacement(copy.deepcopy(kept), short(node), short(kept))] if kept is not None else []


def _unfiltered(node: ast.AST, scope: Scope) -> ast.AST | None:
    """What a filtering call filters: the frame of `df.where(c)`, the array of `F.filter(a, f)`."""
    name = call_name(node)
    if not isinstance(node, ast.Call) or name not in ("where", "filter") or node.keywords:
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return (
            node.args[1] if name == "filter" and len(node.args) == 2 and "filter" not in scope.names else None
        )
    assert isinstance(func, ast.Attribute)  # call_name named it: a name or an attribute
    if isinstance(func.value, ast.Name) and func.value.id == scope.functions:
        return node.args[0] if name == "filter" and len(node.args) == 2 else None
    return func.value if len(node.args) == 1 else None


class DropKey(Operator):
    """A column removed from a `groupBy`/`partitionBy` or join key: rows of different keys meet.

    Dropping `history_id` is the batching mistake: histories of one batch mixed.

    >>> show(DropKey(), "df.groupBy('history_id', 't')")
    ["groupBy('history_id', 't') -> groupBy('t')", "groupBy('history_id', 't') -> groupBy('history_id')"]
    >>> show(DropKey(), "a.join(b, on=['history_id', 'step'], how='left')")
    ["on=['history_id', 'step'] -> on=['step']", "on=['history_id', 'step'] -> on=['history_id']"]
    >>> show(DropKey(), "a.join(b, on='history_id')")
    ["on='history_id' -> (no key: a cross join)"]
    """

    name = "drop-key"
    GROUPING: ClassVar[tuple[str, ...]] = ("groupBy", "groupby", "partitionBy")
    JOINING: ClassVar[tuple[str, ...]] = ("join", "merge")

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        name = call_name(node)
        if not isinstance(node, ast.Call) or name is None:
            return []
        if name in self.GROUPING and isinstance(node.func, ast.Attribute):
            return self._grouping(node, name)
        if name in self.JOINING and isinstance(node.func, ast.Attribute):
            return self._joining(node)
        return []

    def _grouping(self, node: ast.Call, name: str) -> list[Replacement]:
        out = []
        for i, arg in enumerate(node.args):
            if not isinstance(arg, ast.Starred):
                new = _swapped(node, args=node.args[:i] + node.args[i + 1 :])
                out.append(Replacement(new, _call_text(name, node), _call_text(name, new)))
        return out

    def _joining(self, node: ast.Call) -> list[Replacement]:
        on = next((k for k in node.keywords if k.arg == "on"), None)
        if on is None:
            return []
        key = on.value
        options: list[ast.expr]
        if isinstance(key, ast.List | ast.Tuple) and len(key.elts) > 1:
            options = [_swapped(key, elts=key.elts[:i] + key.elts[i + 1 :]) for i in range(len(key.elts))]
        elif isinstance(key, ast.BinOp) and isinstance(key.op, ast.BitAnd):
            options = [copy.deepcopy(key.left), copy.deepcopy(key.right)]
        elif isinstance(key, ast.Constant) or (isinstance(key, ast.List | ast.Tuple) and len(key.elts) == 1):
            new = _swapped(node, keywords=[k for k in node.keywords if k is not on])
            return [Replacement(new, f"on={short(key)}", "(no key: a cross join)")]
        else:
            return []
        return [
            Replacement(
                _swapped(node, keywords=[ast.keyword("on", o) if k is on else k for k in node.keywords]),
                f"on={short(key)}",
                f"on={short(o)}",
            )
            for o in options
        ]


def _call_text(name: str, node: ast.Call) -> str:
    return f"{name}({', '.join(short(a, 30) for a in node.args)})"


class AndOr(Operator):
    """`and` <-> `or` (and a Column condition's `&` <-> `|`): a conjunct taken for a disjunct.

    >>> show(AndOr(), "(a <= b) & ~c or d")
    ['(a <= b) & ~c or d -> (a <= b) & ~c and d', '(a <= b) & ~c -> (a <= b) | ~c']
    >>> show(AndOr(), "flags & 1")
    []
    """

    name = "and-or"

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        if isinstance(node, ast.BoolOp):
            new: ast.AST = _swapped(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.BitAnd | ast.BitOr)
            and not (is_constant(node.left) or is_constant(node.right))
        ):
            new = _swapped(node, op=ast.BitOr() if isinstance(node.op, ast.BitAnd) else ast.BitAnd())
        else:
            return []
        return [Replacement(new, short(node), short(new))]


class EmptyFrontier(Operator):
    """A function that returns a frontier returns the empty one (closed: every time complete) instead.

    A frontier-returning function is named for one (`frontier`, `upper`, `since`,
    `meet`, `join`, `minimal`, `resumption` among its words) and annotated to
    return a `list`, `tuple`, `set`, `frozenset` or `Antichain`, or a Spark
    `Column` built by an array function (`minimal`, `F.array_distinct`, ...;
    emptied with `F.filter`): a Column-valued `join` of two times is no frontier.

    >>> show(EmptyFrontier(), "def upper(s) -> list:\\n    return [s.n]")
    ['return [s.n] -> return (empty frontier)']
    >>> show(EmptyFrontier(), "def meet(a, b) -> int:\\n    return min(a, b)")
    []
    >>> show(EmptyFrontier(), "def join(a, b) -> Column:\\n    return F.when(a < b, b)")
    []
    """

    name = "empty-frontier"
    WORDS: ClassVar[frozenset] = frozenset(
        {"frontier", "upper", "uppers", "since", "meet", "join", "minimal", "resumption"}
    )
    COLLECTIONS: ClassVar[tuple] = ("list", "tuple", "set", "frozenset", "Antichain")
    ARRAYS: ClassVar[frozenset] = frozenset(
        {"minimal", "array", "array_distinct", "array_sort", "sort_array", "array_union", "array_except"}
        | {"array_intersect", "filter", "concat", "transform", "flatten", "collect_list", "collect_set"}
    )

    def replacements(self, node: ast.AST, site: Site) -> list[Replacement]:
        returns = _frontier_returns(site.function)
        if not isinstance(node, ast.Return) or node.value is None or returns is None:
            return []
        if isinstance(node.value, ast.List | ast.Tuple | ast.Set) and not node.value.elts:
            return []
        empty = self._empty(node.value, ast.unparse(returns), site.scope)
        if empty is None:
            return []
        return [
            Replacement(
                _swapped(node, value=copy_at(empty, node.value)), short(node), "return (empty frontier)"
            )
        ]

    def _empty(self, value: ast.expr, returns: str, scope: Scope) -> ast.expr | None:
        if returns == "Column" and scope.functions and call_name(value) in self.ARRAYS:
            functions = ast.Name(scope.functions, ast.Load())
            false = ast.Call(ast.Attribute(functions, "lit", ast.Load()), [ast.Constant(False)], [])
            never = ast.Lambda(ast.arguments([], [ast.arg("_")], None, [], [], None, []), false)
            keep = ast.Attribute(copy.deepcopy(functions), "filter", ast.Load())
            return ast.Call(keep, [copy.deepcopy(value), never], [])
        if returns.split("[")[0] in self.COLLECTIONS:
            typed = ast.Call(ast.Name("type", ast.Load()), [copy.deepcopy(value)], [])
            return ast.Call(typed, [], [])
        return None


def _frontier_returns(function: ast.AST | None) -> ast.expr | None:
    """The return annotation of a function named for a frontier; None for any other function."""
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or function.returns is None:
        return None
    return function.returns if set(function.name.lower().split("_")) & EmptyFrontier.WORDS else None


OPERATORS: tuple[Operator, ...] = (
    CompareSwap(),
    MinMax(),
    LeastGreatest(),
    MeetJoin(),
    OffByOne(),
    DropFilter(),
    DropKey(),
    AndOr(),
    EmptyFrontier(),
)
BY_NAME = {op.name: op for op in OPERATORS}


def show(operator: Operator, source: str) -> list[str]:
    """`original -> mutated` for every replacement `operator` offers anywhere in `source`."""
    tree = ast.parse(source)
    return [
        f"{r.original} -> {r.mutated}" for node, site in walk(tree) for r in operator.replacements(node, site)
    ]
