"""The seed's dataflow-expiration rule, restated from a history's plain data (never `frontier_harness.model.catalog.expiration`).

`dataflow-expiration.md`: a maintained dataflow over epoch inputs, without a refresh
schedule, expires at how far its inputs' upper will have advanced at the point of
expiration (the replica's start plus its offset; further when they run ahead of the wall
clock when it starts), one tick on. Its `until` (or its `UP TO`, if earlier) drops every
diff from there on "in `mfp.evaluate()`", where temporal filters produce them: a dataflow
whose every diff comes out of a temporal filter (`late_diffs_dropped`) keeps none. A
dataflow with no input that follows the wall clock (only load generators, constants or
sources of another timeline) never expires.

Written for the expiration histories' vocabulary (`frontier_harness.model.vocabulary.catalog`): a table
and an epoch source other than a load generator follow the wall clock, at the skew of
their `skew{name, wall, by}` actions (0 before the first).

>>> from frontier_harness.properties.engine.history import Action, History
>>> h = History("total", (
...     Action("create_table", {"name": "t"}), Action("create_index", {"name": "i", "on": "t"}),
...     Action("set_offset", {"offset": 10}), Action("skew", {"name": "t", "wall": 0, "by": 2})))
>>> expiration_at(h, "i", 0), never_expires(h, "i"), leads_at(h, 0), must_drop_from(h, "i", 0)
(13, False, {'t': 2}, None)
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.catalog import (
    CHILD_FIELDS,
    CatalogAction,
    CatalogArg,
    PlanField,
    PlanNode,
    SourceKind,
)
from frontier_harness.properties.engine.history import Action, History


def _creations(history: History) -> dict[str, Action]:
    return _read(history).made


class _Read:
    """What every rule here reads of one history, found once: its objects by name, its skews, and the
    closures and leads asked for so far (a suite judges a history with several of these rules)."""

    def __init__(self, history: History):
        self.made = {
            a.args[CatalogArg.NAME]: a
            for a in history.actions
            if a.name.startswith("create_") or a.name == CatalogAction.SELECT
        }
        self.skews = _skews(history)
        self.closures: dict[str, set[str]] = {}
        self.leads: dict[int, dict[str, int]] = {}


_RECENT: dict[int, tuple[History, _Read]] = {}  # by identity: a history's args are dicts, not hashable
RECENT = 16  # histories whose reading is kept (each is judged by a few rules in a row)


def _read(history: History) -> _Read:
    hit = _RECENT.get(id(history))
    if hit is None or hit[0] is not history:
        if len(_RECENT) >= RECENT:
            del _RECENT[next(iter(_RECENT))]
        hit = _RECENT[id(history)] = (history, _Read(history))
    return hit[1]


def _gets(plan: dict) -> set[str]:
    if plan[PlanField.NODE] == PlanNode.GET:
        return {plan[PlanField.NAME]}
    children = [plan[k] for k in CHILD_FIELDS if k in plan] + list(plan.get(PlanField.INPUTS, ()))
    return set().union(*(_gets(c) for c in children))


def _reads(action: Action) -> set[str]:
    if action.name == CatalogAction.CREATE_INDEX:
        return {action.args[CatalogArg.ON]}
    return _gets(action.args[CatalogArg.PLAN]) if CatalogArg.PLAN in action.args else set()


def closure(history: History, name: str) -> set[str]:
    """`name` and every object it reads, directly or not."""
    read = _read(history)
    if name not in read.closures:
        seen: set[str] = set()
        todo = [name]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += sorted(_reads(read.made[n]))
        read.closures[name] = seen
    return set(read.closures[name])


def follows_wall_clock(action: Action) -> bool:
    """A table, or an epoch source that is not a load generator (epoch: no `timeline` or
    `consistency_topic`, and a CDC source only with `epoch_ms_timeline`)."""
    a = action.args
    if action.name == CatalogAction.CREATE_TABLE:
        return True
    if action.name != CatalogAction.CREATE_SOURCE or a[CatalogArg.KIND] == SourceKind.LOAD_GENERATOR:
        return False
    epoch = not a.get(CatalogArg.TIMELINE) and not a.get(CatalogArg.CONSISTENCY_TOPIC)
    return epoch and (a[CatalogArg.KIND] != SourceKind.CDC or bool(a.get(CatalogArg.EPOCH_MS_TIMELINE)))


def upper_at(points: list[tuple[int, int]], wall: int) -> int:
    """A wall-clock leaf's upper at `wall`: the furthest `w + skew(w)` of any `w <= wall`, at least 0."""

    def skew(w: int) -> int:
        return ([by for at, by in points if at <= w] or [0])[-1]

    return max(0, *(w + skew(w) for w in range(wall + 1)))


def _skews(history: History) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for a in history.actions:
        if a.name == CatalogAction.SKEW:
            out.setdefault(a.args[CatalogArg.NAME], []).append(
                (a.args[CatalogArg.WALL], a.args[CatalogArg.BY])
            )
    return out


def leads_at(history: History, start: int) -> dict[str, int]:
    """How far each wall-clock leaf is ahead of the clock (negative: behind) at a start `start`."""
    read = _read(history)
    if start not in read.leads:
        read.leads[start] = {
            n: upper_at(read.skews.get(n, []), start) - start
            for n, a in read.made.items()
            if follows_wall_clock(a)
        }
    return dict(read.leads[start])


def offset(history: History) -> int:
    """The replica's expiration offset (0: disabled)."""
    return (
        [a.args[CatalogArg.OFFSET] for a in history.actions if a.name == CatalogAction.SET_OFFSET] or [0]
    )[-1]


def never_expires(history: History, name: str) -> bool:
    """No input of `name` follows the wall clock (only load generators, constants, other timelines)."""
    made = _creations(history)
    return not any(follows_wall_clock(made[n]) for n in closure(history, name))


def expiration_at(history: History, name: str, start: int) -> int | None:
    """Where `name`'s dataflow, rendered when the replica starts at `start`, expires (its `UP TO` aside).

    `None` when the seed's rule says nothing: expiration disabled, no wall-clock input,
    or a refresh schedule anywhere in its inputs (the model bounds those by the next
    refresh; that is checked against the model, not here).
    """
    made, names = _creations(history), closure(history, name)
    if (
        offset(history) == 0
        or never_expires(history, name)
        or any(made[n].args.get(CatalogArg.REFRESH) for n in names)
    ):
        return None
    ahead = min(lead for n, lead in leads_at(history, start).items() if n in names)
    return start + offset(history) + max(0, ahead) + 1


def late_diffs_dropped(history: History, name: str) -> bool:
    """Whether every diff of `name`'s dataflow comes out of a temporal filter, where its `until` drops it.

    Views are inlined; a materialized view is read as its persisted output, which this
    dataflow's `until` does not reach.
    """
    made = _creations(history)

    def filtered(plan: dict) -> bool:
        if plan[PlanField.NODE] == PlanNode.TEMPORAL:
            return True
        if plan[PlanField.NODE] == PlanNode.GET:
            read = made[plan[PlanField.NAME]]
            return read.name == CatalogAction.CREATE_VIEW and filtered(read.args[CatalogArg.PLAN])
        children = [plan[k] for k in CHILD_FIELDS if k in plan] + list(plan.get(PlanField.INPUTS, ()))
        return bool(children) and all(filtered(c) for c in children)

    action = made[name]
    return filtered(
        {PlanField.NODE: PlanNode.GET, PlanField.NAME: action.args[CatalogArg.ON]}
        if CatalogArg.ON in action.args
        else action.args[CatalogArg.PLAN]
    )


def must_drop_from(history: History, name: str, start: int) -> int | None:
    """The time from which `name`'s dataflow, rendered at `start`, keeps no diff: `expiration_at`, or its
    `UP TO` if earlier (`None`: the rule says nothing, or not every diff comes out of a temporal filter)."""
    expiration, up_to = (
        expiration_at(history, name, start),
        _creations(history)[name].args.get(CatalogArg.UP_TO),
    )
    if expiration is None or not late_diffs_dropped(history, name):
        return None
    return expiration if up_to is None else min(expiration, up_to)
