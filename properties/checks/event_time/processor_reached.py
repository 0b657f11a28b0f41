"""The hard cases a user's processor's trial reached, read from the state it left after every committed batch
(`processor_state` at the final step: its value states and timers, read from the checkpoint), never from the
history it meant to run.

- `TIMER_AFTER_RESTART`: a timer registered in the state the query had committed when it went down (a crash,
  a SIGKILL, or a plain restart), gone from the state of a batch committed after it: the timer fired (or the
  processor deleted it) in a start of the query after the restart;
- `TIMER_RERUN`: a timer registered in the state of the batch before one that `after_sink` crashed (logged,
  its output written, uncommitted), gone from the state that batch committed when it ran again: the timer
  fired in a batch Spark ran twice, so its output was written twice (an appending writer holds it twice);
- `STATE_ACROSS_KILL`: a value-state entry in the state the query had committed when its driver was seen
  killed by SIGKILL, changed or cleared by a batch committed after the kill: the processor read and wrote,
  in a new driver with a new JVM, a value written before the kill.

>>> processor_events("event_time")  # doctest: +NORMALIZE_WHITESPACE
('a timer registered before a restart, fired after it', 'a timer fired in a batch re-run after after_sink',
 'a value written before a SIGKILL, changed after it')
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.event_time import TimeMode
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, StreamingLabel
from frontier_harness.properties.checks.streaming.committed import observed_steps, rerun_after_sink
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation

TIMER_AFTER_RESTART = "a timer registered before a restart, fired after it"
TIMER_RERUN = f"a timer fired in a batch re-run after {CrashPoint.AFTER_SINK}"
STATE_ACROSS_KILL = "a value written before a SIGKILL, changed after it"
TIMERS = "$timers"  # `spark_impl.event_time.processor_state.TIMERS`: the rows of registered timers


def processor_events(time_mode: str | None) -> tuple[str, ...]:
    """The processor's hard cases: a timer across a restart and one fired in a re-run batch when it has timers,
    and state across a kill."""
    timers = (TIMER_AFTER_RESTART, TIMER_RERUN) if time_mode not in (None, TimeMode.NONE) else ()
    return (*timers, STATE_ACROSS_KILL)


def processor_reached(history: History, obs: Observation) -> list[str]:
    """The processor's hard cases the trial's observation shows (see the module)."""
    state = obs.get((len(history.actions), StreamingLabel.PROCESSOR_STATE), frozenset())
    after: dict[int, set[tuple]] = {}
    for batch, _, variable, key, value in state:
        if variable is not None:
            after.setdefault(batch, set()).add((variable, key, value))
    found = {TIMER_RERUN} if _timer_rerun(obs, after) else set()
    for before, killed in _downs(history, obs):
        held = after.get(before, set()) if before is not None else set()
        later = [after.get(b, set()) for b in sorted(after) if before is not None and b > before]
        if any(_timers(held) - _timers(s) for s in later):
            found.add(TIMER_AFTER_RESTART)
        values = {(var, k): v for var, k, v in held if var != TIMERS}
        if killed and any(_changed(values, s) for s in later):
            found.add(STATE_ACROSS_KILL)
    return sorted(found)


def _timers(state: set[tuple]) -> set[tuple]:
    return {(k, v) for var, k, v in state if var == TIMERS}


def _timer_rerun(obs: Observation, after: dict[int, set[tuple]]) -> bool:
    """A batch logged and uncommitted when `after_sink` crashed, committed later, whose state lacks a timer
    the state of the batch before it held (see the module)."""
    return any(_timers(after.get(b - 1, set())) - _timers(after.get(b, set())) for b in rerun_after_sink(obs))


def _changed(values: dict, state: set[tuple]) -> bool:
    now = {(var, k): v for var, k, v in state if var != TIMERS}
    return any(now.get(entry) != value for entry, value in values.items())


def _downs(history: History, obs: Observation) -> list[tuple[int | None, bool]]:
    """Each time the query went down: the newest batch it had committed then, and whether its driver was seen
    killed by SIGKILL (a crash or kill step's commits; a plain restart's, those of the step before it)."""
    found = []
    steps = observed_steps(obs)
    for i, step in enumerate(steps):
        killed = (step, StreamingLabel.KILLED) in obs
        crashed = killed or (step, StreamingLabel.CRASH) in obs
        restart = step < len(history.actions) and history.actions[step].name == StreamingAction.RESTART
        if crashed or (restart and i > 0):
            commits = obs[(step if crashed else steps[i - 1], StreamingLabel.COMMITS)]
            found.append((max(commits, default=None), killed))
    return found
