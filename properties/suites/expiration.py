"""The *expiration* suite: the seed's success criterion for dataflow expiration.

Histories (`properties.catalog_actions.draw_expiration_history`): a table
`t`, a load generator `g`, a constant `k`, maybe a CDC source `c`; a view `v`
with a temporal filter; MVs (with `REFRESH EVERY`/`REFRESH AT`), indexes and
subscribes (`UP TO`); inserts, load-generator ticks, `set_offset`, restarts at
wall-clock times and reads `read{name, wall, time}`. The world is the model's
(`model.catalog.Feed`, `upper_at`, `output_updates`); the history's order only
matters for creation.

**Implementation protocol.** The suite calls
`impl.observe_expiration(domain, histories) -> list[Observation]`, one
observation per history. The model computes `observe` below with
`model.expiration` as it is; Spark (`spark_impl.expiration`) decides the
renderings on the driver and evaluates the dataflows and reads in one job; a
broken implementation is `observe` run with one rule of `model.expiration`
replaced (e.g. `step_one_tick`, `meet_until`, `round_up_to_refresh`,
`source_bound`, `meet_bounds`; see `tests/test_suite_expiration.py`).

Observed, with the replica's offset and with offset 0 (expiration disabled):
- `(step, "read with expiration")` / `(step, "read without")`: what the read
  returns (`served`: contents, or `("not served",)`); a read whose wall-clock
  time is past the enabled replica's expiration is skipped (it must restart).
- `(step, "dataflow NAME")` at each restart: the rendered `(until, expiration)`.
- `(step, "diffs NAME")` at each restart: `(diffs with expiration, without)`.

Properties: `reads_identical_with_and_without_expiration` (the criterion),
`until_is_met_with_the_expiration` (every expiring dataflow's `until` is at or
below its expiration, so the diffs at or beyond it are dropped, and expiration
never processes more diffs), and `observations_match_model` (the whole
observation equals the model's: trivially on the model, the differential check
for Spark). Diffs processed are counted as events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from model import expiration as ex
from model.catalog import Feed
from model.errors import ModelError, ReplicaExpired
from properties.catalog_actions import build_catalog, insert_update
from properties.history import History
from properties.strategies.expiration import draw_expiration_history
from properties.suite import Observation, Outcome, Property, Suite, differential, observe_or_reject

MAINTAINED = ("create_mv", "create_index", "create_subscribe")
NOT_SERVED = frozenset({("not served",)})


def world(history: History) -> tuple:
    """`(catalog, feed, offset, starts)` from the history's plain data."""
    updates: dict[str, list] = {}
    ticks: dict[str, list] = {}
    offset, starts = 0, []
    for action in history.actions:
        a = action.args
        if action.name == "insert":
            updates.setdefault(a["table"], []).append(insert_update(action))
        elif action.name == "tick":
            ticks.setdefault(a["source"], []).append((a["wall"], a["reached"]))
        elif action.name == "set_offset":
            offset = a["offset"]
        elif action.name == "restart":
            starts.append(a["wall"])
    feed = Feed({k: tuple(v) for k, v in updates.items()}, {k: tuple(v) for k, v in ticks.items()})
    return build_catalog(history), feed, offset, tuple(starts)


def _contents(result: dict | None) -> frozenset:
    return NOT_SERVED if result is None else frozenset(result.items())


def observe(history: History) -> Observation:
    """Reads with and without expiration, and each maintained dataflow's rendering and diffs at each restart."""
    catalog, feed, offset, starts = world(history)
    on, off = ex.Replica(offset, starts), ex.Replica(0, starts)
    maintained = [a.args["name"] for a in history.actions if a.name in MAINTAINED]
    observed: Observation = {}
    diffs: dict = {}  # (name, replica expiration) -> diffs processed; reused across restarts and reads

    def processed(name: str, replica_exp: int | None) -> int:
        if (name, replica_exp) not in diffs:
            diffs[(name, replica_exp)] = ex.diffs_processed(catalog, feed, name, replica_exp)
        return diffs[(name, replica_exp)]

    for step, action in enumerate(history.actions):
        a = action.args
        if action.name == "read":
            try:
                with_expiration = ex.served(catalog, feed, on, a["name"], a["wall"], a["time"])
            except ReplicaExpired:
                continue
            observed[(step, "read with expiration")] = _contents(with_expiration)
            observed[(step, "read without")] = _contents(
                ex.served(catalog, feed, off, a["name"], a["wall"], a["time"])
            )
        elif action.name == "restart":
            replica_exp = ex.replica_expiration(a["wall"], offset)
            for name in maintained:
                flow = ex.render(catalog, name, replica_exp)
                observed[(step, f"dataflow {name}")] = frozenset({(flow.until, flow.expiration)})
                observed[(step, f"diffs {name}")] = frozenset(
                    {(processed(name, replica_exp), processed(name, None))}
                )
    return observed


# ---------------------------------------------------------------- properties


def _reads_identical(history: History, obs: Observation) -> Outcome | None:
    for (step, label), value in sorted(obs.items()):
        if label == "read with expiration" and value != obs[(step, "read without")]:
            a = history.actions[step].args
            return Outcome(
                ok=False,
                step=step,
                expected=obs[(step, "read without")],
                actual=value,
                message=f"read of {a['name']!r} at time {a['time']} (wall {a['wall']}): with expiration "
                f"{sorted(value)} != without {sorted(obs[(step, 'read without')])}",
            )
    return None


def _until_met(history: History, obs: Observation) -> Outcome | None:
    for (step, label), value in sorted(obs.items()):
        if label.startswith("dataflow "):
            ((until, expiration),) = value
            if expiration is not None and (until is None or until > expiration):
                return Outcome(
                    ok=False,
                    step=step,
                    actual=value,
                    message=f"{label} at restart step {step}: until {until} is not met with expiration {expiration}",
                )
        if label.startswith("diffs "):
            ((with_e, without),) = value
            if with_e > without:
                return Outcome(
                    ok=False,
                    step=step,
                    actual=value,
                    message=f"{label} at restart step {step}: {with_e} diffs with expiration > {without} without",
                )
    return None


def intrinsic(judge: Callable[[History, Observation], Outcome | None]):
    """A batched check of the implementation's own observations (a rejection is per history)."""

    def check(impl: Any, histories: Sequence[History]) -> list[Outcome]:
        observed = observe_or_reject(impl, "observe_expiration", histories)
        return [
            Outcome.implementation_rejected(obs)
            if isinstance(obs, ModelError)
            else judge(h, obs) or Outcome(ok=True)
            for h, obs in zip(histories, observed)
        ]

    return check


def events(history: History) -> list[str]:
    """Hard cases: expirations set and diffs dropped, refresh and UP TO, no dependence, reads across restarts."""
    try:
        obs = observe(history)
    except ModelError:
        return []
    found: set[str] = set()
    names = {a.args["name"]: a for a in history.actions if a.name in MAINTAINED}
    starts = [a.args["wall"] for a in history.actions if a.name == "restart"]
    for (step, label), value in obs.items():
        if label.startswith("dataflow "):
            ((until, expiration),) = value
            obj = names[label.removeprefix("dataflow ")]
            if expiration is not None:
                found.add("a dataflow expires")
                if obj.args.get("refresh"):
                    found.add("refresh schedule bounds an expiration")
            elif obj.name == "create_subscribe" and obj.args.get("up_to") is not None and until is not None:
                found.add("subscribe UP TO keeps its until")
            else:
                found.add("maintained dataflow without expiration")
        elif label.startswith("diffs "):
            ((with_e, without),) = value
            if with_e < without:
                found.add("expiration dropped diffs")
        elif (
            label == "read with expiration"
            and len(starts) > 1
            and history.actions[step].args["wall"] >= starts[1]
        ):
            found.add("read served after a restart")
            if value != NOT_SERVED:
                found.add("read with data after a restart")
    return sorted(found)


def diffs_metric(histories: Sequence[History]) -> tuple[int, int]:
    """Diffs processed with and without expiration, summed over every dataflow and restart."""
    with_e = without = 0
    for h in histories:
        for (_, label), value in observe(h).items():
            if label.startswith("diffs "):
                ((a, b),) = value
                with_e, without = with_e + a, without + b
    return with_e, without


SUITE = Suite(
    name="expiration",
    doc="Reads are identical with dataflow expiration enabled and disabled, across restarts; until meets the expiration.",
    properties=(
        Property(
            name="reads_identical_with_and_without_expiration",
            doc="Every read the replica serves is the same with the offset set and with 0 (across restarts).",
            draw=draw_expiration_history,
            check=intrinsic(_reads_identical),
            events=events,
        ),
        Property(
            name="until_is_met_with_the_expiration",
            doc="Every expiring dataflow's until is at or below its expiration; expiration never adds diffs.",
            draw=draw_expiration_history,
            check=intrinsic(_until_met),
            events=events,
        ),
        Property(
            name="observations_match_model",
            doc="Reads, renderings and diffs processed equal the model's (for an implementation of its own, e.g. Spark).",
            draw=draw_expiration_history,
            check=differential(observe, "observe_expiration"),
            events=events,
        ),
    ),
    default_impl="spark",
    required_events=(
        "a dataflow expires",
        "expiration dropped diffs",
        "refresh schedule bounds an expiration",
        "subscribe UP TO keeps its until",
        "maintained dataflow without expiration",
        "read served after a restart",
        "read with data after a restart",
    ),
    domains=("total",),
)
