"""Suites and properties: plain functions over an implementation, checked in batches.

A `Property` draws one history from a `Source` and checks a *batch* of them
against an implementation, returning one `Outcome` per history. A
`differential` property compares an implementation's observations with the
model's; a law checks the implementation's own algebra. A `Suite` groups
properties, names the domains they run over, and lists the hard cases its
generator must reach (counted from `Property.events`).
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import attrs

from frontier_harness.model.errors import ModelError
from frontier_harness.model.time.domains import DOMAIN_NAMES
from frontier_harness.properties.engine.diagnostics import called, describe
from frontier_harness.properties.engine.errors import (
    ContractViolation,
    UnknownSuite,
    UnsupportedImplementation,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Observation
from frontier_harness.properties.engine.shrink import MIN_BATCH
from frontier_harness.properties.engine.source import Source

# A check returns one outcome per history: a list, or `trials.Trials` when it hands them over one by one as
# each trial ends (a real query each).
Check = Callable[[Implementation, Sequence[History]], Sequence["Outcome"]]
# A suite's `shrink_calls` at a batched cost of 1: the planted-bug tests' shrinks took at most 148 calls.
SHRINK_CALLS, FEWEST_SHRINK_CALLS = 300, 8


@attrs.frozen
class Outcome:
    """The verdict on one history; `step` is the first action where the two sides diverge.

    `rejected` marks a history the model rejected as bad input. A generated
    history is valid by construction, so that is a failure (the generator and
    the model disagree) unless the property draws bad input on purpose; then it
    holds when the implementation rejected it with an error of the same kind.
    """

    ok: bool
    message: str = ""
    expected: Any = None
    actual: Any = None
    step: int | None = None
    rejected: bool = False
    # The model (or the suite's own code) could not judge the history: a generator/model disagreement.
    disagreement: bool = False
    # The implementation raised: its traceback cut to its own frames (`file:line in function: source`).
    trace: tuple[str, ...] = ()
    # Not checked: after a failure in its batch (`batch.UNCHECKED`); never a verdict either way.
    unresolved: bool = False
    # The other histories it fails only together with, in one call (they interfere: `batch`); its
    # counterexample holds them all.
    together: tuple[History, ...] = ()
    # The exception itself (the implementation's, or the model's on a history it cannot read).
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    # The hard cases the implementation's observation showed this history reach (a trial suite's: the
    # crash seen, the batch re-run, the late row in the offset log); None: the lanes count them from the
    # history with `Property.events`.
    reached: tuple[str, ...] | None = None

    @classmethod
    def model_rejected(cls, error: ModelError) -> Outcome:
        """A generated history the model rejects: the generator and the model disagree (a failure).

        >>> from frontier_harness.model.errors import InvalidTime
        >>> Outcome.model_rejected(InvalidTime("total", -1, "negative")).ok
        False
        """
        return cls(
            ok=False,
            rejected=True,
            disagreement=True,
            message=f"generator/model disagreement: the model rejected a generated history: {error}",
            expected=_refusal(error),
            error=error,
        )

    @classmethod
    def model_raised(cls, error: BaseException) -> Outcome:
        """The harness side (the model, the suite's code) raised on a history: it cannot judge it.

        On a generated history that is a generator/model disagreement; on a history read from a
        file (an unknown action, a missing argument) the file is not a valid history.

        >>> Outcome.model_raised(KeyError("time")).message
        "generator/model disagreement: the model raised KeyError: 'time'"
        """
        return cls(
            ok=False,
            rejected=True,
            disagreement=True,
            message=f"generator/model disagreement: the model raised {describe(error)}",
            error=error,
        )

    @classmethod
    def implementation_raised(cls, error: BaseException, trace: tuple[str, ...]) -> Outcome:
        """The implementation raised on a valid history: a failure, with its own frames of the traceback.

        >>> Outcome.implementation_raised(KeyError(0), ("impl.py:3 in observe",)).message
        'implementation raised KeyError: 0'
        """
        return cls(
            ok=False, message=f"implementation raised {describe(error)}", step=0, trace=trace, error=error
        )

    @classmethod
    def implementation_rejected(cls, error: ModelError) -> Outcome:
        """The implementation refused a generated (valid) history with a typed error: a failure."""
        return cls(
            ok=False,
            message=f"the implementation rejected a generated history: {error}",
            actual=_refusal(error),
            step=0,
        )

    @classmethod
    def both_rejected(cls, model_error: ModelError, answer: Any) -> Outcome:
        """Bad input drawn on purpose: holds iff the implementation rejected it with the same kind of error.

        >>> from frontier_harness.model.errors import InvalidTime
        >>> bad = InvalidTime("total", -1, "negative")
        >>> Outcome.both_rejected(bad, bad).ok
        True
        """
        expected = _refusal(model_error)
        actual = _refusal(answer) if isinstance(answer, ModelError) else answer
        if expected == actual:
            return cls(ok=True, rejected=True, message=f"both rejected it: {model_error}")
        return cls(
            ok=False,
            rejected=True,
            expected=expected,
            actual=actual,
            step=0,
            message=f"the model rejected the history with {type(model_error).__name__} ({model_error}); "
            f"the implementation {_answered(answer)}",
        )


def _answered(answer: Any) -> str:
    return f"rejected it with {type(answer).__name__}" if isinstance(answer, ModelError) else "accepted it"


def _refusal(error: ModelError) -> Observation:
    """An error as an observation (so a counterexample shows it): its kind at the history's start."""
    return {(0, "rejected"): frozenset({(type(error).__name__,)})}


class Reference(enum.Enum):
    """What a property holds an implementation's answer against.

    Every kind but `MODEL` is independent of the model, so it judges the model
    too (the default run checks the model against it in process); `MODEL`, the
    model's own answer, judges every other implementation and never the model.

    >>> Reference.ORACLE.independent, Reference.MODEL.independent
    (True, False)
    """

    ORACLE = "oracle"  # the seed's rule restated apart from the model (properties/oracles/, or the suite)
    LAWS = "laws"  # laws the answers obey among themselves (an algebra; a restart equals the run)
    INTRINSIC = "intrinsic"  # computed from the observation itself (reads with and without expiration)
    MODEL = "model"  # the model's own answer

    @property
    def independent(self) -> bool:
        return self is not Reference.MODEL


@attrs.frozen
class HistoryDraw:
    """A property's draw of one history, `function(source, domain, *args, kill=kill)`, as a value: two
    properties whose draws are equal draw the same history from the same choices, so a trial one of them
    runs is a trial of the other (`runner._peers`: under `--fail-fast` each trial is judged by both).

    >>> def draw(source, domain, plan, kill=False):
    ...     return History(domain, ())
    >>> HistoryDraw(draw, ("plan",)) == HistoryDraw(draw, ("plan",)) != HistoryDraw(draw, ("plan",), kill=True)
    True
    >>> HistoryDraw(draw, ("plan",))(None, "total")
    History(domain='total', actions=())
    """

    function: Callable[..., History]
    args: tuple[Any, ...] = ()
    kill: bool = False

    def __call__(self, source: Source, domain: str) -> History:
        return self.function(source, domain, *self.args, kill=self.kill)


@attrs.frozen
class Property:
    """One property: how to draw a history, how to check a batch, which hard cases it hit."""

    name: str
    doc: str
    # A `HistoryDraw` where other properties of the suite draw the same histories (trial suites' peers).
    draw: Callable[[Source, str], History]
    check: Check
    # The hard cases a history reaches, when the history alone says so (a model's run); a check whose
    # outcomes carry `Outcome.reached` (a trial suite's) counts from what it observed instead.
    events: Callable[[History], Iterable[str]] = lambda history: ()
    # The profiles it runs in; empty means every profile (a property too slow for ci names thorough).
    profiles: tuple[str, ...] = ()
    # What it compares with; None: the suite's `reference`.
    reference: Reference | None = None
    # None when it applies to an implementation; else why not (its verdict is then "not applicable",
    # `frontier_harness.properties.engine.verdict`): a window law asked of an update-mode job.
    applies: Callable[[Implementation], str | None] = lambda impl: None
    # Histories a run checks before any it draws at random, each directed at one required hard case of
    # the suite (`required_events`): event -> a draw of a small history that reaches it, so a run of a
    # few histories (`dev`) reaches every hard case by construction (`runner.directed_lane`).
    directed: Mapping[str, Callable[[Source, str], History]] = attrs.field(factory=dict)

    def runs_in(self, profile_name: str) -> bool:
        return not self.profiles or profile_name in self.profiles

    def not_applicable(self, impl: Implementation) -> str | None:
        """Why this property does not apply to `impl`, or None when it does (`applies`).

        >>> windows = Property("complete_windows", "", None, None, applies=lambda impl: impl.mode != "append" and "update mode: no window is final")
        >>> from types import SimpleNamespace as Impl
        >>> windows.not_applicable(Impl(mode="update")), windows.not_applicable(Impl(mode="append"))
        ('update mode: no window is final', None)
        """
        return self.applies(impl) or None


@attrs.frozen
class Suite:
    """Properties run over `domains` against an implementation (`default_impl` unless told).

    `calls` names the implementation methods the properties call (by default the
    suite's observer, `observe_<name>`); a suite with `calls=()` checks the
    model's own laws and runs against the model only. `reference` declares what
    the properties compare with: a property whose reference is independent of the
    model judges the model too, in the default run.
    """

    name: str
    doc: str
    properties: tuple[Property, ...]
    default_impl: str
    required_events: tuple[str, ...] = ()
    domains: tuple[str, ...] = DOMAIN_NAMES
    event_domains: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    # Against an implementation other than the model, example counts are divided by this
    # (a suite whose every history costs several Spark jobs sets it > 1).
    batched_cost: float = 1.0
    # Candidates one shrinking call checks (`shrink.MIN_BATCH`): fewer where a history is a slow trial, so
    # the shrink budget is checked often enough to be kept.
    shrink_batch: int = MIN_BATCH
    # Implementation calls shrinking one failure may make under a profile that shrinks by calls (`ci`,
    # `frontier_harness.properties.engine.budget`): the same on any machine, so the same file. By default
    # SHRINK_CALLS divided by `batched_cost` (a call of a costly suite is seconds), never below a few.
    shrink_calls: int = attrs.field(
        default=attrs.Factory(
            lambda suite: max(FEWEST_SHRINK_CALLS, round(SHRINK_CALLS / suite.batched_cost)), takes_self=True
        )
    )
    # A call runs Spark jobs or queries one after another (trials, pipeline rounds), not one batched job: in
    # a run of several suites, such a suite runs in the second process (`frontier_harness.properties.cli.background`).
    serial_jobs: bool = False
    calls: tuple[str, ...] = attrs.field()

    # What its properties compare with, unless a property names its own (`Property.reference`).
    reference: Reference = Reference.MODEL

    @calls.default
    def _observer(self) -> tuple[str, ...]:
        return (f"observe_{self.name}",)

    def required_in(self, domains: Sequence[str]) -> tuple[str, ...]:
        """The hard cases a run over `domains` must reach (some exist only in some domains)."""
        return tuple(
            e for e in self.required_events if set(self.event_domains.get(e, domains)) & set(domains)
        )

    def for_implementation(self, impl: Implementation) -> Suite:
        """The suite as it runs against `impl`: itself, unless its histories depend on what `impl` is (the
        stateful suite's, scaled to a job's plan, `JobSuite`)."""
        return self

    def property(self, name: str) -> Property:
        """The property called `name`; a typed error listing the suite's properties."""
        for prop in self.properties:
            if prop.name == name:
                return prop
        raise UnknownSuite(
            f"suite {self.name!r} has no property {name!r}: {[p.name for p in self.properties]}"
        )

    def unsupported(self, impl: Implementation, impl_name: str) -> str | None:
        """Why this suite cannot run against `impl`, or None when it can.

        >>> from frontier_harness.properties.engine.implementation import Implementation
        >>> class Empty(Implementation):
        ...     name = "empty"
        >>> Suite("s", "", (), "spark").unsupported(Empty(), "pkg:empty")
        "suite 's' calls observe_s, which 'pkg:empty' lacks"
        """
        if not self.calls:
            return None if impl.name == "model" else f"suite {self.name!r} checks the model's own laws only"
        missing = [m for m in self.calls if not callable(getattr(impl, m, None))]
        if missing:
            return f"suite {self.name!r} calls {', '.join(missing)}, which {impl_name!r} lacks"
        return None

    def require(self, impl: Implementation, impl_name: str) -> None:
        """Raises `UnsupportedImplementation` (exit 2) when this suite cannot run against `impl`."""
        reason = self.unsupported(impl, impl_name)
        if reason is not None:
            raise UnsupportedImplementation(reason)


def compare(expected: Observation, actual: Observation) -> Outcome:
    """Equal observations hold; otherwise the earliest differing `(step, label)` is the divergence.

    >>> compare({(0, "read"): {1}}, {(0, "read"): {2}}).step
    0
    """
    if expected == actual:
        return Outcome(ok=True)
    differing = sorted(k for k in set(expected) | set(actual) if expected.get(k) != actual.get(k))
    step, label = differing[0]
    return Outcome(
        ok=False,
        message=f"{label} at step {step}: model {_show(expected.get(step_label := (step, label)))} "
        f"!= implementation {_show(actual.get(step_label))}",
        expected=expected,
        actual=actual,
        step=step,
    )


def _show(value: Any) -> str:
    """An observed value as the failure message shows it: a set's rows sorted, anything else as it is (an
    implementation's value of another type is its wrong answer, never an error of the harness's).

    >>> _show(frozenset({("b", 1), ("a", 2)})), _show([("a", 2)]), _show(5), _show(None)
    ("{('a', 2), ('b', 1)}", "[('a', 2)]", '5', '(nothing)')
    """
    if value is None:
        return "(nothing)"
    try:
        if isinstance(value, (set, frozenset)):
            return "{" + ", ".join(sorted(map(repr, value))) + "}"
        return repr(value)
    except Exception as exc:  # a user's value whose repr raises
        return f"<a {type(value).__name__} whose repr raised {type(exc).__name__}>"


def differential(
    model_observe: Callable[[History], Observation], impl_method: str, draws_invalid: bool = False
) -> Check:
    """A batched check: the implementation's `impl_method(domain, histories)` against the model.

    A history the model rejects fails as a generator/model disagreement, unless
    the property `draws_invalid` on purpose: then the implementation must reject
    it with an error of the same kind.
    """

    def check(impl: Implementation, histories: Sequence[History]) -> list[Outcome]:
        expected = [model_or_error(model_observe, h) for h in histories]
        valid = [h for h, e in zip(histories, expected) if not isinstance(e, ModelError)]
        observed = iter(observations(impl, impl_method, valid))
        invalid = [h for h, e in zip(histories, expected) if isinstance(e, ModelError)]
        refused = iter(observe_or_reject(impl, impl_method, invalid) if draws_invalid and invalid else [])
        return [
            compare(e, next(observed))
            if not isinstance(e, ModelError)
            else Outcome.both_rejected(e, next(refused))
            if draws_invalid
            else Outcome.model_rejected(e)
            for e in expected
        ]

    return check


def model_or_error(model_observe: Callable[[History], Observation], history: History) -> Any:
    """The model's observation of `history`, or the `ModelError` it rejected it with; made once per suite
    run (`shared_observations`), as an implementation's are."""
    memo, key = _memo(model_observe), ("model", history.key)
    if key not in memo:
        try:
            memo[key] = model_observe(history)
        except ModelError as error:
            memo[key] = error
    return memo[key]


def events_of(events: Callable[[History], Iterable[str]], history: History) -> list[str]:
    """`events(history)`, the hard cases a history reaches: computed once per suite run (`shared_observations`)
    for every property that counts them with the same function, as observations are.

    >>> seen = []
    >>> def hard(h):
    ...     seen.append(h)
    ...     return ["empty"]
    >>> with shared_observations():
    ...     _ = events_of(hard, History("total", ())), events_of(hard, History("total", ()))
    >>> len(seen)
    1
    """
    memo, key = _memo(events), ("events", history.key)
    if key not in memo:
        memo[key] = list(events(history))
    return memo[key]


def observe_or_reject(
    impl: Implementation, method: str, histories: Sequence[History]
) -> Sequence[Observation | ModelError]:
    """The implementation's observation of each history, or the `ModelError` it rejected it with.

    One batched call; a rejected batch is split in halves, each checked in one call, and only a
    rejected half is split again, so a few rejected histories among many cost a few calls each
    (about 2*log2(n)), not one call per history.
    """
    try:
        return observations(impl, method, histories)
    except ModelError as error:
        if len(histories) == 1:
            return [error]
    mid = len(histories) // 2
    return [
        *observe_or_reject(impl, method, histories[:mid]),
        *observe_or_reject(impl, method, histories[mid:]),
    ]


# The observations of one suite run (`shared_observations`): observer id -> (observer, memo), the observer
# an implementation or the model's observe function.
_SHARED: ContextVar[dict[int, tuple[object, dict[tuple[str, str], Any]]] | None] = ContextVar(
    "shared_observations", default=None
)


@contextmanager
def shared_observations() -> Iterator[None]:
    """For the duration (one suite run), an implementation's observation of a history is made once and
    shared by every property that checks it. The suite's properties screen with one seed, so those that
    draw with one strategy check the same histories: each pays one Spark job, not one a property.

    >>> calls = []
    >>> class Impl:
    ...     def observe_x(self, domain, histories):
    ...         calls.append(len(histories))
    ...         return [{} for _ in histories]
    >>> impl, hs = Impl(), [History("total", ())]
    >>> with shared_observations():
    ...     _ = observations(impl, "observe_x", hs), observations(impl, "observe_x", hs)
    ...     _ = observations(impl, "observe_x", [History("partitioned", ())])  # other times: observed anew
    >>> calls
    [1, 1]
    """
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def observations(impl: Implementation, method: str, histories: Sequence[History]) -> list[Observation]:
    """`impl.method`'s observation of each history (`checked_observations`), in batch order: one call per
    domain in the batch, for the histories not yet observed in this suite run (`shared_observations`), each
    once however often the batch holds it."""
    memo = _memo(impl)
    keys = [(method, h.key) for h in histories]
    first: dict[tuple[str, str], int] = {}  # each history not yet observed, at its first place in the batch
    for i, key in enumerate(keys):
        if key not in memo:
            first.setdefault(key, i)
    by_domain: dict[str, list[int]] = {}
    for i in first.values():
        by_domain.setdefault(histories[i].domain, []).append(i)
    for indices in by_domain.values():
        batch = [histories[i] for i in indices]
        answer = checked_observations(method, batch, called(impl, method, batch[0].time_domain, batch))
        memo.update((keys[i], observation) for i, observation in zip(indices, answer))
    return [memo[key] for key in keys]


def _memo(observer: object) -> dict[tuple[str, str], Any]:
    """`observer`'s memo in this suite run (a fresh one outside `shared_observations`); the run holds
    `observer`, so its id names it alone while the run lasts."""
    shared = _SHARED.get()
    return {} if shared is None else shared.setdefault(id(observer), (observer, {}))[1]


def checked_observations(method: str, batch: Sequence[History], answer: Any) -> list[Observation]:
    """`answer` when it is one observation per history of `batch` keyed by `(step, label)`; otherwise a
    `ContractViolation` naming `method`, what was expected and what came back.

    >>> checked_observations("observe_x", [], [])
    []
    >>> checked_observations("observe_x", [History("total", ())], [])
    Traceback (most recent call last):
    ...
    frontier_harness.properties.engine.errors.ContractViolation: contract violation: observe_x must return a list of one observation per history (1 histories); it returned a list of 0
    """
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Sequence):
        raise ContractViolation(
            method, f"a list of one observation per history ({len(batch)} histories)", _a(answer)
        )
    if len(answer) != len(batch):
        raise ContractViolation(
            method,
            f"a list of one observation per history ({len(batch)} histories)",
            f"a {type(answer).__name__} of {len(answer)}",
        )
    for i, observation in enumerate(answer):
        if not isinstance(observation, Mapping):
            raise ContractViolation(
                method, "a dict keyed by (step, label) for each history", f"{_a(observation)} for history {i}"
            )
        bad = next((k for k in observation if not _is_key(k)), None)
        if bad is not None:
            raise ContractViolation(
                method,
                "observations keyed by (step, label), an int and a str",
                f"the key {bad!r} in the observation of history {i}",
            )
    return [Observed(method, observation) for observation in answer]


class Observed(dict):
    """One history's observation, as an implementation's `method` returned it: a `(step, label)` a judge
    reads that it lacks is its contract broken (`ContractViolation` naming the method and the key), never a
    `KeyError` of the harness's judging, which a trial suite would report as a generator/model disagreement.
    A differential check compares with `get` (a label the model has and it lacks is a wrong answer).

    >>> observed = Observed("observe_x", {(0, "read"): {1}})
    >>> observed[(0, "read")], observed.get((1, "read")), observed == {(0, "read"): {1}}
    ({1}, None, True)
    >>> observed[(1, "commits")]
    Traceback (most recent call last):
    ...
    frontier_harness.properties.engine.errors.ContractViolation: contract violation: observe_x must return (1, 'commits') in the observation of every history whose judge reads it; it returned an observation without it
    """

    def __init__(self, method: str, observation: Mapping):
        super().__init__(observation)
        self.method = method

    def __missing__(self, key: Any) -> Any:
        raise ContractViolation(
            self.method,
            f"{key!r} in the observation of every history whose judge reads it",
            "an observation without it",
        )


def _is_key(key: Any) -> bool:
    return (
        isinstance(key, tuple)
        and len(key) == 2
        and isinstance(key[0], numbers.Integral)
        and not isinstance(key[0], bool)
        and isinstance(key[1], str)
    )


def _a(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"
