"""The trial suites' oracles judged over recorded observations: what `frontier-harness mutate` runs on them.

A mutant of an oracle or law module (`properties/checks/streaming/streaming.py`, `committed.py`,
`streaming_job.py`; `properties/checks/event_time/stateful.py`, `oracles/`, `reached.py`,
`processor_reached.py`;
`properties/checks/ttl/spark_state.py`) is killed when some suite would say something else about a trial
than it does today; running Spark's trials for every mutant is too slow, so the trials are recorded once
(`record`, a real query each, into `tests/recorded/SUITE.json.gz`) and each mutant is judged on them: a
case is a history, the implementation that ran it (Spark's, a planted one, a user's job), the observation,
and what each property said (held, or the failure's message and step, or why it does not apply) and
which hard cases it reached. The correct implementations' cases hold; the planted ones' fail, each the
way its planted bug should. The batch jobs of the oracles (a job's `transform` over a frame) still run on
Spark: they are cheap, and a mutant may ask for other frames.

    python -m tests.oracle_verdicts record [streaming|stateful|ttl_spark_state ...]   # the recordings
    python -m tests.oracle_verdicts refresh [...]   # what the suites say now, over the same recordings
    frontier-harness mutate --target frontier_harness.properties.checks.event_time.oracles.promise \\
        --suite tests.oracle_verdicts:SUITE --impl tests.oracle_verdicts:factory --profile ci

`SUITE` has one property per recorded suite; its check judges every case of that suite with the
suite's properties as they are now (the mutant's, inside `mutate`) and fails on the first verdict or hard
case that differs from the recording.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

# Imported for `mutate`'s import graph (a mutant of these modules reaches `SUITE`'s checks); the checks look
# each suite up at call time, so they judge with the mutant `mutate` put in `sys.modules`.
import frontier_harness.properties.checks.event_time.oracles.promise
import frontier_harness.properties.checks.event_time.oracles.reference_run
import frontier_harness.properties.checks.event_time.oracles.stateful_rows
import frontier_harness.properties.checks.event_time.processor_reached
import frontier_harness.properties.checks.event_time.reached
import frontier_harness.properties.checks.event_time.stateful
import frontier_harness.properties.checks.streaming.committed
import frontier_harness.properties.checks.streaming.streaming
import frontier_harness.properties.checks.streaming.streaming_job
import frontier_harness.properties.checks.ttl.spark_state  # noqa: F401
from frontier_harness.properties.checks.event_time.strategies.aimed_at import aimed_at as stateful_aimed_at
from frontier_harness.properties.checks.streaming.strategies.streaming import aimed_at as streaming_aimed_at
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.implementation import Implementation, Speed
from frontier_harness.properties.engine.suite import Outcome, Property, Suite, shared_observations
from frontier_harness.properties.mutate import equivalents

RECORDED = Path(__file__).with_name("recorded")
MODULES = {
    "streaming": "frontier_harness.properties.checks.streaming.streaming",
    "stateful": "frontier_harness.properties.checks.event_time.stateful",
    "ttl_spark_state": "frontier_harness.properties.checks.ttl.spark_state",
}
# What each suite's directed histories aim at, read from a history (its strategies' diagnostic).
AIMED_AT = {"streaming": streaming_aimed_at, "stateful": stateful_aimed_at}
METHODS = {
    "streaming": "observe_streaming",
    "stateful": "observe_stateful",
    "ttl_spark_state": "observe_ttl_spark_state",
}


# The mutants of the oracle modules that no check can tell from the code: by file, `(original, mutated)` as
# `mutate` names them, and why, from the project's one list (`ci/equivalent_mutants.toml`;
# tests/test_oracle_verdicts.py holds the ttl module's survivors under the recordings to it).
EQUIVALENT: dict[str, dict[tuple[str, str], str]] = {}
for _entry in equivalents.load(Path(__file__).parents[1] / "ci" / "equivalent_mutants.toml"):
    _original, _, _mutated = _entry.change.partition(" -> ")
    EQUIVALENT.setdefault(_entry.file, {})[(_original, _mutated)] = _entry.why


# ---- observations as JSON: frozensets of tuples, lists on the way out, tuples again on the way in ----


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list, frozenset, set)):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (frozenset, set)) else items
    return value


def _tupled(value: Any) -> Any:
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def dumped(observation: dict) -> list:
    return [[step, label, _plain(rows)] for (step, label), rows in sorted(observation.items(), key=repr)]


def loaded(records: list) -> dict:
    return {(step, label): frozenset(_tupled(rows)) for step, label, rows in records}


def history_json(history: History) -> dict:
    return {"domain": history.domain, "actions": [{"name": a.name, "args": a.args} for a in history.actions]}


def history_of(found: dict) -> History:
    return History(found["domain"], tuple(Action(a["name"], a["args"]) for a in found["actions"]))


# ---- an implementation that answers with the recording ----


class Recorded:
    """Answers each history with its recorded observation, and a processor's reference runs (`reference_runs`,
    a run without a crash) with theirs; anything else (a job's plan, the oracle's batch jobs) comes from
    `base`, the implementation the case was recorded with (None: Spark's own sink). Recording
    (`references` None), it runs the references on `base` and keeps them in `references_used`."""

    speed = Speed.BATCHED

    def __init__(
        self, name: str, base: Any, observations: dict[str, dict], references: dict[str, dict] | None = None
    ):
        self.name, self.base, self.recorded = name, base, observations
        self.references = references
        self.references_used: dict[str, dict] = {}

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("observe_") or self.base is None:
            raise AttributeError(attribute)
        return getattr(self.base, attribute)

    def _observe(self, domain: Any, histories: Sequence[History]) -> list[dict]:
        return [self.recorded[h.key] for h in histories]

    observe_streaming = observe_stateful = observe_ttl_spark_state = _observe

    def reference_runs(self, histories: Sequence[History]) -> list[dict]:
        """The recorded run of each reference history; a history not recorded (a mutant asked for another
        reference) raises `KeyError` naming it: the suite then says something else than it did."""
        if self.references is None:
            self.references_used.update(zip((h.key for h in histories), self.base.reference_runs(histories)))
            return [self.references_used[h.key] for h in histories]
        missing = [h.key for h in histories if h.key not in self.references]
        if missing:
            raise KeyError(f"no reference run recorded for {missing[0]}")
        return [self.references[h.key] for h in histories]


_BASES: dict[str, Any] = {}


def base_of(impl: str) -> Any:
    """The implementation a case names, made once a process: `spark`, `job:M:F`, `stateful-job:M:F`, or a
    planted factory `M:F` (its plan and oracle jobs are the job's it runs)."""
    if impl not in _BASES:
        from frontier_harness.properties.adapters import load_implementation

        _BASES[impl] = None if impl == "spark" else load_implementation(impl)
    return _BASES[impl]


# ---- what a suite says about a case ----


_IMPORTED = {name: sys.modules[module] for name, module in MODULES.items()}
_CODES: dict[str, Any] = {}


def imported_now(suite_name: str) -> ModuleType:
    """The suite's module as a process importing it now would build it: the one in `sys.modules` if `mutate`
    replaced it (a mutant of it, or re-executed over one), else executed afresh. A suite binds modules and
    functions of its oracles when built (`streaming`'s `JOB_JUDGES` holds `streaming_job`'s judges, the
    module itself `streaming_job`), which `mutate` re-executes only within its target: built afresh, the
    suite judges with the mutant of whatever module it imports.

    >>> imported_now("streaming") is sys.modules[MODULES["streaming"]]
    False
    >>> imported_now("streaming").SUITE.name
    'streaming'
    """
    name = MODULES[suite_name]
    if sys.modules[name] is not _IMPORTED[suite_name]:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    if name not in _CODES:
        _CODES[name] = compile(Path(spec.origin).read_text(), spec.origin, "exec")
    fresh = importlib.util.module_from_spec(spec)
    exec(_CODES[name], fresh.__dict__)
    return fresh


def verdicts(
    suite_name: str, impl: Any, history: History, module: ModuleType | None = None
) -> dict[str, list]:
    """Each property of the suite (`module`, or as `imported_now`) on `history`: `[ok, message, step, expected,
    actual]` (the counterexample's observations, `shown`), `["not applicable", why]` or `["raised", exception type]`; `["reached", sorted hard cases]` of the first that
    ran, and what the suite's directed histories aim at."""
    module = module or imported_now(suite_name)
    suite = module.SUITE.for_implementation(impl)  # scaled to the job's plan, if it has one
    found: dict[str, list] = {}
    reached: list | None = None
    with shared_observations():
        for prop in suite.properties:
            why = prop.not_applicable(impl)
            if why is not None:
                found[prop.name] = ["not applicable", why]
                continue
            try:
                [outcome] = prop.check(impl, [history])
            except Exception as exc:  # a mutant that raises says something else: that is its verdict
                found[prop.name] = ["raised", type(exc).__name__]
                continue
            found[prop.name] = [
                outcome.ok,
                outcome.message,
                outcome.step,
                shown(outcome.expected),
                shown(outcome.actual),
            ]
            if reached is None and outcome.reached is not None:
                reached = sorted(outcome.reached)
    found["reached"] = ["reached", reached]
    found["required"] = [
        "required",
        sorted(suite.required_in(suite.domains)),
    ]  # of this job's plan, if it has one
    aimed_at = AIMED_AT.get(suite_name)
    if aimed_at is not None:  # what the suite's directed histories aim at, read from the history
        plan = [suite.plan] if hasattr(suite, "plan") else []  # the stateful suite's, scaled to the job
        found["aimed_at"] = ["aimed at", aimed_at(*plan, history)]
    return found


def shown(rows: dict | None) -> list | None:
    """A counterexample's expected or actual observation, as it is shown: each label's rows, in order.

    >>> shown({(2, "sink"): frozenset({("b", 0, 1), ("a", 0, 2)})})
    [[2, 'sink', ["['a', 0, 2]", "['b', 0, 1]"]]]
    """
    if rows is None:
        return None
    return [
        [step, label, sorted(repr(_plain(row)) for row in found)]
        for (step, label), found in sorted(rows.items(), key=repr)
    ]


@attrs.frozen
class Case:
    """A recorded trial: its history, the implementation that ran it, and what the suite said."""

    label: str
    impl: str
    history: History
    observation: dict
    said: dict
    references: dict[str, dict] = attrs.field(factory=dict)

    def implementation(self) -> Recorded:
        """The implementation that answers this case's history (and its reference runs) as recorded."""
        return Recorded(self.impl, base_of(self.impl), {self.history.key: self.observation}, self.references)


def cases(suite_name: str) -> list[Case]:
    path = RECORDED / f"{suite_name}.json.gz"
    records = json.loads(gzip.decompress(path.read_bytes()))
    return [
        Case(
            r["label"],
            r["impl"],
            history_of(r["history"]),
            loaded(r["observation"]),
            r["said"],
            {key: loaded(run) for key, run in r.get("references", [])},
        )
        for r in records
    ]


_CASES: dict[str, list[Case]] = {}


def differs(suite_name: str) -> str | None:
    """The first case whose verdicts now differ from the recording, said in one line; None when none does."""
    if suite_name not in _CASES:
        _CASES[suite_name] = cases(suite_name)
    module = imported_now(suite_name)
    for case in _CASES[suite_name]:
        now = _jsonish(verdicts(suite_name, case.implementation(), case.history, module))
        if now != case.said:
            changed = sorted(p for p in set(now) | set(case.said) if now.get(p) != case.said.get(p))
            return f"{case.label}: {changed[0]} said {case.said.get(changed[0])}, now {now.get(changed[0])}"
    return None


def _jsonish(found: dict) -> dict:
    """`found` as the recording holds it: JSON, and a path of this checkout (in a job's traceback) from its
    root, so a recording made in one checkout holds in another."""
    return json.loads(json.dumps(found).replace(f"{ROOT}/", ""))


ROOT = Path(__file__).resolve().parent.parent


def _check(suite_name: str) -> Callable[[Any, Sequence[History]], list[Outcome]]:
    def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
        message = differs(suite_name)
        return [Outcome(ok=message is None, message=message or "", step=0) for _ in histories]

    return check


def _one(source: Any, domain: str) -> History:
    return History(domain, (Action("recorded", {}),))


class Verdicts(Implementation):
    """The implementation `mutate` runs `SUITE` against: it observes nothing (the cases are recorded)."""

    name = "recorded"
    speed = Speed.BATCHED

    def observe_recorded(self, domain: Any, histories: Sequence[History]) -> list[dict]:
        return [{} for _ in histories]


def factory() -> Verdicts:
    return Verdicts()


def suite_of(names: Sequence[str]) -> Suite:
    """The meta suite over the recordings of the suites `names`: one property each."""
    return Suite(
        name="oracle_verdicts",
        doc="The trial suites' oracles over recorded trials: every verdict and hard case as recorded.",
        properties=tuple(
            Property(
                name=f"{name}_verdicts",
                doc=f"{name}'s verdicts over its recorded trials",
                draw=_one,
                check=_check(name),
            )
            for name in names
        ),
        default_impl="tests.oracle_verdicts:factory",
        batched_cost=1e9,  # one history a lane: each check judges every recorded case
        domains=("total",),
        calls=("observe_recorded",),
    )


SUITE = suite_of(list(MODULES))
# One recording's alone (`--suite tests.oracle_verdicts:TTL_SPARK_STATE`): a mutant of a module only that suite
# imports is judged without waiting for the others' baselines.
STREAMING, STATEFUL, TTL_SPARK_STATE = (suite_of([name]) for name in MODULES)


# ---- recording ----


def _streaming_cases() -> list[tuple[str, str, list[History]]]:
    from frontier_harness.properties.checks.streaming import streaming
    from frontier_harness.properties.checks.streaming.strategies.streaming import draw_streaming_history
    from frontier_harness.properties.engine.source import RandomSource
    from tests import test_suite_streaming as t

    directed = [
        draw(RandomSource(0), "partitioned") for draw in streaming.directed_with_kills(False).values()
    ]
    drawn = [draw_streaming_history(RandomSource(seed), "partitioned") for seed in range(6)]
    planted = [(name, [t.history(*actions)]) for name, _, actions in t.PLANTED]
    refused = t.history(
        t.produce("r0"), t.trigger(), t.produce("r1"), t.trigger("after_offsets"), t.COMPACT, t.RESTART
    )
    twice = t.history(t.produce("r0"), t.trigger(), t.produce("r1"), t.trigger("after_sink"), t.RESTART)
    more = {"commits_beyond_durable": [refused], "sink_not_idempotent": [twice]}
    append = t.history(t.produce("r0"), t.trigger("after_sink"), t.RESTART)
    six = [t.produce(f"r{i}") for i in range(1, 7)]  # a batch of six records: a message names six rows
    append_six = t.history(t.produce("r0"), t.trigger(), *six, t.trigger("after_sink"), t.RESTART)
    # a trigger while the query is down (a no-op), and a history of no action at all
    down = [t.history(t.produce("r0"), t.trigger("after_sink"), t.trigger(), t.RESTART), t.history()]
    # the batch that binds offsets below its predecessor's (partition 0, after the compaction) and beyond it
    # (partition 1) is logged, then the query crashes before it commits
    behind = t.history(
        *(t.produce("r0"), t.trigger(), t.produce("r1"), t.trigger(), t.COMPACT),
        *(t.produce("r2", 1), t.trigger("after_offsets")),
    )
    more["latest_offset_backwards"] = [behind]
    two = t.history(t.produce("r0"), t.trigger(), t.produce("r1"), t.trigger())
    unread = t.history(
        t.produce("r0"), t.produce("r1"), t.trigger()
    )  # r1 is never offered by the planted source
    return [
        ("spark: covering, directed and drawn histories", "spark", [*t.COVERING, *directed, *drawn, *down]),
        *(
            (f"planted {name}", f"tests.planted_streaming:{name}", hs + more.get(name, []))
            for name, hs in planted
        ),
        ("planted sink_loses_batches", "tests.planted_streaming:sink_loses_batches", [two]),
        ("planted latest_offset_one_behind", "tests.planted_streaming:latest_offset_one_behind", [unread]),
        ("the docs' append writer", "job:tests.jobs.user:append", [append]),
        ("the append writer under a transform to words", "job:tests.jobs.user:append_words", [append_six]),
        ("an idempotent writer", "job:tests.jobs.user:skip_written", [*t.COVERING, append]),
        ("a writer stamping batch_id + 1", "job:tests.jobs.user:batch_id_from_one", [two]),
        ("a job whose writer raises", "job:tests.jobs.bad:failing_writer", [two]),
    ]


def _stateful_cases() -> list[tuple[str, str, list[History] | Directed]]:
    """Each job with the directed histories of the hard cases its plan makes it the one to show (the fewest
    trials that reach each hard case somewhere): the example job every crash, kill and event-time case,
    the other correct jobs their operator's or output mode's, each wrong job the cases its bug shows in."""
    from frontier_harness.properties.checks.event_time import reached as r
    from frontier_harness.properties.checks.streaming.strategies.streaming import (
        RERUN,
        RESTART_AFTER_COMPACTION,
        crashed,
    )

    crashes = (crashed("after_offsets"),)
    event_time = (r.LATE, r.AT_WATERMARK, r.IDLE, r.COMPLETE, r.REDELIVERY, r.STATE_READ, r.LATE_AND_KEPT)
    wanted = {
        "upsert_counts": Directed(None, drawn=2),  # every hard case of the example's plan, kills included
        "append_windows": Directed((*event_time, r.REEMIT, RERUN), drawn=1),
        "deduplicated": Directed((*event_time, RERUN), drawn=1),
        "deduplicated_with_position": Directed((r.REDELIVERY, r.LATE), written=(EMITTED_AGAIN,)),
        "sliding_counts": Directed((r.LATE_AND_KEPT, r.LATE, r.AT_WATERMARK, r.COMPLETE), drawn=1),
        "append_writer": Directed((r.REEMIT, RERUN)),
        "upsert_by_window": Directed((r.COMPLETE, r.LATE)),
        "promises_ten_seconds": Directed((r.PROMISE, r.LATE)),
        "deduplicated_promises_ten_seconds": Directed((r.PROMISE, r.LATE, r.REDELIVERY)),
        "counts_per_key": Directed((r.STATE_READ, RERUN)),
        "one_batch_late": Directed((r.COMPLETE, r.REEMIT)),
        "skip_seen": Directed((r.REEMIT, RERUN)),
    }
    found: list[tuple[str, str, list[History] | Directed]] = [
        (f"job {job}", f"stateful-job:tests.jobs.stateful:{job}", histories)
        for job, histories in wanted.items()
    ]
    job = "stateful-job:tests.jobs.stateful:"
    found += [
        ("job append_windows at window ends", f"{job}append_windows", list(WINDOW_ENDS)),
        ("job deduplicated, a record emitted again", f"{job}deduplicated", [EMITTED_AGAIN]),
        ("job promises_ten_seconds at the promise's edge", f"{job}promises_ten_seconds", [PROMISE_EDGE]),
        ("job sliding_counts, a late record beside a kept one", f"{job}sliding_counts", [LATE_BESIDE_KEPT]),
        (
            "job upsert_counts at the edges",
            f"{job}upsert_counts",
            [AT_WINDOW_START, HELD_WHILE_IDLE, _timed()],
        ),
        ("job append_windows, the watermark last at a window's end", f"{job}append_windows", [AT_WINDOW_END]),
        ("job deduplicated, a record at event time 0", f"{job}deduplicated", [AT_ZERO]),
        (
            "job upsert_counts, the watermark moved past an idle partition",
            f"{job}upsert_counts",
            [IDLE_FOR_ONE],
        ),
        ("job windows_without_watermark", f"{job}windows_without_watermark", [AT_WINDOW_END]),
    ]
    found += [
        (f"planted {p}", f"tests.planted_streaming:{p}", Directed((*crashes, RESTART_AFTER_COMPACTION)))
        for p in ("stateful_latest_offset_backwards", "stateful_commits_beyond_durable")
    ]
    return found + _processor_cases()


def _processor_cases() -> list[tuple[str, str, list[History] | Directed]]:
    """A user's processors (judged by `crash_invisible` against a run without a crash, recorded with the case):
    the example every hard case, kills included, one drawn history and its near misses (hard cases a trial
    comes close to and does not reach); its twins the case each fails on."""
    from frontier_harness.properties.checks.event_time import processor_reached as p

    example = "stateful-job:frontier_harness.streaming_job_example"
    return [
        ("processor processor_counts", f"{example}.processor_counts:factory", Directed(None, drawn=1)),
        (
            "processor processor_counts, near misses",
            f"{example}.processor_counts:factory",
            [
                RESTART_WITHOUT_FIRING,
                KILL_WITHOUT_CHANGE,
                FIRED_WITHOUT_RESTART,
                CRASH_BEFORE_ANY_COMMIT,
                FIRED_BEFORE_RESTART,
                PENDING_ACROSS_RESTART,
                KILL_AFTER_CHANGE,
            ],
        ),
        (
            "processor quiet_group_counts, near misses",
            "stateful-job:tests.jobs.stateful:quiet_group_counts",
            [MOVED_ACROSS_RESTART],
        ),
        (
            "processor processor_counts_in_memory",
            f"{example}.processor_counts_in_memory:factory",
            Directed((p.TIMER_AFTER_RESTART,)),
        ),
        (
            "processor processor_counts_in_memory, six keys",
            f"{example}.processor_counts_in_memory:factory",
            [SIX_KEYS_ACROSS_RESTART],
        ),
        (
            "processor processor_append_writer",
            "stateful-job:tests.jobs.stateful:processor_append_writer",
            Directed((p.TIMER_RERUN,)),
        ),
    ]


@attrs.frozen
class Directed:
    """The stateful suite's directed histories for these hard cases (None: every one the plan requires),
    `drawn` histories of its own generator, scaled to the job's plan when it is prepared, and `written` ones."""

    events: tuple[str, ...] | None
    drawn: int = 0
    written: tuple[History, ...] = ()


def _timed(*actions: tuple | str) -> History:
    """A stateful history: `(data, event time in s[, key[, partition]])` a record (key "a", partition 0 unless
    named), "trigger" a batch, "restart", "crash:POINT" or "kill:POINT" a batch that crashes there."""
    return History("partitioned", tuple(_action(a) for a in actions))


def _action(a: tuple | str) -> Action:
    if a in ("trigger", "restart"):
        return Action(str(a), {})
    if isinstance(a, str):  # crash:POINT, kill:POINT
        how, _, point = a.partition(":")
        return Action("trigger", {"fault": point, **({"kill": True} if how == "kill" else {})})
    data, seconds, key, partition = (*a, "a", 0)[:4] if len(a) == 2 else (*a, 0)[:4]
    return Action(
        "produce", {"partition": partition, "key": key, "event_time": round(seconds * 1000), "data": data}
    )


# Histories at the edges the oracles draw (event times in seconds; the jobs' windows are 10 s, their delay 5 s):
# a record exactly 9.999 s behind the newest of the batches before it (within a 10 s promise by 1 ms, late
# under a 1 s delay) in a batch with a newer record; a window whose end the watermark reaches exactly, and one
# it misses by a millisecond (append mode); a (key, data) emitted again once its state expired.
PROMISE_EDGE = _timed(("r0", 41), "trigger", ("r1", 31.001, "c"), ("r2", 50, "d"), "trigger")
WINDOW_ENDS = (
    _timed(("r0", 15), ("r1", 25), "trigger", ("r2", 25.5), "trigger"),
    _timed(("r0", 15), ("r1", 24.999), "trigger", ("r2", 24), "trigger"),
)
EMITTED_AGAIN = _timed(("r0", 5), "trigger", ("r9", 60, "b"), "trigger", ("r0", 61), "trigger")
# a record at a window's start, the watermark at that start (the window before it ends there); the watermark
# exactly at a window's end, the last batch; a record at event time 0; a batch that holds the watermark while
# a partition that fed it earlier is idle; no action at all
AT_WINDOW_START = _timed(("r0", 35), "trigger", ("r1", 30), "trigger")
AT_WINDOW_END = _timed(("r0", 15), ("r1", 25), "trigger")
AT_ZERO = _timed(("r0", 0), "trigger")
HELD_WHILE_IDLE = _timed(("r0", 20), "trigger", ("r1", 10, "b", 1), "trigger", ("r2", 10, "b", 1), "trigger")
IDLE_FOR_ONE = _timed(("r0", 20), "trigger", ("r1", 30, "b", 1), "trigger")  # the second batch moves it
# (10 s windows sliding by 5 s) a record late for [25, 35), which counts an earlier record of its key, and kept
# for [30, 40): the frame [25, 35) is read from must not hold it
# A processor's near misses (`processor_counts`: a key's timer at the end of its first record's 10 s window, a
# 5 s delay): a plain restart after which a count changes and no timer fires (b's timer, set in the last batch
# before it, is in no earlier state); a SIGKILL after which a batch changes another key's state only; a timer
# fired with no restart; a crash before any batch committed; a timer fired before a plain restart (none after
# it); a record pending across a plain restart, whose batch the restart runs, firing a timer set before it.
RESTART_WITHOUT_FIRING = _timed(
    ("r0", 12), "trigger", ("r1", 13, "b"), "trigger", "restart", ("r2", 14), "trigger"
)
KILL_WITHOUT_CHANGE = _timed(
    ("r0", 12), "trigger", ("r1", 13, "b"), "kill:before_offsets", "restart", "trigger"
)
# a SIGKILL after a batch that changed a count, and none after it: the change before the kill is not one after
KILL_AFTER_CHANGE = _timed(
    ("r0", 12), "trigger", ("r1", 13), "trigger", ("r2", 14, "b"), "kill:before_offsets", "restart", "trigger"
)
# (`quiet_group_counts`: a group's timeout 10 s after its newest record) a timeout moved by a record after a
# plain restart, before the watermark reached it: gone from the state, never fired
MOVED_ACROSS_RESTART = _timed(("r0", 10), "trigger", "restart", ("r1", 12), "trigger")
FIRED_WITHOUT_RESTART = _timed(("r0", 12), "trigger", ("r1", 30, "b"), "trigger")
CRASH_BEFORE_ANY_COMMIT = _timed(("r0", 12), "crash:before_offsets", "restart", ("r1", 30), "trigger")
FIRED_BEFORE_RESTART = _timed(
    ("r0", 12), "trigger", ("r1", 30, "b"), "trigger", "restart", ("r2", 31, "b"), "trigger"
)
# Six keys counted across a restart, then a record that fires their timers: the in-memory twin's failure names
# every key (`reference_run.SHOWN`), no "more".
SIX_KEYS_ACROSS_RESTART = _timed(
    *((f"r{k}", 12, k) for k in "abcdef"),
    "trigger",
    "restart",
    *((f"s{k}", 13, k) for k in "abcdef"),
    ("rz", 30, "z"),
    "trigger",
)
PENDING_ACROSS_RESTART = _timed(("r0", 12), "trigger", ("r1", 30, "b"), "restart", "trigger")
LATE_BESIDE_KEPT = _timed(("r0", 26, "c"), ("r1", 40, "c"), "trigger", ("r2", 34.999, "c"), "trigger")


def _stateful_histories(impl: Any, wanted: Directed) -> list[History]:
    """The directed histories of the job's plan for the hard cases `wanted`, and its drawn ones."""
    from frontier_harness.properties.checks.event_time import stateful
    from frontier_harness.properties.engine.source import RandomSource

    required = set(stateful.required_events(impl.plan))
    events = required if wanted.events is None else required & set(wanted.events)
    directed = {}
    for event, draw in sorted(stateful.directed(impl.plan).items()):
        if event in events:
            history = draw(RandomSource(0), "partitioned")
            directed.setdefault(history.key, history)
    draw: Callable[..., History] = (
        stateful.draw_processor_history
        if impl.plan.operator == stateful.StatefulOperator.PROCESSOR
        else stateful.draw_stateful_history
    )
    drawn = [draw(RandomSource(seed), "partitioned", impl.plan) for seed in range(wanted.drawn)]
    return [*directed.values(), *drawn, *wanted.written]


def _ttl_cases() -> list[tuple[str, str, list[History]]]:
    from frontier_harness.properties.checks.ttl.strategies.spark_state import draw_state_history
    from frontier_harness.properties.engine.source import RandomSource
    from tests.test_spark_state_clock import RESTARTED
    from tests.test_suite_ttl_spark_state import get, history, put, trigger

    drawn = [draw_state_history(RandomSource(seed)) for seed in range(6)]
    quiet = history(put("a", "x"), get("a"), trigger(), get("a"), trigger(4000), get("a"), trigger())
    return [
        ("spark: drawn histories", "spark", drawn),
        ("spark: no crash, no restart", "spark", [quiet]),
        *((f"planted {p}", f"tests.planted_ttl_state:{p}", drawn) for p in ("copy_kept", "puts_at_the_end")),
        (
            "planted restarts_an_hour_behind (libfaketime)",
            "tests.planted_ttl_state:restarts_an_hour_behind",
            [RESTARTED],
        ),
    ]


def _derived(records: list[dict]) -> list[dict]:
    """Observations no engine we have makes, derived from a recorded one: a batch whose
    `current_timestamp()` is not its clock (a millisecond off), and a batch that answered nothing."""
    from frontier_harness.model.vocabulary.ttl import StateLabel

    base = next(r for r in records if r["impl"] == "spark")
    observation = loaded(base["observation"])
    step = min(s for s, label in observation if label == StateLabel.NOW)
    [(clock,)] = observation[(step, StateLabel.CLOCK)]
    derived = []
    for what, now in (
        ("now a millisecond past the clock", {(clock + 1,)}),
        ("a batch that answered nothing", set()),
    ):
        changed = {**observation, (step, StateLabel.NOW): frozenset(now)}
        history = history_of(base["history"])
        impl = Recorded("spark", None, {history.key: changed})
        said = _jsonish(verdicts("ttl_spark_state", impl, history))
        derived.append({**base, "label": f"derived: {what}", "observation": dumped(changed), "said": said})
    return derived + _put_at_expiry(records) + _set_back(records)


def _set_back(records: list[dict]) -> list[dict]:
    """The first batch after a restart with its clock (and `current_timestamp()`) an hour behind the batch
    before it: what `planted_ttl_state:restarts_an_hour_behind` shows (a driver under libfaketime), whose
    trial outlasts the driver's timeout on a loaded machine."""
    from frontier_harness.model.vocabulary.ttl import StateAction, StateLabel
    from frontier_harness.properties.checks.ttl.spark_state import clocks_of

    for base in (r for r in records if r["impl"] == "spark"):
        history, observation = history_of(base["history"]), loaded(base["observation"])
        clocks = clocks_of(observation)
        restarts = [i for i, a in enumerate(history.actions) if a.name == StateAction.RESTART]
        after = [s for s in sorted(clocks) if restarts and s > restarts[0]]
        before = [s for s in sorted(clocks) if restarts and s < restarts[0]]
        if not after or not before:
            continue
        back = clocks[before[-1]] - 3_600_000
        changed = {
            **observation,
            (after[0], StateLabel.CLOCK): frozenset({(back,)}),
            (after[0], StateLabel.NOW): frozenset({(back,)}),
        }
        said = _jsonish(verdicts("ttl_spark_state", Recorded("spark", None, {history.key: changed}), history))
        label = f"derived: a clock an hour behind after a restart ({base['label']}, step {after[0]})"
        return [{**base, "label": label, "observation": dumped(changed), "said": said}]
    return []


def _put_at_expiry(records: list[dict]) -> list[dict]:
    """A put whose batch clock is exactly its key's last put's plus the TTL (the value expires at that clock,
    so the put is over an expired value), from a recorded put past it: the batch's clock and
    `current_timestamp()` set back to that instant, still after the batch before it."""
    from frontier_harness.model.vocabulary.ttl import StateAction, StateArg, StateLabel
    from frontier_harness.properties.checks.ttl.spark_state import clocks_of

    for base in (r for r in records if r["impl"] == "spark"):
        history, observation = history_of(base["history"]), loaded(base["observation"])
        clocks, ttl = clocks_of(observation), history.actions[0].args[StateArg.TTL_MS]
        put_at: dict[str, int] = {}
        pending: list[Action] = []
        for step, action in enumerate(history.actions):
            if action.name != StateAction.TRIGGER:
                pending += [action] if action.name == StateAction.PUT else []
                continue
            before = max((c for s, c in clocks.items() if s < step), default=0)
            for put in pending:
                key = put.args[StateArg.KEY]
                expiry = put_at.get(key, clocks[step]) + ttl
                if key in put_at and before < expiry < clocks[step]:
                    at = {(step, StateLabel.CLOCK): {(expiry,)}, (step, StateLabel.NOW): {(expiry,)}}
                    changed = {**observation, **{k: frozenset(v) for k, v in at.items()}}
                    said = _jsonish(
                        verdicts("ttl_spark_state", Recorded("spark", None, {history.key: changed}), history)
                    )
                    label = (
                        f"derived: a put at exactly its key's last put + TTL ({base['label']}, step {step})"
                    )
                    return [{**base, "label": label, "observation": dumped(changed), "said": said}]
                put_at[key] = clocks[step]
            pending = []
    return []


def record(suite_name: str, only: str | None = None) -> None:
    """Runs each case's trials on Spark and writes what the suite says about them now; with `only` (a regular
    expression), just the cases whose label it matches, in place of their earlier recording (the others are
    kept as recorded)."""
    from frontier_harness.properties.engine.suite import observations

    planned = {"streaming": _streaming_cases, "stateful": _stateful_cases, "ttl_spark_state": _ttl_cases}
    records = []
    if only is not None:
        kept = json.loads(gzip.decompress((RECORDED / f"{suite_name}.json.gz").read_bytes()))
        records = [
            r for r in kept if not re.search(only, r["label"]) and not r["label"].startswith("derived: ")
        ]
    for label, impl_name, histories in planned[suite_name]():
        if only is not None and not re.search(only, label):
            continue
        base = base_of(impl_name)
        real = base if base is not None else _spark()
        if isinstance(histories, Directed):
            histories = _stateful_histories(real, histories)
        with shared_observations():
            observed = observations(real, METHODS[suite_name], histories)
        for i, (history, observation) in enumerate(zip(histories, observed)):
            impl = Recorded(impl_name, base, {history.key: observation})
            said = _jsonish(verdicts(suite_name, impl, history))
            records.append(
                {
                    "label": f"{label} #{i}",
                    "impl": impl_name,
                    "history": history_json(history),
                    "observation": _jsonish(dumped(observation)),  # this checkout's paths from its root
                    "said": said,
                    **_references_json(impl.references_used),
                }
            )
        print(f"{suite_name}: {label}: {len(histories)} trials recorded", flush=True)
        _write(suite_name, records)  # what ran so far, should a later case fail
    if suite_name == "ttl_spark_state":
        records += _derived(records)
    _write(suite_name, records)


def _references_json(used: dict[str, dict]) -> dict:
    """A processor's reference runs the case's verdicts read, as the recording holds them (none: no key)."""
    return _jsonish({"references": [[key, dumped(run)] for key, run in sorted(used.items())]}) if used else {}


def _write(suite_name: str, records: list[dict]) -> None:
    RECORDED.mkdir(exist_ok=True)
    (RECORDED / f"{suite_name}.json.gz").write_bytes(gzip.compress(json.dumps(records).encode(), mtime=0))


def refresh(suite_name: str) -> None:
    """What the suite says now about each recorded trial, written over the recording (after a deliberate
    change of an oracle: read the diff of what it says before committing it); no trial runs again."""
    path = RECORDED / f"{suite_name}.json.gz"
    records = json.loads(gzip.decompress(path.read_bytes()))
    for record, case in zip(records, cases(suite_name)):
        record["said"] = _jsonish(verdicts(suite_name, case.implementation(), case.history))
    path.write_bytes(gzip.compress(json.dumps(records).encode(), mtime=0))


def _spark() -> Any:
    from frontier_harness.properties.adapters.spark import SparkImplementation

    impl = SparkImplementation()
    impl.prepare()
    return impl


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        prog="python -m tests.oracle_verdicts", description=__doc__.split("\n")[0]
    )
    parser.add_argument("command", choices=("record", "refresh"))
    parser.add_argument("suites", nargs="*", metavar="SUITE", help=", ".join(MODULES) + " (default: each)")
    parser.add_argument("--only", help="record: just the cases whose label this regular expression matches")
    args = parser.parse_args()
    args.suites = args.suites or list(MODULES)
    if set(args.suites) - set(MODULES):
        parser.error(f"unknown suite {sorted(set(args.suites) - set(MODULES))}: choose from {list(MODULES)}")
    for name in args.suites:
        record(name, args.only) if args.command == "record" else refresh(name)
