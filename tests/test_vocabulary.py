"""The harness and the implementations share one vocabulary (`frontier_harness.model.vocabulary`).

No action name or observation label is written as a string literal in both
properties/ and spark_impl/: each side names it from the vocabulary, so a word
renamed on one side cannot silently stop matching the other.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from enum import EnumType
from pathlib import Path

from frontier_harness.model import vocabulary
from frontier_harness.model.vocabulary import Word

ROOT = Path(__file__).resolve().parents[1]


def _words() -> dict[str, set[str]]:
    """Every action name and observation label, by the enum that names it."""
    found: dict[str, set[str]] = {}
    for info in pkgutil.iter_modules(vocabulary.__path__):
        module = importlib.import_module(f"{vocabulary.__name__}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, EnumType) and issubclass(value, Word) and name.endswith(("Action", "Label")):
                found[f"{info.name}.{name}"] = {str(member) for member in value}
    return found


def _literals(tree: str) -> dict[str, set[str]]:
    """String constants of `tree`'s modules (docstrings aside), each with where it is written."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / tree).rglob("*.py")):
        module = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(module) if _has_docstring(node)}
        for node in ast.walk(module):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                out.setdefault(node.value, set()).add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    return (
        isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and bool(body)
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    )


def test_every_capability_has_its_words():
    assert {name.split(".")[0] for name in _words()} >= {"time", "ttl"}


def test_no_action_name_or_label_is_a_literal_on_both_sides():
    harness, implementation = _literals("properties"), _literals("spark_impl")
    both = {
        f"{enum} {word!r}: {sorted(harness[word])[:2]} and {sorted(implementation[word])[:2]}"
        for enum, words in _words().items()
        for word in words
        if word in harness and word in implementation
    }
    assert not both, "\n".join(sorted(both))
