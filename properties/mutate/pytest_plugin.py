"""The test process's side of `mutate --tests`: the mutant served to every import of its module, and
what the process observed, written where the parent reads it.

Loaded with `-p` before any test or conftest is imported. With `FRONTIER_HARNESS_MUTANT` set (the
mutant as JSON), a finder first in `sys.meta_path` serves the mutated source for its module. With
`FRONTIER_HARNESS_MUTATE_TRACE` set (the baseline), a `LineTracer` records the lines run in the
target's files. Either way, at the end the process writes `<pid>.json` into `FRONTIER_HARNESS_MUTATE_OUT`:
whether the mutated module was loaded (a survivor rests on it), the lines traced, and why the mutant
could not be applied (its module was imported before this plugin): the parent reads all three.

>>> import ast
>>> finder = MutantFinder("fh_plugin_demo", Path("demo.py"), compile(ast.parse("X = 2"), "demo.py", "exec"))
>>> import importlib; sys.meta_path.insert(0, finder)
>>> importlib.import_module("fh_plugin_demo").X, finder.loaded
(2, True)
>>> _ = sys.meta_path.remove(finder), sys.modules.pop("fh_plugin_demo")
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

MUTANT_ENV = "FRONTIER_HARNESS_MUTANT"
TRACE_ENV = "FRONTIER_HARNESS_MUTATE_TRACE"
OUT_ENV = "FRONTIER_HARNESS_MUTATE_OUT"


class MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `code` as module `name` (its file `path`); `loaded` says whether anything imported it."""

    def __init__(self, name: str, path: Path, code: CodeType, is_package: bool = False):
        self.name, self.path, self.code, self.is_package = name, path, code, is_package
        self.loaded = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        locations = [str(self.path.parent)] if self.is_package else None
        return importlib.util.spec_from_file_location(
            fullname, self.path, loader=self, submodule_search_locations=locations
        )

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        self.loaded = True
        exec(self.code, module.__dict__)


class _Observed:
    """What this process reports to the parent at exit."""

    def __init__(self) -> None:
        self.finder: MutantFinder | None = None
        self.tracer: Any = None
        self.error = ""

    def start(self) -> None:
        if os.environ.get(TRACE_ENV):
            from frontier_harness.properties.mutate.reach import LineTracer

            self.tracer = LineTracer(json.loads(os.environ[TRACE_ENV])).__enter__()
        if os.environ.get(MUTANT_ENV):
            self._apply(json.loads(os.environ[MUTANT_ENV]))

    def _apply(self, spec: dict) -> None:
        from frontier_harness.properties.mutate.mutants import Mutant, mutated_tree
        from frontier_harness.properties.mutate.sources import load_module

        module = load_module(spec["module"], Path(spec["path"]), spec["is_package"])
        if module.name in sys.modules:
            self.error = f"{module.name} was imported before the mutant could be served"
            return
        tree = mutated_tree(module, Mutant(**spec["mutant"]))
        code = compile(tree, str(module.path), "exec")
        self.finder = MutantFinder(module.name, module.path, code, module.is_package)
        sys.meta_path.insert(0, self.finder)

    def write(self) -> None:
        if self.tracer is not None:
            self.tracer.__exit__(None, None, None)
        out = os.environ.get(OUT_ENV)
        if not out:
            return
        report = {
            "loaded": bool(self.finder and self.finder.loaded),
            "error": self.error,
            "lines": sorted(self.tracer.lines) if self.tracer is not None else [],
        }
        Path(out, f"{os.getpid()}.json").write_text(json.dumps(report))


_OBSERVED = _Observed()
_OBSERVED.start()


def pytest_unconfigure(config: Any) -> None:
    _OBSERVED.write()
