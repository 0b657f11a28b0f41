"""Mutants: one operator's replacement of one node of one module, found and applied by position.

A mutant names its node by its index in `syntax.walk` and its replacement by its
index among the operator's offers there, so it applies to any fresh parse of
the same source. A line ending in `# pragma: no mutate` is left alone.

>>> from pathlib import Path
>>> from frontier_harness.properties.mutate.sources import SourceModule
>>> m = SourceModule("tiny", Path("tiny.py"), "def f(a, b):\\n    return a < b\\n")
>>> [x.describe() for x in enumerate_mutants(m)]
['tiny.py:2  compare  a < b -> a <= b']
>>> ast.unparse(mutated_tree(m, enumerate_mutants(m)[0])).splitlines()[1]
'    return a <= b'
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import attrs

from frontier_harness.properties.mutate.operators import BY_NAME, OPERATORS, Operator
from frontier_harness.properties.mutate.sources import SourceModule
from frontier_harness.properties.mutate.syntax import Scope, replace, walk

PRAGMA = "# pragma: no mutate"


@attrs.frozen(order=True)
class Mutant:
    """One change to one module.

    `line` is where a user looks for it (for `df.x.groupBy(...)` the line of
    `.groupBy`), `start_line`/`end_line` the node's span; `in_function` is False
    for code that runs when the module is imported.
    """

    path: str
    line: int
    column: int
    operator: str
    variant: int
    module: str
    node: int
    original: str
    mutated: str
    in_function: bool
    start_line: int
    end_line: int

    @property
    def key(self) -> str:
        """A stable name: file, line, column, operator and which of its offers there."""
        return f"{self.path}:{self.line}:{self.column}:{self.operator}:{self.variant}"

    def describe(self) -> str:
        """The line a user works from: `file:line  operator  original -> mutated`."""
        return f"{self.path}:{self.line}  {self.operator}  {self.original} -> {self.mutated}"


def enumerate_mutants(module: SourceModule, operators: Sequence[Operator] = OPERATORS) -> list[Mutant]:
    """Every mutant of `module`, in source order."""
    tree = module.tree()
    lines = module.source.splitlines()
    out = []
    for index, (node, site) in enumerate(walk(tree, Scope.of(tree, module.package))):
        start = getattr(node, "lineno", None) or getattr(getattr(node, "target", None), "lineno", None)
        if start is None:
            continue
        line = _anchor(node, start)
        if lines[line - 1].rstrip().endswith(PRAGMA):
            continue
        for operator in operators:
            for variant, r in enumerate(operator.replacements(node, site)):
                out.append(
                    Mutant(
                        path=module.display,
                        line=line,
                        column=getattr(node, "col_offset", 0),
                        operator=operator.name,
                        variant=variant,
                        module=module.name,
                        node=index,
                        original=r.original,
                        mutated=r.mutated,
                        in_function=site.function is not None,
                        start_line=start,
                        end_line=getattr(node, "end_lineno", None) or line,
                    )
                )
    return sorted(out)


def _anchor(node: ast.AST, start: int) -> int:
    """The line a method call's name is on (a chain spans lines; the name is where the change is)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.end_lineno or start
    return start


def mutated_tree(module: SourceModule, mutant: Mutant) -> ast.Module:
    """A fresh parse of `module` with `mutant` applied, locations filled in, ready to compile."""
    tree = module.tree()
    for index, (node, site) in enumerate(walk(tree, Scope.of(tree, module.package))):
        if index == mutant.node:
            replacement = BY_NAME[mutant.operator].replacements(node, site)[mutant.variant]
            assert site.parent is not None  # the module itself is never replaced
            replace(site.parent, node, replacement.node)
            return ast.fix_missing_locations(tree)
    raise ValueError(f"{mutant.key}: node {mutant.node} not found in {module.name}")
