"""One mutant in memory: the mutated module executed fresh, its dependents re-executed, then undone.

Inside `activated(...)`, `sys.modules` holds a new module object built from the
mutated tree and new module objects for every module that imports it (in
dependency order), so `from x import f` in a dependent binds the mutant's `f`.
Modules outside the target that bound a name from a replaced module (`from
frontier_harness.model.time.collection import at` in a suite, the adapters) are not
re-executed, since the objects built from them (suites, probes) would keep the old
bindings: their attribute is rebound to the replacement for the block instead.
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
        rebound: list[tuple[ModuleType, str, object]] = []
        try:
            self._execute(module, compile(tree, str(module.path), "exec"))
            for dependent in dependents:
                self._execute(dependent, self._code(dependent))
            rebound = _rebind(_replacements(before), self.owned)
            yield
        finally:
            for target, attribute, original in rebound:
                setattr(target, attribute, original)
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


def _replacements(before: dict[str, ModuleType | None]) -> dict[int, tuple[object, object]]:
    """By `id` of each function or class a replaced module defined: (the original, its replacement)."""
    out: dict[int, tuple[object, object]] = {}
    for name, original in before.items():
        fresh = sys.modules.get(name)
        if original is None or fresh is None:
            continue
        for attribute, value in vars(original).items():
            if getattr(value, "__module__", None) == name and hasattr(fresh, attribute):
                out[id(value)] = (value, getattr(fresh, attribute))
    return out


def _rebind(
    replacements: dict[int, tuple[object, object]], owned: frozenset
) -> list[tuple[ModuleType, str, object]]:
    """Every attribute of a loaded module outside `owned` that is an original of `replacements`, set
    to its replacement; returns `(module, attribute, original)` to undo it."""
    undo: list[tuple[ModuleType, str, object]] = []
    for name, loaded in list(sys.modules.items()):
        if loaded is None or name in owned:
            continue
        for attribute, value in list(vars(loaded).items()):
            pair = replacements.get(id(value))
            if pair is not None and pair[0] is value:
                undo.append((loaded, attribute, value))
                setattr(loaded, attribute, pair[1])
    return undo


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
