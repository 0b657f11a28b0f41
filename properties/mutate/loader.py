"""One mutant in memory: the mutated module executed fresh, its dependents re-executed, then undone.

Inside `activated(...)`, `sys.modules` holds a new module object built from the
mutated tree and new module objects for every module that imports it (in
dependency order), so `from x import f` in a dependent binds the mutant's `f`.
Nothing on disk changes and the original module objects are never touched:
leaving the block puts them back, and drops any module of the target (`owned`)
that was first imported inside the block (it may have bound the mutant).

>>> import ast, types
>>> from pathlib import Path
>>> from frontier_harness.properties.mutate.sources import SourceModule
>>> m = SourceModule("fh_loader_demo", Path("demo.py"), "X = 1")
>>> sys.modules["fh_loader_demo"] = types.ModuleType("fh_loader_demo")
>>> with Loader(frozenset({"fh_loader_demo"})).activated(m, ast.parse("X = 2"), []):
...     sys.modules["fh_loader_demo"].X
2
>>> hasattr(sys.modules.pop("fh_loader_demo"), "X")
False
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import CodeType, ModuleType

from frontier_harness.properties.mutate.sources import SourceModule


class ImportFailed(Exception):
    """A mutant whose module (or a dependent) raised while executing: every suite would fail."""


class Loader:
    """Swaps modules in and out of `sys.modules`; caches each unmutated module's compiled code."""

    def __init__(self, owned: frozenset) -> None:
        self.owned = owned
        self._codes: dict[str, CodeType] = {}

    @contextmanager
    def activated(
        self, module: SourceModule, tree: ast.Module, dependents: Sequence[SourceModule]
    ) -> Iterator[None]:
        """`module` from `tree`, and `dependents` re-executed, for the block; raises `ImportFailed`."""
        names = {module.name, *(d.name for d in dependents)}
        before = {name: sys.modules.get(name) for name in names}
        loaded = set(sys.modules)
        try:
            self._execute(module, compile(tree, str(module.path), "exec"))
            for dependent in dependents:
                self._execute(dependent, self._code(dependent))
            yield
        finally:
            for name, original in before.items():
                _install(name, original)
            for name in (set(sys.modules) - loaded) & self.owned:
                _install(name, None)

    def _code(self, module: SourceModule) -> CodeType:
        if module.name not in self._codes:
            self._codes[module.name] = compile(module.source, str(module.path), "exec")
        return self._codes[module.name]

    def _execute(self, module: SourceModule, code: CodeType) -> None:
        spec = importlib.util.spec_from_file_location(
            module.name,
            module.path,
            submodule_search_locations=[str(module.path.parent)] if module.is_package else None,
        )
        assert spec is not None, module.path
        fresh = importlib.util.module_from_spec(spec)
        _install(module.name, fresh)
        try:
            exec(code, fresh.__dict__)
        except Exception as exc:
            raise ImportFailed(f"{module.name}: {type(exc).__name__}: {exc}") from exc
        if module.is_package:
            for name, loaded in list(sys.modules.items()):
                if name.rpartition(".")[0] == module.name and loaded is not None:
                    setattr(fresh, name.rpartition(".")[2], loaded)


def _install(name: str, module: ModuleType | None) -> None:
    """`module` as `sys.modules[name]` and as its parent package's attribute (None: removed)."""
    parent_name, _, child = name.rpartition(".")
    parent = sys.modules.get(parent_name) if parent_name else None
    if module is None:
        sys.modules.pop(name, None)
        if parent is not None and hasattr(parent, child):
            delattr(parent, child)
        return
    sys.modules[name] = module
    if parent is not None:
        setattr(parent, child, module)
