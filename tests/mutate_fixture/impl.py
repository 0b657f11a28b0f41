"""The tiny implementation under test: `observe_tiny` answers each history with `tiny.latest_before`.

It binds `latest_before` with `from ... import`, as real pipelines do, so a mutant
of `tiny` reaches it only if `mutate` re-executes this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.properties.engine.implementation import Implementation

from .tiny import latest_before


class TinyImplementation(Implementation):
    """Per history: the latest added time at or before the read's bound."""

    name = "tiny"

    def observe_tiny(self, domain: Any, histories: Sequence[Any]) -> list[dict]:
        return [{(len(h.actions), "latest"): as_set(latest_before(*times_and_bound(h)))} for h in histories]


def times_and_bound(history: Any) -> tuple[list, int]:
    """The `add` actions' times and the last `read`'s bound."""
    times = [a.args["time"] for a in history.actions if a.name == "add"]
    bound = [a.args["bound"] for a in history.actions if a.name == "read"][-1]
    return times, bound


def as_set(value: Any) -> frozenset:
    """An observation's value is a set of plain values: `{latest}`, or `{}` for None."""
    return frozenset() if value is None else frozenset({value})


def factory() -> TinyImplementation:
    return TinyImplementation()


class OffByOne(TinyImplementation):
    """Broken before any mutant: answers one past the latest time (its baseline fails)."""

    def observe_tiny(self, domain: Any, histories: Sequence[Any]) -> list[dict]:
        answers = super().observe_tiny(domain, histories)
        return [{key: frozenset(v + 1 for v in value) for key, value in a.items()} for a in answers]


def off_by_one() -> OffByOne:
    return OffByOne()
