"""The laws a checkpoint history obeys (see `properties.checkpoint` for its actions).

- `antichain`: each stream's offsets are a frontier (no element below another);
- `monotone`: per stream, the remap minted from the offset log (batch `N` at IntoTime
  `N + 1`, `model.remap.Remap.mint`) never goes back, and batches bind in order, each once;
- `commit after offsets`: a batch is committed only once its offsets are logged;
- `one uncommitted batch`: every planned batch but the last is committed;
- `sink once`: the file sink's log holds each batch at most once;
- `sink after offsets`: the sink holds only batches whose offsets are logged;
- `sink before commit`: every committed batch is in the sink's log (a compaction `N`
  covers every batch up to `N`).

Logs Spark has purged (it keeps the last 100 batches) start at a later batch; the laws
look only at batches from the first one each log still holds.

>>> from properties.history import Action, History
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

from model.antichain import Antichain
from model.domains import parse_domain
from model.errors import ModelError, SourceUpperRegression
from model.remap import Remap, audit
from properties.history import History


@attrs.frozen
class Broken:
    """One broken law: the action (step) where it shows, the law, and what is wrong."""

    step: int
    law: str
    message: str


@attrs.define
class _Stream:
    domain_name: str
    remap: Remap
    batch: int
    frontier: Antichain


def check_log(history: History) -> list[Broken]:
    """Every broken law, by step; `[]` when the log is lawful."""
    found: list[Broken] = []
    streams: dict[str, _Stream] = {}
    planned, committed, sinks = {}, {}, {}
    for step, action in enumerate(history.actions):
        batch = action.args.get("batch")
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
    found += [
        Broken(0, "monotone", f"stream {name}: {v}") for name, s in streams.items() for v in audit(s.remap)
    ]
    return sorted(found, key=lambda b: b.step)


def _bind(streams: dict, step: int, args: dict) -> list[Broken]:
    name, batch = args["source"], args["batch"]
    try:
        domain = parse_domain(args["domain"])
        frontier = Antichain.checked(domain, [domain.decode(e) for e in args["offsets"]])
    except ModelError as exc:
        return [Broken(step, "antichain", f"stream {name} at batch {batch}: {exc}")]
    known = streams.get(name)
    if known is None:
        remap = Remap.initial(domain).mint(frontier, batch + 1)
        streams[name] = _Stream(args["domain"], remap, batch, frontier)
        return []
    if known.domain_name != args["domain"] or batch <= known.batch:
        what = (
            f"is {args['domain']}, was {known.domain_name}" if batch > known.batch else "binds out of order"
        )
        return [
            Broken(step, "monotone", f"stream {name} at batch {batch} {what} (after batch {known.batch})")
        ]
    try:
        remap = known.remap.mint(frontier, batch + 1)
    except SourceUpperRegression:
        return [
            Broken(
                step,
                "monotone",
                f"offsets of stream {name} go back: batch {batch} binds {frontier!r}, "
                f"batch {known.batch} bound {known.frontier!r}",
            )
        ]
    streams[name] = _Stream(known.domain_name, remap, batch, frontier)
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
