"""The target's modules: their source, which of them import which, and who depends on a module.

A target is a package (every `.py` file under it) or one module. Some modules
are never mutated nor re-executed: `session` modules hold the process's Spark
session (re-executing one would start a second JVM), and `errors` modules define
the exception types the harness classifies (a second copy of a class would make
`isinstance` checks miss).

>>> [m.name for m in target_modules("frontier_harness.properties.mutate") if m.name.endswith("syntax")]
['frontier_harness.properties.mutate.syntax']
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from frontier_harness.properties.engine.errors import HarnessError

PINNED = ("session", "errors")


class UnknownTarget(HarnessError):
    """A `--target` that names no importable package or module with Python source."""


@attrs.frozen
class SourceModule:
    """One module of the target: dotted name, file, source text."""

    name: str
    path: Path
    source: str
    is_package: bool = False

    @property
    def package(self) -> str:
        """The package its relative imports resolve against."""
        return self.name if self.is_package else self.name.rpartition(".")[0]

    @property
    def display(self) -> str:
        """The file as a user names it: relative to the working directory when under it."""
        try:
            return str(self.path.relative_to(Path.cwd()))
        except ValueError:
            return str(self.path)

    @property
    def pinned(self) -> bool:
        return self.name.rpartition(".")[2] in PINNED

    def tree(self) -> ast.Module:
        """A fresh parse (mutating it leaves the module's source alone)."""
        return ast.parse(self.source, filename=str(self.path))

    def imports(self) -> set[str]:
        """Dotted names this module imports anywhere (top level or inside functions), made absolute."""
        out: set[str] = set()
        for node in ast.walk(self.tree()):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, self.package)
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)
        return out


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def target_modules(target: str, flag: str = "--target") -> list[SourceModule]:
    """Every module of a package (sorted by name), or the one module; a typed error naming `flag` if none.
    A user's modules are found from where the command runs, as `--impl`'s are."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, ValueError) as exc:
        raise UnknownTarget(f"{flag} {target!r}: cannot be found: {exc}") from exc
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise UnknownTarget(f"{flag} {target!r}: no importable package or module with Python source")
    if not spec.submodule_search_locations:
        return [load_module(target, Path(spec.origin))]
    root = Path(spec.origin).parent
    modules = [load_module(target, Path(spec.origin), is_package=True)]
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if (Path(directory) / d / "__init__.py").is_file())
        for file in sorted(f for f in files if f.endswith(".py") and f != "__init__.py"):
            path = Path(directory) / file
            dotted = ".".join((target, *path.relative_to(root).with_suffix("").parts))
            modules.append(load_module(dotted, path))
        for sub in subdirs:
            init = Path(directory) / sub / "__init__.py"
            dotted = ".".join((target, *init.parent.relative_to(root).parts))
            modules.append(load_module(dotted, init, is_package=True))
    return sorted(modules, key=lambda m: m.name)


def load_module(name: str, path: Path, is_package: bool = False) -> SourceModule:
    return SourceModule(name, path.resolve(), path.read_text(encoding="utf-8"), is_package)


def dependents(name: str, modules: Sequence[SourceModule]) -> list[SourceModule]:
    """The modules of `modules` that import `name`, directly or through each other, not pinned ones,
    ordered so that every module comes after the ones it imports (they are re-executed in this order).
    """
    by_name = {m.name: m for m in modules}
    imports = {m.name: m.imports() & set(by_name) for m in modules}
    affected = {name}
    changed = True
    while changed:
        grown = {m for m, deps in imports.items() if deps & affected and not by_name[m].pinned}
        changed = not grown <= affected
        affected |= grown
    affected.discard(name)
    return [by_name[m] for m in _topological(sorted(affected), imports)]


def _topological(names: Iterable[str], imports: dict) -> list[str]:
    names = list(names)
    wanted, done, order = set(names), set(), []

    def visit(n: str, stack: frozenset) -> None:
        if n in done or n in stack:
            return
        for dep in sorted(imports[n] & wanted):
            visit(dep, stack | {n})
        done.add(n)
        order.append(n)

    for n in names:
        visit(n, frozenset())
    return order
