"""The *resumption* suite: bounded input reliance under crashes, restarts and upstream compaction.

Histories from `frontier_harness.properties.checks.ingestion.strategies.ingestion`. `observe` runs the model
pipeline (`frontier_harness.model.ingestion.ingestion`) and records, at each step:

- `committed`: the offset frontier committed upstream (checkpoints and restarts);
- `durable_ids`: `(data, count)` in the data shard when it was committed, and
  `remap_latest`: the durable remap's latest source upper then;
- `resumed` / `upstream_start`: a restart's offset resumption frontier and the
  upstream's per-partition compaction points `(partition, first offset)`;
- `remap_before` / `remap_after`: `(t, R(t))` for every `t` from the new since to
  the upper, around a remap compaction;
- at the end (after an implicit restart and a final ingest one tick past the
  last): `data` (the data shard's updates), `remap` (bindings) and `remap_since`.

Properties: the laws (nothing lost or duplicated, equal to the uninterrupted run;
commits never regress nor pass what is durable in both shards; restarts never
need compacted offsets; `R(t)` unchanged by compaction at and beyond `since`)
checked on any implementation's observations, and Spark equal to the model.

Required hard cases (docs/required-events.md): a crash at every point between the
durable writes (remap append, data append, upstream commit, remap compaction, in both
checkpoint orders), restarts after crashes and upstream compactions, a restart resuming
exactly at the upstream's compaction point, a second crash after a restart (three
sessions), a restart with nothing to recover, a checkpoint that commits nothing new, an
ingest at a tick not past the last; a partition discovered late only in `partitioned`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from frontier_harness.model.errors import ModelError
from frontier_harness.model.ingestion.ingestion import Pipeline, checkpoint, ingest, restart
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import PartitionedTime
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import (
    Fault,
    IngestionAction,
    IngestionArg,
    IngestionStep,
    ResumptionLabel,
    final_tick,
    ingestion_steps,
)
from frontier_harness.properties.checks.ingestion.strategies.ingestion import draw_ingestion_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import (
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    differential,
    model_or_error,
    observations,
)

DOMAINS = ("total", "partitioned")


def observe(history: History) -> Observation:
    """The model pipeline's observations (see the module docstring)."""
    domain, observed = history.time_domain, Observation()
    pipeline, steps = Pipeline.start(domain), ingestion_steps(history)
    for step in steps:
        pipeline = _apply(pipeline, step, observed)
    end = len(history.actions)
    pipeline = ingest(_restart(pipeline, end, observed), final_tick(steps))
    durable = pipeline.durable
    observed[(end + 1, ResumptionLabel.DATA)] = frozenset(
        (u.data, u.time, u.diff) for u in durable.data.updates
    )
    observed[(end + 1, ResumptionLabel.REMAP)] = frozenset(
        (b.from_time, b.into_time, b.diff) for b in durable.remap.bindings
    )
    observed[(end + 1, ResumptionLabel.REMAP_SINCE)] = frozenset(durable.remap.since)
    return observed


def _apply(pipeline: Pipeline, step: IngestionStep, observed: dict) -> Pipeline:
    match step.action:
        case IngestionAction.PRODUCE:
            assert step.partition is not None  # a produce's argument (`IngestionStep.of`)
            return attrs.evolve(pipeline, upstream=pipeline.upstream.produce(step.partition, step.data))
        case IngestionAction.UPSTREAM_COMPACT:
            return attrs.evolve(pipeline, upstream=pipeline.upstream.compact())
        case IngestionAction.INGEST:
            assert step.tick is not None  # an ingest's argument (`IngestionStep.of`)
            return ingest(pipeline, step.tick, step.fault)
        case IngestionAction.CHECKPOINT:
            after = checkpoint(pipeline, step.fault, step.compact_first)
            if pipeline.running:
                _commit(pipeline, after, step.step, observed)
                _compaction(pipeline.durable.remap, after.durable.remap, step.step, observed)
            return after
    return _restart(pipeline, step.step, observed)


def _restart(pipeline: Pipeline, step: int, observed: dict) -> Pipeline:
    after = restart(pipeline)
    observed[(step, ResumptionLabel.UPSTREAM_START)] = frozenset(enumerate(pipeline.upstream.start))
    observed[(step, ResumptionLabel.RESUMED)] = frozenset(after.upstream.committed or ())
    _commit(pipeline, after, step, observed)
    return after


def _commit(before: Pipeline, after: Pipeline, step: int, observed: dict) -> None:
    durable = before.durable
    observed[(step, ResumptionLabel.COMMITTED)] = frozenset(after.upstream.committed or ())
    ids = Counter[str]()
    for u in durable.data.updates:
        ids[u.data] += u.diff
    observed[(step, ResumptionLabel.DURABLE_IDS)] = frozenset(ids.items())
    observed[(step, ResumptionLabel.REMAP_LATEST)] = frozenset(durable.remap.latest())


def _compaction(before, after, step: int, observed: dict) -> None:
    if after.since == before.since:
        return
    start, upper = next(iter(after.since)), next(iter(after.upper))
    observed[(step, ResumptionLabel.REMAP_BEFORE)] = frozenset(
        (t, frozenset(before.at(t))) for t in range(start, upper)
    )
    observed[(step, ResumptionLabel.REMAP_AFTER)] = frozenset(
        (t, frozenset(after.at(t))) for t in range(start, upper)
    )


def uninterrupted(history: History) -> History:
    """The same history without faults and restarts: the run every crashy run must end equal to."""
    kept = []
    for a in history.actions:
        if a.name == IngestionAction.RESTART:
            continue
        kept.append(attrs.evolve(a, args={k: v for k, v in a.args.items() if k != IngestionArg.FAULT}))
    return History(history.domain, tuple(kept))


def check_laws(impl: Any, histories: Sequence[History]) -> list[Outcome]:
    """The resumption laws on `impl`'s observations of each history and of its uninterrupted run."""
    valid, outcomes = [], {}
    for i, h in enumerate(histories):
        expected = model_or_error(observe, h)
        if isinstance(expected, ModelError):
            outcomes[i] = Outcome.model_rejected(expected)
        else:
            valid.append(i)
    batch = [histories[i] for i in valid] + [uninterrupted(histories[i]) for i in valid]
    observed = observations(impl, "observe_resumption", batch)
    for k, i in enumerate(valid):
        outcomes[i] = laws(histories[i], observed[k], observed[k + len(valid)])
    return [outcomes[i] for i in range(len(histories))]


def laws(history: History, obs: Observation, calm: Observation) -> Outcome:
    """The first broken law, as a failing Outcome naming the step; ok if all hold."""
    for law in (_nothing_lost, _commits, _restarts, _compactions):
        broken = law(history, obs, calm)
        if broken is not None:
            step, message = broken
            return Outcome(ok=False, message=message, expected=None, actual=obs, step=step)
    return Outcome(ok=True)


def _counts(obs: Observation, history: History) -> dict:
    counts = Counter[str]()
    for data, _time, diff in obs[(len(history.actions) + 1, ResumptionLabel.DATA)]:
        counts[data] += diff
    return {d: n for d, n in counts.items() if n}


def _nothing_lost(history: History, obs: Observation, calm: Observation):
    produced = {a.args[Arg.DATA]: 1 for a in history.actions if a.name == IngestionAction.PRODUCE}
    got, expected = _counts(obs, history), _counts(calm, uninterrupted(history))
    end = len(history.actions) + 1
    if got != expected or got != produced:
        lost = sorted(set(produced) - set(got))
        extra = sorted(d for d, n in got.items() if n != produced.get(d))
        return (
            end,
            f"final data shard differs from the uninterrupted run: lost {lost}, duplicated/unknown {extra}",
        )
    return None


def _record_times(history: History) -> dict:
    """Each record's FromTime, restated from the seed (the model's upstream log is part of what this suite's
    model lane judges): the n-th record of a partition has offset n; an LSN log's time is the offset, a
    partitioned log's the point `[p, p]@n`.

    >>> from frontier_harness.properties.engine.history import Action
    >>> produce = lambda p, d: Action("produce", {"partition": p, "data": d})
    >>> _record_times(History("partitioned", (produce(0, "a"), produce(1, "b"), produce(0, "c"))))
    {'a': [0,0]@0, 'b': [1,1]@0, 'c': [0,0]@1}
    >>> _record_times(History("total", (produce(0, "a"), produce(0, "b"))))
    {'a': 0, 'b': 1}
    """
    total = history.time_domain.name == "total"
    offsets: Counter[int] = Counter()  # partition -> its next record's offset
    times: dict[str, Any] = {}
    for a in history.actions:
        if a.name == IngestionAction.PRODUCE:
            p = a.args[IngestionArg.PARTITION]
            times[a.args[Arg.DATA]] = offsets[p] if total else PartitionedTime.point(p, offsets[p])
            offsets[p] += 1
    return times


def _commits(history: History, obs: Observation, calm: Observation):
    domain, times, previous = history.time_domain, _record_times(history), None
    for step in sorted(s for s, label in obs if label == ResumptionLabel.COMMITTED):
        committed = Antichain.of(domain, obs[(step, ResumptionLabel.COMMITTED)])
        if previous is not None and not previous.le(committed):
            return step, f"committed offset frontier regressed from {previous!r} to {committed!r}"
        latest = Antichain.of(domain, obs[(step, ResumptionLabel.REMAP_LATEST)])
        if not committed.le(latest):
            return step, f"committed {committed!r} passes the durable remap's latest source upper {latest!r}"
        durable = {d for d, n in obs[(step, ResumptionLabel.DURABLE_IDS)] if n > 0}
        missing = sorted(d for d, t in times.items() if not committed.less_equal(t) and d not in durable)
        if missing:
            return step, f"committed {committed!r} covers records not in the data shard: {missing}"
        previous = committed
    return None


def _restarts(history: History, obs: Observation, calm: Observation):
    domain = history.time_domain
    for step in sorted(s for s, label in obs if label == ResumptionLabel.RESUMED):
        resumed = Antichain.of(domain, obs[(step, ResumptionLabel.RESUMED)])
        for partition, first in sorted(obs[(step, ResumptionLabel.UPSTREAM_START)]):
            needed = _first_needed(domain.name, resumed, partition)
            if needed is not None and needed < first:
                return (
                    step,
                    f"restart at {resumed!r} needs offset {needed} of partition {partition}, "
                    f"compacted to {first}",
                )
    return None


def _first_needed(domain_name: str, resumed: Antichain, partition: int) -> int | None:
    """The seed's rule, restated here (the model's `needed_offset` is among what this judges): a reader
    resumed at a frontier still needs, of a partition, the least offset of the elements covering it
    (an LSN log's one partition is covered by every element); None if none covers it."""
    if domain_name == "total":
        return min(resumed, default=None)
    return min((e.offset for e in resumed if e.lo <= partition <= e.hi), default=None)


def _compactions(history: History, obs: Observation, calm: Observation):
    for step in sorted(s for s, label in obs if label == ResumptionLabel.REMAP_AFTER):
        before, after = (
            dict(obs[(step, ResumptionLabel.REMAP_BEFORE)]),
            dict(obs[(step, ResumptionLabel.REMAP_AFTER)]),
        )
        changed = sorted(t for t in before if before[t] != after.get(t))
        if changed:
            t = changed[0]
            return step, f"remap compaction changed R({t}) from {set(before[t])} to {set(after.get(t, ()))}"
    return None


def events(history: History) -> list[str]:
    """Hard cases this history reaches."""
    names, found = [a.name for a in history.actions], set()
    for i, a in enumerate(history.actions):
        fault = a.args.get(IngestionArg.FAULT)
        if fault:
            found.add(f"crash {fault}")
            if IngestionAction.RESTART in names[i + 1 :]:
                found.add("restart after a crash")
        if a.name == IngestionAction.RESTART and IngestionAction.UPSTREAM_COMPACT in names[:i]:
            found.add("restart after upstream compaction")
        if a.name == IngestionAction.CHECKPOINT and i > 0 and names[i - 1] == IngestionAction.RESTART:
            found.add("checkpoint right after a restart")
    for a in _compacting_checkpoints(history):
        if a.args.get(IngestionArg.COMPACT_FIRST):
            found.add("remap compacted before the upstream commit")
            if a.args.get(IngestionArg.FAULT) == Fault.AFTER_COMPACTION:
                found.add("crash between the remap compaction and the upstream commit")
        else:
            found.add("upstream commit before the remap compaction")
    found |= _boundary_events(history)
    if history.domain == "partitioned":
        first_ingest = names.index(IngestionAction.INGEST) if IngestionAction.INGEST in names else len(names)
        if any(
            a.name == IngestionAction.PRODUCE and a.args[IngestionArg.PARTITION] > 0
            for a in history.actions[first_ingest:]
        ):
            found.add("partition discovered after ingestion began")
    return sorted(found)


RESUME_AT_START = "restart resumes exactly at the upstream's compaction point"
SECOND_CRASH = "a second crash after a restart (three sessions)"
CLEAN_RESTART = "restart of a running process"
SAME_COMMIT = "checkpoint that commits what is already committed"
STALE_TICK = "ingest at a tick not past the last"
AFTER_BOTH = "crash after the upstream commit of a compact-first checkpoint"
BOUNDARIES = (RESUME_AT_START, SECOND_CRASH, CLEAN_RESTART, SAME_COMMIT, STALE_TICK, AFTER_BOTH)


def _boundary_events(history: History) -> set[str]:
    """Exact resumption points, sessions, restarts with nothing to recover, commits that change nothing."""
    found, down, crashes, last_tick = set(), False, 0, 0
    for a in history.actions:
        if a.name == IngestionAction.RESTART:
            found |= {CLEAN_RESTART} if not down else set()
            down = False
        elif a.name in (IngestionAction.INGEST, IngestionAction.CHECKPOINT) and not down:
            found |= (
                {STALE_TICK}
                if a.name == IngestionAction.INGEST and a.args[IngestionArg.TICK] <= last_tick
                else set()
            )
            last_tick = max(last_tick, a.args.get(IngestionArg.TICK, 0))
            if a.args.get(IngestionArg.FAULT):
                crashes, down = crashes + 1, True
                found |= {SECOND_CRASH} if crashes > 1 else set()
                if a.args[IngestionArg.FAULT] == Fault.AFTER_COMMIT and a.args.get(
                    IngestionArg.COMPACT_FIRST
                ):
                    found.add(AFTER_BOTH)
    observed = model_or_error(observe, history)  # the run's own model observation of it, made once
    return found if isinstance(observed, ModelError) else found | _observed_events(observed)


def _observed_events(observed: Observation) -> set[str]:
    found, committed = set(), None
    for step, label in sorted(observed):
        if label == ResumptionLabel.RESUMED:
            starts = {p: first for p, first in observed[(step, ResumptionLabel.UPSTREAM_START)] if first > 0}
            if any(starts.get(_partition(t)) == _offset(t) for t in observed[(step, label)]):
                found.add(RESUME_AT_START)
        elif label == ResumptionLabel.COMMITTED:
            now = observed[(step, label)]
            found |= {SAME_COMMIT} if now and now == committed else set()
            committed = now
    return found


def _partition(time: Any) -> int:
    return getattr(time, "lo", 0)


def _offset(time: Any) -> int:
    return getattr(time, "offset", time)


def _compacting_checkpoints(history: History) -> list:
    """The checkpoints that compact the remap (the since advances), found by following the shards' uppers:
    the remap's is one past the last tick minted, the data shard's the remap's when data was last written,
    and a checkpoint compacts to one tick before the earlier of the two."""
    running, remap_upper, data_upper, since, found = True, 1, 0, 0, []
    for a in history.actions:
        fault = a.args.get(IngestionArg.FAULT)
        if a.name == IngestionAction.RESTART:
            running = True
        elif a.name in (IngestionAction.INGEST, IngestionAction.CHECKPOINT) and running:
            if a.name == IngestionAction.INGEST and fault != Fault.MID_REMAP_WRITE:
                remap_upper = max(remap_upper, a.args[IngestionArg.TICK] + 1)
                if fault not in (Fault.AFTER_REMAP_APPEND, Fault.MID_DATA_WRITE):
                    data_upper = remap_upper
            elif a.name == IngestionAction.CHECKPOINT:
                target = min(data_upper, remap_upper) - 1
                if target > since and (fault != Fault.AFTER_COMMIT or a.args.get(IngestionArg.COMPACT_FIRST)):
                    since = target
                    found.append(a)
            running = fault is None
    return found


FAULT_EVENTS = tuple(f"crash {f}" for f in Fault)

SUITE = Suite(
    name="resumption",
    doc="Bounded input reliance: resumption frontiers, upstream commits and compaction, crashes, restarts.",
    properties=(
        Property(
            name="resumption_laws",
            doc="Nothing lost or duplicated vs the uninterrupted run; commits monotone and durable; "
            "restarts never need compacted offsets; remap compaction keeps R(t) from since on.",
            draw=draw_ingestion_history,
            check=check_laws,
            events=events,
        ),
        Property(
            name="observations_match_model",
            doc="The pipeline's commits, restarts and final shards equal the model's.",
            draw=draw_ingestion_history,
            check=differential(observe, "observe_resumption"),
            events=events,
            reference=Reference.MODEL,
        ),
    ),
    default_impl="spark",
    reference=Reference.LAWS,  # against the uninterrupted run
    required_events=FAULT_EVENTS
    + (
        "restart after a crash",
        "restart after upstream compaction",
        "checkpoint right after a restart",
        "partition discovered after ingestion began",
        "upstream commit before the remap compaction",
        "remap compacted before the upstream commit",
        "crash between the remap compaction and the upstream commit",
        *BOUNDARIES,
    ),
    event_domains={"partition discovered after ingestion began": ("partitioned",)},
    domains=DOMAINS,
)
