"""The hard cases a user's processor's trial reached, read from the state it left after every committed batch
(`processor_state` at the final step: its value states and timers, read from the checkpoint), never from the
history it meant to run.

- `TIMER_AFTER_RESTART`: a timer registered in the state the query had committed when it went down (a crash,
  a SIGKILL, or a plain restart), gone from the state of a batch committed after it: the timer fired (or the
  processor deleted it) in a start of the query after the restart;
- `STATE_ACROSS_KILL`: a value-state entry in the state the query had committed when its driver was seen
  killed by SIGKILL, changed or cleared by a batch committed after the kill: the processor read and wrote,
  in a new driver with a new JVM, a value written before the kill.

>>> processor_events("event_time")
('a timer registered before a restart, fired after it', 'a value written before a SIGKILL, changed after it')
"""

from __future__ import annotations

from frontier_harness.model.vocabulary.event_time import TimeMode
from frontier_harness.model.vocabulary.streaming import StreamingAction, StreamingLabel
from frontier_harness.properties.checks.streaming.committed import observed_steps
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation

TIMER_AFTER_RESTART = "a timer registered before a restart, fired after it"
STATE_ACROSS_KILL = "a value written before a SIGKILL, changed after it"
TIMERS = "$timers"  # `spark_impl.event_time.processor_state.TIMERS`: the rows of registered timers


def processor_events(time_mode: str | None) -> tuple[str, ...]:
    """The processor's hard cases: a timer across a restart when it has timers, and state across a kill."""
    timers = (TIMER_AFTER_RESTART,) if time_mode not in (None, TimeMode.NONE) else ()
    return (*timers, STATE_ACROSS_KILL)


def processor_reached(history: History, obs: Observation) -> list[str]:
    """The processor's hard cases the trial's observation shows (see the module)."""
    state = obs.get((len(history.actions), StreamingLabel.PROCESSOR_STATE), frozenset())
    after: dict[int, set[tuple]] = {}
    for batch, _, variable, key, value in state:
        if variable is not None:
            after.setdefault(batch, set()).add((variable, key, value))
    found = set()
    for before, killed in _downs(history, obs):
        held = after.get(before, set()) if before is not None else set()
        later = [after.get(b, set()) for b in sorted(after) if before is not None and b > before]
        timers = {(k, v) for var, k, v in held if var == TIMERS}
        if any(timers - {(k, v) for var, k, v in s if var == TIMERS} for s in later):
            found.add(TIMER_AFTER_RESTART)
        values = {(var, k): v for var, k, v in held if var != TIMERS}
        if killed and any(_changed(values, s) for s in later):
            found.add(STATE_ACROSS_KILL)
    return sorted(found)


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
