"""The words the harness and the implementations share: action names, argument keys, observation labels.

A history is plain data, a domain name and a list of actions, each a name and its
arguments; an implementation answers it with observations keyed by labels. The
harness (properties/) writes these words and every implementation (spark_impl/,
pandas_impl/, a user's) reads them, so each is named once, here, in the lowest
layer, one module per capability (`time`, `reclocking`, `ingestion`, `streaming`, `event_time`, `catalog`,
`ttl`). Each word is a `StrEnum` member: it equals and hashes as its string, so a
history read back from an ITF file (plain strings) matches it.

>>> Arg.TIME == "time" and hash(Arg.TIME) == hash("time")
True
>>> {"time": 3}[Arg.TIME]
3
>>> (3, Arg.TIME)  # shown as its string, so a report reads as before
(3, 'time')

`HistoryLike` is what an implementation is handed: any value with a `domain` name
and `actions` of `name` and `args` (the harness's `History` is one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Protocol, TypeVar


class MalformedHistory(ValueError):
    """A history whose actions the capability's words do not name, or that lack an argument: names the
    history kind, the step and the action. Raised by a capability's decoding, on either side of the
    boundary, it is the history's fault, never an implementation's (the harness reports it as bad input).

    >>> str(MalformedHistory("reclock", 3, "dance"))
    "reclock history: unknown action 'dance' at step 3"
    """

    def __init__(self, kind: str, step: int, action: str, problem: str = "unknown action"):
        self.kind, self.step, self.action = kind, step, action
        super().__init__(f"{kind} history: {problem} {action!r} at step {step}")


class Word(StrEnum):
    """A name shared across the boundary: a string, shown as one (`repr` is the string's)."""

    def __repr__(self) -> str:
        return repr(self.value)


class Arg(Word):
    """Argument keys every capability uses; the harness encodes times under these keys by domain."""

    DATA = "data"
    DIFF = "diff"
    TIME = "time"
    READ_TIME = "read_time"
    FROM_TIME = "from_time"
    INTO_TIME = "into_time"
    SINCE = "since"
    FRONTIER = "frontier"
    UPPER = "upper"
    UNTIL = "until"


# Keys whose value is one time of the history's domain, and those whose value is a frontier (times).
TIME_ARGS = frozenset({Arg.TIME, Arg.READ_TIME, Arg.FROM_TIME, Arg.INTO_TIME})
FRONTIER_ARGS = frozenset({Arg.SINCE, Arg.FRONTIER, Arg.UPPER, Arg.UNTIL})


class ActionLike(Protocol):
    """One step of a history: an action name and its arguments."""

    @property
    def name(self) -> str: ...

    @property
    def args(self) -> Mapping[str, Any]: ...


class HistoryLike(Protocol):
    """A history as an implementation receives it: its domain's name and its actions, in order."""

    @property
    def domain(self) -> str: ...

    @property
    def actions(self) -> Sequence[ActionLike]: ...


Step = TypeVar("Step")
Decoder = Callable[[int, Mapping[str, Any]], Step]


def decoded(kind: str, history: HistoryLike, decoders: Mapping[str, Decoder[Step]]) -> tuple[Step, ...]:
    """Each action of `history` as the value its name's decoder makes of `(step, args)`: a capability's
    one reading of its histories, which its model and its implementations share (so an action is added
    in one place). `MalformedHistory` names an action no decoder knows, or an argument one needs.

    >>> from types import SimpleNamespace as A
    >>> history = A(domain="total", actions=[A(name="tick", args={"at": 3})])
    >>> decoded("clock", history, {"tick": lambda step, args: (step, args["at"])})
    ((0, 3),)
    >>> try:
    ...     decoded("clock", history, {"tick": lambda step, args: args["ms"]})
    ... except MalformedHistory as bad:
    ...     print(bad)
    clock history: missing argument 'ms' of 'tick' at step 0
    """
    steps = []
    for step, action in enumerate(history.actions):
        decode = decoders.get(action.name)
        if decode is None:
            raise MalformedHistory(kind, step, action.name)
        try:
            steps.append(decode(step, action.args))
        except KeyError as missing:
            problem = f"missing argument {missing.args[0]!r} of"
            raise MalformedHistory(kind, step, action.name, problem) from None
    return tuple(steps)
