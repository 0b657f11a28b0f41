"""Walking a module's AST for mutation: which nodes may change, where each sits, what is in scope.

The walk is preorder and deterministic, so a node is named by its position in it
and a mutant can be re-applied to a fresh parse of the same source. Code that
is not behaviour is skipped: docstrings, annotations, `raise` and `assert`
statements (messages and guards against bad input), f-strings, and
`if TYPE_CHECKING:` blocks.

>>> tree = ast.parse('def f(x: int) -> int:\\n    "doc"\\n    return x + 1')
>>> [type(node).__name__ for node, _ in walk(tree)]
['Module', 'FunctionDef', 'arguments', 'arg', 'Return', 'BinOp', 'Name', 'Load', 'Add', 'Constant']
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from typing import Any, TypeVar

import attrs

FUNCTIONS_MODULE = "pyspark.sql.functions"
Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
N = TypeVar("N", bound=ast.AST)


@attrs.frozen
class Scope:
    """What a module binds: its top-level names (and which are functions or classes), the `base.attr`
    pairs it uses, and its imports (alias -> dotted name).

    `module_names(alias)` is the top-level names of the module imported as `alias`
    (empty when the alias is not a module); `functions` is the name bound to
    `pyspark.sql.functions` (usually `F`), if any.
    """

    names: frozenset[str]
    defined: frozenset[str]
    attribute_pairs: frozenset[tuple[str, str]]
    modules: dict[str, str]  # alias -> dotted module name
    functions: str | None

    @classmethod
    def of(cls, tree: ast.Module, package: str | None = None) -> Scope:
        """The scope of a parsed module (`package` resolves its relative imports)."""
        modules = _imported_modules(tree, package)
        pairs = {
            (node.value.id, node.attr)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        }
        functions = next((alias for alias, name in modules.items() if name == FUNCTIONS_MODULE), None)
        defined = {
            n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        return cls(_top_level_names(tree), frozenset(defined), frozenset(pairs), modules, functions)

    def module_names(self, alias: str) -> frozenset[str]:
        """Top-level names of the module imported as `alias` (parsed from its source, not imported)."""
        name = self.modules.get(alias)
        spec = _find_spec(name) if name else None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return frozenset()
        with open(spec.origin, encoding="utf-8") as handle:
            return _top_level_names(ast.parse(handle.read()))


@attrs.frozen
class Site:
    """Where a visited node sits: its parent, the innermost enclosing function, the module's scope."""

    parent: ast.AST | None
    function: Function | None
    scope: Scope


def walk(tree: ast.Module, scope: Scope | None = None) -> Iterator[tuple[ast.AST, Site]]:
    """Every mutable node with its site, in a fixed preorder."""
    scope = scope or Scope.of(tree)
    yield from _walk(tree, Site(None, None, scope))


def _walk(node: ast.AST, site: Site) -> Iterator[tuple[ast.AST, Site]]:
    yield node, site
    function = node if isinstance(node, Function) else site.function
    for field, value in ast.iter_fields(node):
        children = value if isinstance(value, list) else [value]
        for index, child in enumerate(children):
            if isinstance(child, ast.AST) and not _skipped(node, field, index, child):
                yield from _walk(child, Site(node, function, site.scope))


def _skipped(parent: ast.AST, field: str, index: int, child: ast.AST) -> bool:
    if field in ("annotation", "returns", "type_comment", "decorator_list"):
        return True
    if isinstance(child, ast.Raise | ast.Assert | ast.JoinedStr | ast.Import | ast.ImportFrom):
        return True
    if _is_docstring(parent, field, index, child):
        return True
    return isinstance(child, ast.If) and ast.unparse(child.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _is_docstring(parent: ast.AST, field: str, index: int, child: ast.AST) -> bool:
    return (
        field == "body"
        and index == 0
        and isinstance(parent, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and isinstance(child, ast.Expr)
        and isinstance(child.value, ast.Constant)
        and isinstance(child.value.value, str)
    )


def replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Puts `new` where `old` is among `parent`'s children.

    >>> tree = ast.parse("a < b")
    >>> compare = tree.body[0].value
    >>> replace(tree.body[0], compare, ast.Name("c"))
    >>> ast.unparse(tree)
    'c'
    """
    for field, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list) and any(item is old for item in value):
            value[next(i for i, item in enumerate(value) if item is old)] = new
            return
    raise ValueError(f"{ast.dump(old)[:80]} is not a child of {type(parent).__name__}")


def short(node: ast.AST, limit: int = 60) -> str:
    """`node`'s source, cut to `limit` characters.

    >>> short(ast.parse("F.col('time') <= F.col('read_time')").body[0].value, 20)
    "F.col('time') <= F.…"
    """
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def copy_at(new: N, old: ast.AST) -> N:
    """`new` with `old`'s source position (children too), ready to compile."""
    ast.copy_location(new, old)
    for child in ast.walk(new):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            ast.copy_location(child, old)
    return new


def call_name(node: ast.AST) -> str | None:
    """The called name of a call: `f(...)` -> `f`, `x.f(...)` -> `f`; None otherwise."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def is_constant(node: ast.AST) -> bool:
    """Whether `node` mentions no name at all (a literal or arithmetic over literals)."""
    return not any(isinstance(n, ast.Name | ast.Attribute | ast.Call) for n in ast.walk(node))


def _top_level_names(tree: ast.Module) -> frozenset[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(names)


def _imported_modules(tree: ast.Module, package: str | None) -> dict[str, str]:
    """Alias -> dotted name for every `import m as a` and `from p import m` (m maybe a module)."""
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for a in node.names:
                modules[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return modules


def _absolute(node: ast.ImportFrom, package: str | None) -> str:
    if not node.level:
        return node.module or ""
    parts = (package or "").split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _find_spec(name: str) -> Any:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
