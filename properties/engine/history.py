"""A history is plain data: a domain name and a list of actions with JSON-able arguments.

Times inside arguments are stored decoded (model values); `to_json`/`from_json`
go through the domain's `encode`/`decode`, so a history written to a file reads
back equal.

>>> h = History("total", (Action("update", {"data": "a", "time": 3, "diff": 1}),))
>>> History.from_json("total", h.to_json()) == h
True
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from frontier_harness.model.time.domains import Domain, parse_domain
from frontier_harness.model.vocabulary import FRONTIER_ARGS, TIME_ARGS
from frontier_harness.properties.engine.errors import BadHistory

__all__ = ["FRONTIER_ARGS", "TIME_ARGS", "Action", "History"]


@attrs.frozen
class Action:
    """One step: an action name and its arguments."""

    name: str
    args: dict[str, Any] = attrs.field(factory=dict)


def _actions(actions: Iterable[Action]) -> tuple[Action, ...]:
    return tuple(actions)


@attrs.frozen
class History:
    """A domain name and the actions, in order."""

    domain: str
    actions: tuple[Action, ...] = attrs.field(converter=_actions)

    @property
    def time_domain(self) -> Domain:
        return parse_domain(self.domain)

    def without(self, indices: Iterable[int]) -> History:
        """The history with the actions at `indices` removed (for reduction)."""
        drop = set(indices)
        return History(self.domain, tuple(a for i, a in enumerate(self.actions) if i not in drop))

    def to_json(self) -> list[dict[str, Any]]:
        """The actions as JSON-able records, times encoded by the domain."""
        domain = self.time_domain
        return [{"action": a.name, "args": encode_args(domain, a.args)} for a in self.actions]

    @functools.cached_property
    def key(self) -> str:
        """The history as one string, its domain and its actions: equal histories, equal keys (what a memo
        of observations is keyed by); made once per history object.

        >>> History("total", (Action("read", {"time": 2}),)).key
        '["total", [{"action": "read", "args": {"time": 2}}]]'
        """
        return json.dumps([self.domain, self.to_json()], sort_keys=True, default=repr)

    @classmethod
    def from_json(cls, domain_name: str, records: Any) -> History:
        """Inverse of `to_json`; a typed `BadHistory` naming the offending record."""
        domain = parse_domain(domain_name)
        actions = []
        for i, record in enumerate(_as_list(records, "actions")):
            if not isinstance(record, dict) or not isinstance(record.get("action"), str):
                raise BadHistory(f"action {i} is not a record with an 'action' name: {record!r}")
            actions.append(Action(record["action"], decode_args(domain, record.get("args", {}), i)))
        return cls(domain_name, tuple(actions))


def _as_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise BadHistory(f"{what} must be a list, got {value!r}")
    return value


def encode_args(domain: Domain, args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments with times encoded for JSON."""
    return {k: _encode_arg(domain, k, v) for k, v in args.items()}


def _encode_arg(domain: Domain, key: str, value: Any) -> Any:
    if key in TIME_ARGS:
        return domain.encode(value)
    if key in FRONTIER_ARGS and value is not None:
        return [domain.encode(t) for t in value]
    return value


def decode_args(domain: Domain, args: Any, index: int) -> dict[str, Any]:
    """Arguments with times decoded and validated; a typed error naming the action."""
    if not isinstance(args, dict):
        raise BadHistory(f"action {index}: args must be a record, got {args!r}")
    try:
        return {k: _decode_arg(domain, k, v) for k, v in args.items()}
    except (ValueError, TypeError) as exc:
        raise BadHistory(f"action {index}: {exc}") from exc


def _decode_arg(domain: Domain, key: str, value: Any) -> Any:
    if key in TIME_ARGS:
        return domain.decode(value)
    if key in FRONTIER_ARGS and value is not None:
        return tuple(domain.decode(t) for t in _as_list(value, key))
    return value
