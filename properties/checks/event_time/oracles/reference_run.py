"""What a crash must not change: a user's processor's output against its own run over the same batches
without a crash (the oracle of `crash_invisible`, issue 52's point 3).

A processor (`transformWithStateInPandas`, `applyInPandasWithState`) is the user's code: no model states
what it outputs. What the seeds do state is that a crash and a restart are invisible in what a correct job
wrote: the query re-runs a batch it logged with the offsets it logged, from the state it committed. So the
reference is the same processor over the same batches, once, without any crash or restart
(`reference_of`): the records of each batch the crashed trial's offset log bound (reclocked through it, as
`stateful_rows.read_step` reads them), produced in their partitions in offset order, every batch run from the
`offsets/N` the trial journaled, at its E(N) and T(N), one batch a start under `once`, in starts that share
their Python workers. So the reference runs the trial's batches and no other: a batch Spark plans without
records once the watermark moved, in the reference's running query but not in a trial whose crash let the
next records arrive first, would drop a record at the watermark the trial kept. Each reference history is
run once (`reference_runs` of the implementation, cached by history) and serves every property; only its
rows and its failures are read (its state store is not).

The processor's timers fire by the watermark Spark hands it: first, the watermark every batch journaled
(`batchWatermarkMs` of `offsets/N`) must be the model's E(N) (`stateful_rows.journaled`: the newest event
time of the batches before it, minus the delay, never going back), and every timer the state held after a
batch must be gone after the next once that batch's clock reached it (`timers_due`, the model's
`timers`). Then the job's writer promises its rows
as `read(spark)` returns them (a `batch_id` column dropped): after every
step that left the crashed query up, `read(spark)` equals, as a multiset of rows, the reference's
`read(spark)` after the reference's batch that holds the last committed batch's records (`held_at`). A
failure names, per key, the rows held more or fewer times than the run without a crash held them.

>>> from frontier_harness.model.event_time.stateful import Batch, Record
>>> h = reference_of("partitioned", [Batch(0, (Record("a", 5, "r0", 0, 0),)), Batch(1, ())], {0: "o", 1: "o"})
>>> [a.name for a in h.actions]
['query', 'produce', 'journal', 'trigger', 'journal', 'trigger']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from frontier_harness.model.event_time.stateful import Batch
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.ingestion import IngestionArg
from frontier_harness.model.vocabulary.streaming import StreamingAction, StreamingLabel, Trigger
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import Step, journaled, read_step
from frontier_harness.properties.checks.event_time.oracles.timers_due import overdue
from frontier_harness.properties.checks.event_time.processor_reached import clocks
from frontier_harness.properties.checks.streaming.committed import failed_at, up_steps
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.suite import Observation, Outcome

SHOWN = 6  # keys named in a message


def reference_of(domain: str, batches: Sequence[Batch], journal: Mapping[int, str]) -> History:
    """The history that runs `batches` without a crash: every batch, each with its records produced in its
    partitions' offset order, then run from the `offsets/N` text the trial journaled (`journal`) in a start
    under `once`, so at the trial's E(N) and T(N), and late rows filtered by its E(N-1): a start runs a logged
    batch without a commit from its offsets, at its clocks. Every batch the trial ran is run, those without
    records too, and no other: in one running query Spark plans a batch without records whenever the
    watermark moved, so a crash that spared the trial one would move a record at the watermark from late to
    kept. Its starts are `continuous`: they share their Python workers, as the batches of one running query
    do, where each of the trial's starts is a restart.

    >>> h = reference_of("partitioned", [Batch(0, ()), Batch(1, ())], {0: "v1", 1: "v1"})
    >>> [(a.name, a.args.get("batch")) for a in h.actions]
    [('query', None), ('journal', 0), ('trigger', None), ('journal', 1), ('trigger', None)]
    """
    query: dict[str, Any] = {IngestionArg.TRIGGER: Trigger.ONCE, IngestionArg.CONTINUOUS: True}
    actions = [Action(StreamingAction.QUERY, query)]
    for batch in batches:
        for r in sorted(batch.records, key=lambda r: (r.partition, r.offset)):
            args: dict[str, Any] = {
                IngestionArg.PARTITION: r.partition,
                IngestionArg.KEY: r.key,
                IngestionArg.EVENT_TIME: r.event_time,
                Arg.DATA: r.data,
            }
            actions.append(Action(StreamingAction.PRODUCE, args))
        offsets: dict[str, Any] = {IngestionArg.BATCH: batch.id, IngestionArg.OFFSETS: journal[batch.id]}
        actions.append(Action(StreamingAction.JOURNAL, offsets))
        actions.append(Action(StreamingAction.TRIGGER, {}))
    return History(domain, tuple(actions))


def journaled_offsets(history: History, obs: Observation) -> dict[int, str]:
    """The text of each `offsets/N` the trial journaled, by batch, as its final step read them."""
    return dict(obs.get((len(history.actions), StreamingLabel.OFFSET_FILES), frozenset()))


def trigger_of(history: History) -> str:
    """The trigger a trial's query runs under: its `query` action's (a processing-time trigger without one).

    >>> trigger_of(History("partitioned", (Action(StreamingAction.QUERY, {IngestionArg.TRIGGER: "availableNow"}),)))
    'availableNow'
    """
    query = next((a for a in history.actions if a.name == StreamingAction.QUERY), None)
    return query.args.get(IngestionArg.TRIGGER, Trigger.PROCESSING_TIME) if query else Trigger.PROCESSING_TIME


def held_at(reference: History, batches: Sequence[Batch], committed: frozenset[int]) -> int:
    """The reference's step after which it has run the `committed` batches (its query action, step 0, when
    none is)."""
    run = [b.id for b in batches]
    last = [b for b in run if b in committed]
    if not last:
        return 0
    triggers = [i for i, a in enumerate(reference.actions) if a.name == StreamingAction.TRIGGER]
    return triggers[run.index(last[-1])]


def trial_of(history: History, obs: Observation, plan: Any) -> Step | Outcome:
    """The crashed trial at its final step, as the model reads it."""
    return read_step(history, obs, len(history.actions), plan)


def crash_invisible(
    history: History,
    obs: Observation,
    trial: Step,
    reference: History,
    ref_obs: Observation,
    time_mode: str | None = None,
) -> Outcome:
    """The journaled watermarks are the model's, every timer fired once its batch's clock (by `time_mode`)
    reached it (`timers_due`), and after every up step `read(spark)` equals the reference's at `held_at` (see
    the module)."""
    message = journaled(obs, trial)
    if message is not None:
        return failed_at(trial.step, message, obs, StreamingLabel.OFFSET_METADATA)
    final = len(history.actions)
    late = overdue(obs.get((final, StreamingLabel.PROCESSOR_STATE), frozenset()), clocks(obs, time_mode))
    if late is not None:
        return failed_at(final, late, obs, StreamingLabel.PROCESSOR_STATE)
    error = next((v for (s, label), v in sorted(ref_obs.items()) if label == StreamingLabel.ERROR), None)
    if error:
        return Outcome(ok=False, message=f"the run without a crash failed: {sorted(error)[0]}", step=None)
    for step in up_steps(obs):
        committed = frozenset(obs[(step, StreamingLabel.COMMITS)])
        at = held_at(reference, trial.batches, committed)
        actual = Counter(dict(obs.get((step, StreamingLabel.JOB_ROWS), frozenset())))
        expected = Counter(dict(ref_obs.get((at, StreamingLabel.JOB_ROWS), frozenset())))
        if actual != expected:
            return failed_at(
                step, _differ(step, committed, obs, actual, expected), obs, StreamingLabel.JOB_ROWS
            )
    return Outcome(ok=True)


def _differ(
    step: int, committed: frozenset[int], obs: Observation, actual: Counter, expected: Counter
) -> str:
    starts = len(obs.get((step, StreamingLabel.RUNS), ()))
    keys: dict[Any, list[str]] = {}
    for row in sorted(set(actual) | set(expected), key=repr):
        if actual[row] != expected[row]:
            keys.setdefault(dict(row).get("key"), []).append(
                f"{_show(row)} held {actual[row]}x, {expected[row]}x without a crash"
            )
    shown = [f"key {k!r}: {'; '.join(rows)}" for k, rows in list(keys.items())[:SHOWN]]
    more = f" (and {len(keys) - SHOWN} more keys)" if len(keys) > SHOWN else ""
    return (
        f"after step {step} (batches {sorted(committed)} committed, over {starts} starts of the query) read(spark) "
        f"differs from the same processor's run over the same batches without a crash or restart: "
        f"{' | '.join(shown)}{more}"
    )


def _show(row: tuple) -> str:
    return "(" + ", ".join(f"{name}={value!r}" for name, value in row) + ")"
