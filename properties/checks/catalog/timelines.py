"""The *timelines* suite: multi-timeline dataflows are rejected before running, naming every input.

Histories (`frontier_harness.properties.checks.catalog.actions.draw_timelines_history`): a table, one
to three sources of random kinds and `WITH` options (epoch, `External` CDC,
`User` timelines, Debezium `Counter`s, load generators; a user timeline may take
an earlier CDC source's name, so `External(x)` meets `User(x)`), maybe a constant, a few
inserts, then views, MVs, indexes, subscribes and selects over random readable
objects (most generated catalogs mix timelines).

Observed per dataflow creation at step `s`: `(s, "rejected")` with the
`(name, timeline)` pairs the error names, or `(s, "created")`; at the end, each
created dataflow's consolidated output. The model's rejection keeps only pairs
whose name and timeline both appear in the error *message*, so a message that
fails to name an object shows up as a difference.

Properties:
- `dataflows_match_model` (differential): the implementation rejects and
  computes exactly what the model does.
- `multi_timeline_rejected_single_runs`: an oracle computed from the history's
  plain data (leaf timelines by `frontier_harness.properties.checks.catalog.oracles.timelines`): a creation is rejected iff its transitive inputs span two or more
  timelines, the rejection names exactly the inputs that have one, and every
  accepted dataflow produced its output (it ran).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from frontier_harness.model.catalog.catalog import DATAFLOWS, Catalog, Feed, output_updates
from frontier_harness.model.catalog.timeline import External, User  # value types
from frontier_harness.model.errors import ModelError, TimelineError
from frontier_harness.model.time.collection import Update, consolidate
from frontier_harness.model.time.domains import Total
from frontier_harness.model.vocabulary.catalog import (
    DATAFLOW_ACTIONS,
    LEAF_ACTIONS,
    CatalogAction,
    CatalogArg,
    TimelinesLabel,
    per_dataflow,
)
from frontier_harness.properties.checks.catalog.actions import insert_update, object_from_action
from frontier_harness.properties.checks.catalog.oracles.timelines import leaf_timeline, plan_reads
from frontier_harness.properties.checks.catalog.strategies.timelines import draw_timelines_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import (
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    differential,
    observations,
)

TIME = Total()


def named_in_message(error: TimelineError) -> frozenset:
    """The `(name, repr(timeline))` pairs of the error that its message actually names."""
    text = str(error)
    return frozenset((n, repr(t)) for n, t in error.timelines.items() if repr(n) in text and repr(t) in text)


def observe(history: History) -> Observation:
    """The model's observations: each creation rejected (with what it names) or created, and outputs."""
    catalog, observed, created = Catalog(), Observation(), list[str]()
    updates: dict[str, list[Update]] = {}
    for step, action in enumerate(history.actions):
        if action.name == CatalogAction.INSERT:
            updates.setdefault(action.args[CatalogArg.TABLE], []).append(insert_update(action))
            continue
        obj = object_from_action(action)
        try:
            catalog = catalog.add(obj)
        except TimelineError as error:
            observed[(step, TimelinesLabel.REJECTED)] = named_in_message(error)
            continue
        if isinstance(obj, DATAFLOWS):
            observed[(step, TimelinesLabel.CREATED)] = frozenset({(obj.name,)})
            created.append(obj.name)
    feed, end = Feed({k: tuple(v) for k, v in updates.items()}), len(history.actions)
    for name in created:
        out = consolidate(TIME, output_updates(catalog, feed, name))
        observed[(end, per_dataflow(TimelinesLabel.OUTPUT, name))] = frozenset(
            (u.data, u.time, u.diff) for u in out
        )
    return observed


# ---------------------------------------------------------------- the oracle


def expected_timelines(history: History) -> dict[int, dict[str, Any]]:
    """Per dataflow creation step: every transitive leaf input that has a timeline, with it.

    A plain-data oracle: leaf timelines from `frontier_harness.properties.checks.catalog.oracles.timelines` (the seed's rule
    restated), reads from the plan records themselves.
    """
    leaf_timelines: dict[str, Any] = {}
    depends: dict[str, set[str]] = {}
    out: dict[int, dict[str, Any]] = {}
    for step, action in enumerate(history.actions):
        a = action.args
        if action.name in LEAF_ACTIONS:
            leaf_timelines[a[CatalogArg.NAME]] = leaf_timeline(action.name, a)
        elif action.name in DATAFLOW_ACTIONS:
            direct = (
                {a[CatalogArg.ON]}
                if action.name == CatalogAction.CREATE_INDEX
                else plan_reads(a[CatalogArg.PLAN])
            )
            leaves = set().union(*({n} if n in leaf_timelines else depends.get(n, set()) for n in direct))
            out[step] = {n: leaf_timelines[n] for n in leaves if leaf_timelines[n] is not None}
            if len(set(out[step].values())) <= 1:
                depends[a[CatalogArg.NAME]] = leaves
    return out


def check_rejections(impl: Any, histories: Sequence[History]) -> list[Outcome]:
    """The oracle against the implementation's observations (one implementation call per batch)."""
    expectations: list[dict[int, dict[str, Any]] | ModelError] = []
    for h in histories:
        try:
            observe(h)  # a history the model itself rejects is not evidence
            expectations.append(expected_timelines(h))
        except ModelError as error:
            expectations.append(error)
    valid = [h for h, e in zip(histories, expectations) if not isinstance(e, ModelError)]
    observed = iter(observations(impl, "observe_timelines", valid))
    return [
        Outcome.model_rejected(e) if isinstance(e, ModelError) else _judge(h, e, next(observed))
        for h, e in zip(histories, expectations)
    ]


def _judge(history: History, expected: dict, obs: Observation) -> Outcome:
    end = len(history.actions)
    for step, timelines in sorted(expected.items()):
        name = history.actions[step].args[CatalogArg.NAME]
        named = frozenset((n, repr(t)) for n, t in timelines.items())
        if len(set(timelines.values())) > 1:
            rejected = obs.get((step, TimelinesLabel.REJECTED))
            if rejected != named or (step, TimelinesLabel.CREATED) in obs:
                return Outcome(
                    ok=False,
                    step=step,
                    expected=named,
                    actual=rejected,
                    message=f"{name!r} spans timelines {sorted(named)}: must be rejected naming them all, "
                    f"got {sorted(rejected or ())}",
                )
        elif (step, TimelinesLabel.CREATED) not in obs or (
            end,
            per_dataflow(TimelinesLabel.OUTPUT, name),
        ) not in obs:
            return Outcome(
                ok=False, step=step, message=f"{name!r} has a single timeline {sorted(named)} but did not run"
            )
    return Outcome(ok=True)


def events(history: History) -> list[str]:
    """Hard cases: rejections direct and through a view, accepted dataflows per timeline kind."""
    found: set[str] = set()
    expected = expected_timelines(history)
    for step, timelines in expected.items():
        kinds = {type(t).__name__ for t in timelines.values()}
        action = history.actions[step]
        if len(set(timelines.values())) > 1:
            found.add("multi-timeline dataflow rejected")
            direct = (
                {action.args[CatalogArg.ON]}
                if action.name == CatalogAction.CREATE_INDEX
                else plan_reads(action.args[CatalogArg.PLAN])
            )
            if set(timelines) - direct:
                found.add("rejected through a view or MV")
            if _same_name_external_and_user(timelines.values()):
                found.add("External(x) and User(x) rejected together")
        elif not timelines:
            found.add("dataflow over constants only (no timeline)")
        else:
            found.add(f"single-timeline dataflow ran ({kinds.pop()})")
    return sorted(found)


def _same_name_external_and_user(timelines: Iterable[Any]) -> bool:
    """Whether a CDC source's `External(x)` meets a user timeline `User(x)` of the same name."""
    timelines = set(timelines)
    return any(isinstance(t, External) and User(t.name) in timelines for t in timelines)


SUITE = Suite(
    name="timelines",
    doc="Dataflows spanning several timelines are rejected before running, naming every input; others run.",
    properties=(
        Property(
            name="dataflows_match_model",
            doc="Rejections and outputs equal the model's.",
            draw=draw_timelines_history,
            check=differential(observe, "observe_timelines"),
            events=events,
        ),
        Property(
            name="multi_timeline_rejected_single_runs",
            doc="Rejected iff the inputs span 2+ timelines; the rejection names each input; others run.",
            draw=draw_timelines_history,
            check=check_rejections,
            events=events,
            reference=Reference.ORACLE,
        ),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    required_events=(
        "multi-timeline dataflow rejected",
        "rejected through a view or MV",
        "External(x) and User(x) rejected together",
        "dataflow over constants only (no timeline)",
        "single-timeline dataflow ran (EpochMilliseconds)",
        "single-timeline dataflow ran (External)",
        "single-timeline dataflow ran (User)",
        "single-timeline dataflow ran (Counter)",
    ),
    domains=("total",),
)
