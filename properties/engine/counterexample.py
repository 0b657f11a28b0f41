"""Counterexamples as ITF JSON traces (the Informal Trace Format of Apalache and Quint).

One state per action (`step`, `action`, `args`); the trace's `#meta` names the
suite, property, domain, implementation, seed and lane, and records what the
model and the implementation said and the first divergent step. `itf-py` reads
and writes the values. Files are named by content, so the same failure found
twice writes the same file.

A failure only together (histories that interfere in one call:
`frontier_harness.properties.engine.batch`) is a group file: `#meta.format_version`
2, `#meta.histories` the number of actions of each history in order (history 0
carries the failure), and each state's `history` says whose action it is; `replay`
runs them in one call. A file of one history is format 1, unchanged.

An argument that is None is omitted from its record (ITF has no null).
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
from itf_py import State, Trace, trace_from_json, trace_to_json

from frontier_harness.properties.engine.errors import BadHistory, CounterexampleFormatError
from frontier_harness.properties.engine.history import History

FORMAT = "frontier-harness/counterexample"
FORMAT_VERSION = 1
GROUP_FORMAT_VERSION = 2  # several histories that fail only together, in one call
REQUIRED_META = ("suite", "property", "domain", "impl")


def _strings(lines: Any) -> tuple[str, ...]:
    return tuple(lines)


# Lane names files written before the lanes were named once: the Hypothesis lane was "shrinking".
OLD_LANES = {"shrinking": "hypothesis"}


@attrs.frozen
class Counterexample:
    """A failing history and what each side said about it."""

    suite: str
    property: str
    history: History
    impl: str
    message: str = ""
    step: int | None = None
    seed: int | None = None
    lane: str = "hypothesis"  # the search lane that found it (`search.LANE_NAMES`), or what else did
    model_said: Any = None
    impl_said: Any = None
    # When the implementation raised: its traceback cut to its own frames (`file:line in function: source`).
    trace: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    # The user's streaming job (`--job MODULE:FACTORY`) the trials ran, so `replay` runs it again.
    job: str | None = None
    # The histories `history` fails only together with, in one call (they interfere).
    together: tuple[History, ...] = ()
    # Why shrinking stopped before its budget ran out (a wall-clock cap); None when it did not.
    stopped: str | None = None
    # Each shrink pass that ran, `name: kept of tried` (`shrink.Tally`): shown under `--verbose`, not written.
    shrink_passes: tuple[str, ...] = attrs.field(default=(), eq=False)

    @builtins.property  # `property` is a field here
    def domain(self) -> str:
        return self.history.domain

    @builtins.property
    def histories(self) -> tuple[History, ...]:
        """Every history the failure needs, in the call's order: `history` first."""
        return (self.history, *self.together)

    @builtins.property
    def size(self) -> int:
        """Actions in all its histories: what shrinking makes smaller."""
        return sum(len(h.actions) for h in self.histories)

    @builtins.property
    def disagreement(self) -> bool:
        """Recorded as a generator/model disagreement (the model rejected a generated history)."""
        return self.message.startswith("generator/model disagreement")


def render_observation(observation: Any) -> Any:
    """An observation as JSON-able text: `{"step label": [rows...]}`, rows sorted (idempotent)."""
    if not isinstance(observation, dict):
        return None if observation is None else repr(observation)
    if all(isinstance(key, str) for key in observation):
        return observation
    return {f"{step} {label}": _rows(value) for (step, label), value in sorted(observation.items())}


def _rows(value: Any) -> list[str]:
    """A value's rows as text, sorted; a value that is no collection of rows (an implementation's wrong
    answer) as its one repr.

    >>> _rows(frozenset({("b",), ("a",)})), _rows(5)
    (["('a',)", "('b',)"], ['5'])
    """
    if isinstance(value, Iterable):
        return sorted(map(repr, value))
    return [repr(value)]


def to_itf(cx: Counterexample) -> dict:
    """The counterexample as an ITF trace (a JSON-able dict); a group's histories one after another."""
    group = bool(cx.together)
    meta = {
        "format": FORMAT,
        "format_version": GROUP_FORMAT_VERSION if group else FORMAT_VERSION,
        "description": f"{cx.suite}.{cx.property} fails on {cx.domain}"
        + (f" only with {len(cx.histories)} histories in one call" if group else "")
        + f": {cx.message}",
        "suite": cx.suite,
        "property": cx.property,
        "domain": cx.domain,
        "impl": cx.impl,
        "seed": cx.seed,
        "lane": cx.lane,
        "message": cx.message,
        "divergence_step": cx.step,
        "model": render_observation(cx.model_said),
        "implementation": render_observation(cx.impl_said),
    }
    if group:
        meta["histories"] = [len(h.actions) for h in cx.histories]
    if cx.trace:
        meta["traceback"] = list(cx.trace)
    if cx.job:
        meta["job"] = cx.job
    if cx.stopped:
        meta["shrinking"] = cx.stopped
    owner = [{"history": k} if group else {} for k, h in enumerate(cx.histories) for _ in h.actions]
    records = [record for h in cx.histories for record in h.to_json()]
    steps = [i for h in cx.histories for i in range(len(h.actions))]
    states = [
        State(
            meta={"index": i},
            values={
                **owner[i],
                "step": steps[i],
                "action": record["action"],
                "args": SimpleNamespace(**_without_none(record["args"])),
            },
        )
        for i, record in enumerate(records)
    ]
    names = ["history", "step", "action", "args"] if group else ["step", "action", "args"]
    return trace_to_json(Trace(meta=meta, params=[], vars=names, states=states, loop=None))


def _without_none(args: dict) -> dict:
    return {k: v for k, v in args.items() if v is not None}


def file_name(cx: Counterexample) -> str:
    """`suite-property-domain-impl-<content hash>.itf.json`: the model's lane and Spark's never share a file."""
    content = [h.to_json() for h in cx.histories] if cx.together else cx.history.to_json()
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:10]
    domain, impl = (
        "".join(ch if ch.isalnum() else "_" for ch in name).strip("_") for name in (cx.domain, cx.impl)
    )
    return f"{cx.suite}-{cx.property}-{domain}-{impl}-{digest}.itf.json"


def write(cx: Counterexample, directory: Path) -> Path:
    """Writes the trace under `directory`; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(cx)
    path.write_text(json.dumps(to_itf(cx), indent=1) + "\n")
    return path


def read(path: Path) -> Counterexample:
    """Reads a trace back; a `CounterexampleFormatError` naming the file and the field."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise CounterexampleFormatError(path, "(file)", f"cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise CounterexampleFormatError(path, "(file)", f"not JSON: {exc}") from exc
    return from_itf(raw, path)


def from_itf(raw: Any, path: Any = "<trace>") -> Counterexample:
    """Inverse of `to_itf`, validating every field it uses."""
    meta = _meta(raw, path)
    try:
        trace = trace_from_json(raw)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CounterexampleFormatError(
            path, "states", f"not a valid history: not an ITF trace: {exc}"
        ) from exc
    records = [_record(state, i, path) for i, state in enumerate(trace.states)]
    lengths = _lengths(meta, trace.states, path)
    try:
        history, *together = (
            History.from_json(meta["domain"], records[sum(lengths[:k]) : sum(lengths[: k + 1])])
            for k in range(len(lengths))
        )
    except (BadHistory, ValueError) as exc:
        raise CounterexampleFormatError(path, "states", f"not a valid history: {exc}") from exc
    step = meta.get("divergence_step")
    return Counterexample(
        together=tuple(together),
        stopped=meta["shrinking"] if isinstance(meta.get("shrinking"), str) else None,
        suite=meta["suite"],
        property=meta["property"],
        history=history,
        impl=meta["impl"],
        message=str(meta.get("message", "")),
        step=step if isinstance(step, int) else None,
        seed=meta.get("seed") if isinstance(meta.get("seed"), int) else None,
        lane=OLD_LANES.get(str(meta.get("lane", "")), str(meta.get("lane", ""))),
        model_said=meta.get("model"),
        impl_said=meta.get("implementation"),
        trace=_trace(meta.get("traceback"), path),
        job=meta["job"] if isinstance(meta.get("job"), str) else None,
    )


def _lengths(meta: dict, states: list[State], path: Any) -> list[int]:
    """The number of actions of each history: all the states, or (a group file) as `#meta.histories`
    says, each state's `history` naming the one it belongs to."""
    if meta["format_version"] == FORMAT_VERSION:
        return [len(states)]
    lengths = meta.get("histories")
    if (
        not isinstance(lengths, list)
        or len(lengths) < 2
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in lengths)
        or sum(lengths) != len(states)
    ):
        raise CounterexampleFormatError(
            path,
            "#meta.histories",
            f"expected the actions of each of two or more histories, {len(states)} in all; got {lengths!r}",
        )
    owners = [k for k, n in enumerate(lengths) for _ in range(n)]
    for i, (state, owner) in enumerate(zip(states, owners)):
        if state.values.get("history") != owner:
            raise CounterexampleFormatError(
                path,
                f"states[{i}].history",
                f"expected {owner} (#meta.histories), got {state.values.get('history')!r}",
            )
    return lengths


def _trace(value: Any, path: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        raise CounterexampleFormatError(path, "#meta.traceback", f"expected a list of strings, got {value!r}")
    return tuple(value)


def _meta(raw: Any, path: Any) -> dict:
    if not isinstance(raw, dict):
        raise CounterexampleFormatError(path, "(root)", "expected a JSON object")
    meta = raw.get("#meta")
    if not isinstance(meta, dict):
        raise CounterexampleFormatError(path, "#meta", "missing or not an object")
    if meta.get("format") != FORMAT:
        raise CounterexampleFormatError(
            path, "#meta.format", f"expected {FORMAT!r}, got {meta.get('format')!r}"
        )
    if meta.get("format_version") not in (FORMAT_VERSION, GROUP_FORMAT_VERSION) or isinstance(
        meta.get("format_version"), bool
    ):
        raise CounterexampleFormatError(
            path,
            "#meta.format_version",
            f"unsupported version {meta.get('format_version')!r} "
            f"(this reader knows {FORMAT_VERSION} and {GROUP_FORMAT_VERSION})",
        )
    for field in REQUIRED_META:
        if not isinstance(meta.get(field), str):
            raise CounterexampleFormatError(
                path, f"#meta.{field}", f"missing or not a string: {meta.get(field)!r}"
            )
    if not isinstance(raw.get("states"), list):
        raise CounterexampleFormatError(path, "states", "not a valid history: missing or not a list")
    return meta


def _record(state: State, index: int, path: Any) -> dict:
    action, args = state.values.get("action"), state.values.get("args", {})
    if not isinstance(action, str):
        raise CounterexampleFormatError(
            path, f"states[{index}].action", f"not a valid history: expected an action name, got {action!r}"
        )
    thawed = _thaw(args)
    if not isinstance(thawed, dict):
        raise CounterexampleFormatError(
            path, f"states[{index}].args", f"not a valid history: expected a record, got {args!r}"
        )
    return {"action": action, "args": thawed}


def _thaw(value: Any) -> Any:
    """itf-py's immutable values back to plain dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: _thaw(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, frozenset)):
        return [_thaw(v) for v in value]
    return value
