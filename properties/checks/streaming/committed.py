"""What a streaming trial committed, batch by batch: the model's reclocked collection through the offset log.

The streaming suite, its `--job` oracle (`streaming_job`) and the stateful suite read a trial's
observation the same way: the offset log is a remap (batch `N` binds IntoTime `N + 1` to the
source's end frontier), and the records produced so far, reclocked through it
(`frontier_harness.model.reclocking.reclock`), fall into the batches that logged them.
`committed_batches` gives each committed batch its records; `up_steps` the steps a suite judges.
A record is `(data, partition, offset)`, or `(key, event_time, data, partition, offset)` when the
history's `produce`s name a key and an event time (the stateful suite's).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from frontier_harness.model.errors import ModelError
from frontier_harness.model.reclocking.reclock import reclock
from frontier_harness.model.reclocking.remap import Remap
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import Partitioned, PartitionedTime
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import CrashPoint, ErrorKind, StreamingAction, StreamingLabel
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Outcome

DOMAIN = Partitioned()


def observed_steps(obs: Observation) -> list[int]:
    """The steps a trial observed (after each trigger, restart and the final step)."""
    return sorted(step for step, label in obs if label == StreamingLabel.OFFSETS)


def rerun_after_sink(obs: Observation) -> set[int]:
    """The batches a trial saw Spark run twice: logged and uncommitted at a step `after_sink` crashed (their
    output written), committed at a later step.

    >>> rerun_after_sink({(1, StreamingLabel.OFFSETS): frozenset({(0, ()), (1, ())}),
    ...     (1, StreamingLabel.COMMITS): frozenset({0}), (1, StreamingLabel.CRASH): frozenset({("after_sink",)}),
    ...     (2, StreamingLabel.OFFSETS): frozenset({(0, ()), (1, ())}), (2, StreamingLabel.COMMITS): frozenset({0, 1})})
    {1}
    """
    steps = observed_steps(obs)
    found: set[int] = set()
    for i, step in enumerate(steps):
        if (CrashPoint.AFTER_SINK,) not in obs.get((step, StreamingLabel.CRASH), ()):
            continue
        left = {b for b, _ in obs[(step, StreamingLabel.OFFSETS)]} - obs[(step, StreamingLabel.COMMITS)]
        found |= left & set().union(*(obs[(s, StreamingLabel.COMMITS)] for s in steps[i + 1 :]))
    return found


def as_frontier(elements: Any) -> Antichain:
    """An offset frontier as the trials report it (`[lo, hi, offset]` triples), as a model antichain."""
    return Antichain.of(DOMAIN, [PartitionedTime(*e) for e in elements])


def record_of(args: dict, partition: int, offset: int) -> tuple:
    """A produced record as the source reads it: `(data, partition, offset)`, or with its key and event time
    first when the history names them."""
    if IngestionArg.EVENT_TIME in args:
        return (args[IngestionArg.KEY], args[IngestionArg.EVENT_TIME], args[Arg.DATA], partition, offset)
    return (args[Arg.DATA], partition, offset)


def produced(history: History, before: int, whole: bool = False) -> list[Update]:
    """The records produced before `before`, at their FromTime (partition, offset); `whole` keeps each
    record (`record_of`) as its data, else its `data` alone."""
    offsets: Counter[int] = Counter()  # partition -> next offset
    found = []
    for action in history.actions[:before]:
        if action.name == StreamingAction.PRODUCE:
            p = action.args[IngestionArg.PARTITION]
            record = record_of(action.args, p, offsets[p]) if whole else action.args[Arg.DATA]
            found.append(Update(record, PartitionedTime.point(p, offsets[p]), 1))
            offsets[p] += 1
    return found


def committed_batches(
    history: History, obs: Observation, step: int, uncommitted: bool = False
) -> dict[int, list] | Outcome:
    """Batch id -> its records (`record_of`), for the batches committed at `step` (with `uncommitted`,
    every batch logged): the model's reclocked collection through the remap the offset log is (batch `N`
    at IntoTime `N + 1`). A failing outcome when the query failed, the offset log is no remap, or (at
    the final step) a record was never processed."""
    if (step, StreamingLabel.ERROR) in obs:
        return failed_at(step, failure(obs[(step, StreamingLabel.ERROR)]), obs, StreamingLabel.ERROR)
    try:
        remap = Remap.minted(
            DOMAIN, [(as_frontier(f), b + 1) for b, f in sorted(obs[(step, StreamingLabel.OFFSETS)])]
        )
    except ModelError as exc:
        return failed_at(
            step,
            f"the offset log is not a remap, nothing to reclock through: {exc}",
            obs,
            StreamingLabel.OFFSETS,
        )
    reclocked = reclock(remap, produced(history, step, whole=True))
    committed = obs[(step, StreamingLabel.COMMITS)]
    if step == len(history.actions):
        unbound = sorted(_data(u.data) for u in reclocked.pending)
        never = sorted(
            f"{_data(u.data)}@{u.time - 1}" for u in reclocked.updates if u.time - 1 not in committed
        )
        if unbound or never:
            message = f"records never processed: unbound {unbound}, in batches never committed {never}"
            return failed_at(step, message, obs, StreamingLabel.COMMITS)
    batches: dict[int, list] = {}
    for u in reclocked.updates:
        if uncommitted or u.time - 1 in committed:
            batches.setdefault(u.time - 1, []).extend([u.data] * u.diff)
    return batches


def _data(record: tuple) -> Any:
    return record[-3]  # `data` comes third from the end in either shape


def up_steps(obs: Observation) -> list[int]:
    """The observed steps, but those after which the query was down (the oracle skips them)."""
    return [
        step
        for step in observed_steps(obs)
        if (step, StreamingLabel.DOWN) not in obs or (step, StreamingLabel.ERROR) in obs
    ]


def failed_at(step: int, message: str, obs: Observation, label: str) -> Outcome:
    """A failing outcome at `step`, showing the observation's `label`, crash and error rows up to it."""
    shown = {
        key: value
        for key, value in obs.items()
        if key[0] <= step and key[1] in (label, StreamingLabel.CRASH, StreamingLabel.ERROR)
    }
    return Outcome(ok=False, message=message, expected=None, actual=shown, step=step)


def failure(error: frozenset[tuple[str, str]]) -> str:
    """A step's `error` rows as a verdict says them: the job's read, or the query, failed.

    >>> failure(frozenset({("the job's read failed", "read(spark) raised OSError: disk")}))
    "the job's read failed: read(spark) raised OSError: disk"
    >>> failure(frozenset({("StreamingQueryException", "boom")}))
    'the query failed: StreamingQueryException boom'
    """
    reads = sorted(text for kind, text in error if kind == ErrorKind.JOB_READ_FAILED)
    return f"{ErrorKind.JOB_READ_FAILED}: {reads[0]}" if reads else f"the query failed: {show(error)}"


def show(rows: frozenset[tuple[Any, ...]]) -> str:
    """Rows as `a b; c d`, sorted."""
    return "; ".join(" ".join(map(str, row)) for row in sorted(rows))
