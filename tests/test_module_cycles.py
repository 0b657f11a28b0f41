"""No two modules of the package import each other, directly or through others: every import counts, those
under `TYPE_CHECKING` and those inside functions included, across every package (model, spark_impl,
properties, pandas_impl, streaming_job_example and the facade, `frontier_harness/__init__.py`)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "spark_impl", "properties", "pandas_impl", "streaming_job_example")


def _modules(package: str, folder: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        out[".".join((package, *parts))] = path
    return out


def _imports(path: Path, known: set[str]) -> set[str]:
    """The known modules `path` imports anywhere in its body (`from p import m` names module `p.m`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                out |= {child} if child in known else {node.module} & known
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` as a path that ends where it starts, or None if it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*path, node])):
                return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [])):
            return cycle
    return None


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """Every module of the package, and the modules of the package it imports (read once a session)."""
    modules = {"frontier_harness": ROOT / "frontier_harness" / "__init__.py"}
    for package in PACKAGES:
        modules |= _modules(f"frontier_harness.{package}", ROOT / package)
    return {name: frozenset(_imports(path, set(modules)) - {name}) for name, path in modules.items()}


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    assert len(graph) > 200
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_a_planted_cycle_is_found(tmp_path):
    (tmp_path / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import B\n"
    )
    (tmp_path / "b.py").write_text("from p import c\n")
    (tmp_path / "c.py").write_text("def f():\n    from p.a import A\n")
    (tmp_path / "d.py").write_text("import p.a\n")
    modules = _modules("p", tmp_path)
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    assert find_cycle(graph) == ["p.a", "p.b", "p.c", "p.a"]
    del graph["p.c"], graph["p.b"]
    assert find_cycle({k: v - {"p.b", "p.c"} for k, v in graph.items()}) is None
