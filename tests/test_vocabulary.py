"""The harness and the implementations share one vocabulary (`frontier_harness.model.vocabulary`).

No action name or observation label is written as a string literal in both
properties/ and spark_impl/ where a history or an observation is built or read:
each side names it from the vocabulary, so a word renamed on one side cannot
silently stop matching the other.
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
    """String constants of `tree`'s modules written where a history or an observation is read or built,
    each with where it is written (`_contract_positions`)."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / tree).rglob("*.py")):
        for node in _contract_positions(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.setdefault(node.value, set()).add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def _contract_positions(module: ast.Module) -> list[ast.expr]:
    """The expressions that name a word of the contract: an action's name and its argument keys
    (`Action(name, {key: ...})`), what an action's name or a word is compared with, a key read from
    `args`, and the label of an observation key `(step, label)`. A DataFrame column's name (an
    argument of a Spark call) is the implementation's own and is not among them."""
    found: list[ast.expr] = []
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Action" and node.args:
            found.append(node.args[0])
            if len(node.args) > 1 and isinstance(node.args[1], ast.Dict):
                found += [k for k in node.args[1].keys if k is not None]
        elif isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += (
                    list(operand.elts) if isinstance(operand, ast.Tuple | ast.Set | ast.List) else [operand]
                )
        elif isinstance(node, ast.Subscript) and _is_args(node.value):
            found.append(node.slice)
        elif (
            isinstance(node, ast.Tuple) and len(node.elts) == 2 and not isinstance(node.elts[0], ast.Constant)
        ):
            found.append(node.elts[1])
    return found


def _is_args(value: ast.expr) -> bool:
    return getattr(value, "attr", None) == "args" or getattr(value, "id", None) == "args"


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


def test_contract_positions_are_the_words_and_not_spark_columns():
    source = """
if action.name == "update":
    observed[(step, "read")] = args["time"]
history = Action("compact", {"since": ()})
frame.groupBy("data").agg(F.col("diff"))
"""
    names = {n.value for n in _contract_positions(ast.parse(source)) if isinstance(n, ast.Constant)}
    assert names == {"update", "read", "time", "compact", "since"}
