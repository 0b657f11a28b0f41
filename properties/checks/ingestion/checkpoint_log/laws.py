"""The laws a checkpoint history obeys (see `frontier_harness.properties.checks.ingestion.checkpoint_log` for its actions).

- `antichain`: each stream's offsets are a frontier (no element below another);
- `monotone`: per stream, the remap the offset log is (batch `N` binds its offsets at
  IntoTime `N + 1`) never goes back: each batch's frontier is beyond the previous one's in
  the model's frontier order (`Antichain.le`, the rule `Remap.mint` enforces), and batches
  bind in order, each once;
- `commit after offsets`: a batch is committed only once its offsets are logged;
- `one uncommitted batch`: every planned batch but the last is committed;
- `sink once`: the file sink's log holds each batch at most once;
- `sink after offsets`: the sink holds only batches whose offsets are logged;
- `sink before commit`: every committed batch is in the sink's log (a compaction `N`
  covers every batch up to `N`).

Logs Spark has purged (it keeps the last 100 batches) start at a later batch; the laws
look only at batches from the first one each log still holds.

>>> from frontier_harness.properties.engine.history import Action, History
>>> log = lambda *acts: History("total", [Action(n, a) for n, a in acts])
>>> offsets = lambda b, n: ("offsets", {"batch": b, "source": "0", "domain": "total", "offsets": [n]})
>>> check_log(log(offsets(0, 5), ("commit", {"batch": 0}), offsets(1, 9)))
[]
>>> [b.law for b in check_log(log(offsets(0, 5), ("commit", {"batch": 0}), offsets(1, 3)))]
['monotone']
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from frontier_harness.model.antichain import Antichain
from frontier_harness.model.domains import parse_domain
from frontier_harness.model.errors import ModelError
from frontier_harness.properties.engine.history import History


@attrs.frozen
class Broken:
    """One broken law: the action (step) where it shows, the law, and what is wrong."""

    step: int
    law: str
    message: str


@attrs.frozen
class _Bound:
    """A stream's newest binding: its domain, the batch, and the frontier it bound."""

    domain_name: str
    batch: int
    frontier: Antichain


def check_log(history: History) -> list[Broken]:
    """Every broken law, by step; `[]` when the log is lawful."""
    found: list[Broken] = []
    streams: dict[str, _Bound] = {}
    planned: dict[int, int] = {}
    committed: dict[int, int] = {}
    sinks: dict[int, int] = {}
    for step, action in enumerate(history.actions):
        batch = action.args.get("batch", -1)
        if action.name == "offsets":
            planned.setdefault(batch, step)
            if "source" in action.args:
                found += _bind(streams, step, action.args)
        elif action.name == "commit":
            committed[batch] = step
        elif action.name == "sink":
            if batch in sinks:
                found.append(Broken(step, "sink once", f"the sink's log holds batch {batch} twice"))
            sinks.setdefault(batch, step)
    found += _commits(planned, committed)
    if sinks or any(a.name == "file_sink" for a in history.actions):
        found += _sink(planned, committed, sinks)
    return sorted(found, key=lambda b: b.step)


def _bind(streams: dict, step: int, args: dict) -> list[Broken]:
    """One stream's binding against its previous one (linear in the log, unlike minting a `Remap`)."""
    name, batch = args["source"], args["batch"]
    try:
        domain = parse_domain(args["domain"])
        frontier = Antichain.checked(domain, [domain.decode(e) for e in args["offsets"]])
    except ModelError as exc:
        return [Broken(step, "antichain", f"stream {name} at batch {batch}: {exc}")]
    known = streams.get(name)
    streams[name] = _Bound(args["domain"], batch, frontier)
    if known is None:
        return []
    if known.domain_name != args["domain"] or batch <= known.batch:
        what = (
            f"is {args['domain']}, was {known.domain_name}" if batch > known.batch else "binds out of order"
        )
        return [
            Broken(step, "monotone", f"stream {name} at batch {batch} {what} (after batch {known.batch})")
        ]
    if not known.frontier.le(frontier):
        message = (
            f"offsets of stream {name} go back: batch {batch} binds {frontier!r}, "
            f"batch {known.batch} bound {known.frontier!r}"
        )
        return [Broken(step, "monotone", message)]
    return []


def _window(*logs: Iterable[int]) -> int:
    """The first batch every non-empty log still holds."""
    return max((min(log) for log in logs if log), default=0)


def _commits(planned: dict, committed: dict) -> list[Broken]:
    found = []
    start = _window(planned, committed)
    for batch, step in committed.items():
        if batch >= start and batch not in planned:
            found.append(
                Broken(step, "commit after offsets", f"batch {batch} is committed but has no offsets")
            )
    last = max(planned, default=None)
    for batch, step in planned.items():
        if batch >= start and batch != last and batch not in committed:
            found.append(
                Broken(
                    step,
                    "one uncommitted batch",
                    f"batch {batch} was never committed, yet batch {last} was planned",
                )
            )
    return found


def _sink(planned: dict, committed: dict, sinks: dict) -> list[Broken]:
    found = []
    start = _window(planned, sinks)
    for batch, step in sinks.items():
        if batch >= start and batch not in planned:
            found.append(
                Broken(step, "sink after offsets", f"the sink holds batch {batch}, which has no offsets")
            )
    newest = max(sinks, default=-1)
    for batch, step in committed.items():
        if batch > newest:
            found.append(
                Broken(step, "sink before commit", f"batch {batch} is committed but not in the sink's log")
            )
    return found
