"""The hard cases a user's processor's trial reached, read from the state it left after every committed batch
from the newest committed when the query first went down (`processor_state` at the final step: its value, list
and map states and timers, read from the checkpoint; the batches before it hold no case below), never from the
history it meant to run.

- `TIMER_AFTER_RESTART`: a timer registered in the state the query had committed when it went down (a crash,
  a SIGKILL, or a plain restart), gone from the state of a batch committed after it whose clock had reached
  it (`clocks`, the offset log's: `batchWatermarkMs` E(N), or `batchTimestampMs` T(N) for processing-time
  timers): the timer fired (or the processor deleted it once it was due) in a start of the query after the
  restart;
- `TIMER_RERUN`: a timer registered in the state of the batch before one that `after_sink` crashed (logged,
  its output written, uncommitted), gone, and due by that batch's clock, from the state that batch
  committed when it ran again: the timer fired in a batch Spark ran twice, so its output was written twice (an
  appending writer holds it twice);
- `ROWS_AFTER_DOWN`: a row the job wrote, in what its `read(spark)` returned at a step after the query first
  went down: `crash_invisible` compared rows, not two empty reads (a processor that never emits, or a
  window aggregation after it that never completes a window, reaches no other case without it);
- `STATE_ACROSS_KILL`: a state entry (a value, or a key's whole list or map) in the state the query had committed when its driver was seen
  killed by SIGKILL, changed or cleared by a batch committed after the kill: the processor read and wrote,
  in a new driver with a new JVM, a value written before the kill.

A timer gone from the state before its time came was moved or deleted, not fired (an `applyInPandasWithState`
function sets its timeout again at every call: a call with new data may move it), and counts for neither.

>>> due({("k", 5_000), ("k", 9_000)}, 7, {7: 5_000})  # the timer at 9 s was moved: E(7) is 5 s
{('k', 5000)}

>>> processor_events("event_time")  # doctest: +NORMALIZE_WHITESPACE
('a timer registered before a restart, fired after it', 'a timer fired in a batch re-run after after_sink',
 'a row the job wrote, read back after the query went down', 'a value written before a SIGKILL, changed after it')
"""

from __future__ import annotations

from frontier_harness.model.event_time.timers import expired
from frontier_harness.model.vocabulary.event_time import TimeMode
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, StreamingLabel
from frontier_harness.properties.checks.streaming.committed import observed_steps, rerun_after_sink
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation

TIMER_AFTER_RESTART = "a timer registered before a restart, fired after it"
TIMER_RERUN = f"a timer fired in a batch re-run after {CrashPoint.AFTER_SINK}"
ROWS_AFTER_DOWN = "a row the job wrote, read back after the query went down"
STATE_ACROSS_KILL = "a value written before a SIGKILL, changed after it"
TIMERS = "$timers"  # `spark_impl.event_time.processor_state.TIMERS`: the rows of registered timers


def processor_events(time_mode: str | None) -> tuple[str, ...]:
    """The processor's hard cases: a timer across a restart and one fired in a re-run batch when it has timers,
    rows read back after a down, and state across a kill."""
    timers = (TIMER_AFTER_RESTART, TIMER_RERUN) if time_mode not in (None, TimeMode.NONE) else ()
    return (*timers, ROWS_AFTER_DOWN, STATE_ACROSS_KILL)


def processor_reached(history: History, obs: Observation, time_mode: str | None = None) -> list[str]:
    """The processor's hard cases the trial's observation shows (see the module), its timers due by each
    batch's clock (`clocks`)."""
    state = obs.get((len(history.actions), StreamingLabel.PROCESSOR_STATE), frozenset())
    after: dict[int, set[tuple]] = {}
    for batch, _, variable, key, value in state:
        if variable is not None:
            after.setdefault(batch, set()).add((variable, key, value))
    marks = clocks(obs, time_mode)
    found = {TIMER_RERUN} if _timer_rerun(obs, after, marks) else set()
    downs = _downs(history, obs)
    if downs and any(obs.get((s, StreamingLabel.JOB_ROWS)) for s in observed_steps(obs) if s > downs[0][0]):
        found.add(ROWS_AFTER_DOWN)
    for _, before, killed in downs:
        held = after.get(before, set()) if before is not None else set()
        later = [b for b in sorted(after) if before is not None and b > before]
        if any(due(_timers(held) - _timers(after[b]), b, marks) for b in later):
            found.add(TIMER_AFTER_RESTART)
        values = {(var, k): v for var, k, v in held if var != TIMERS}
        if killed and any(_changed(values, after[b]) for b in later):
            found.add(STATE_ACROSS_KILL)
    return sorted(found)


def _timers(state: set[tuple]) -> set[tuple]:
    return {(k, v) for var, k, v in state if var == TIMERS}


def due(gone: set[tuple], batch: int, marks: dict[int, int]) -> set[tuple]:
    """The timers `(key, expiry ms)` of `gone` that batch `batch`'s clock (`clocks`) had reached
    (`timers.expired`; a group's timeout, fired only past it, is among them): those it fired."""
    mark = marks.get(batch)
    return {timer for timer in gone if mark is not None and expired(timer[1], mark)}


def clocks(obs: Observation, time_mode: str | None) -> dict[int, int]:
    """Each logged batch's clock its timers fire by, from the offset log as every step read it: its
    `batchTimestampMs` T(N) for a processor in processing time, else its `batchWatermarkMs` E(N).

    >>> obs = {(1, "offsets"): frozenset(), (1, "offset_metadata"): frozenset({(0, 5_000, 1_700, ())})}
    >>> clocks(obs, "event_time"), clocks(obs, "processing_time")
    ({0: 5000}, {0: 1700})
    """
    field = 1 if time_mode == TimeMode.PROCESSING_TIME else 0
    return {
        b: clock[field]
        for step in observed_steps(obs)
        for b, *clock, _ in obs.get((step, StreamingLabel.OFFSET_METADATA), ())
    }


def _timer_rerun(obs: Observation, after: dict[int, set[tuple]], marks: dict[int, int]) -> bool:
    """A batch logged and uncommitted when `after_sink` crashed, committed later, whose state lacks a due timer
    the state of the batch before it held (see the module)."""
    return any(
        due(_timers(after.get(b - 1, set())) - _timers(after.get(b, set())), b, marks)
        for b in rerun_after_sink(obs)
    )


def _changed(values: dict, state: set[tuple]) -> bool:
    now = {(var, k): v for var, k, v in state if var != TIMERS}
    return any(now.get(entry) != value for entry, value in values.items())


def _downs(history: History, obs: Observation) -> list[tuple[int, int | None, bool]]:
    """Each time the query went down: its step, the newest batch it had committed then, and whether its driver
    was seen killed by SIGKILL (a crash or kill step's commits; a plain restart's, those of the step before it)."""
    found = []
    steps = observed_steps(obs)
    for i, step in enumerate(steps):
        killed = (step, StreamingLabel.KILLED) in obs
        crashed = killed or (step, StreamingLabel.CRASH) in obs
        restart = step < len(history.actions) and history.actions[step].name == StreamingAction.RESTART
        if crashed or (restart and i > 0):
            commits = obs[(step if crashed else steps[i - 1], StreamingLabel.COMMITS)]
            found.append((step, max(commits, default=None), killed))
    return found
