"""The stateful suite's properties for a stream-stream join job (`StatefulJoinJob`, `JoinPlan`), judged by the
model's join (`frontier_harness.model.event_time.join`), never by Spark's engine nor by the job's code.

Each history runs as the stateful suite's do (`observe_stateful`: crashes, restarts, SIGKILLs), over two
sources, one per side (`strategies.join`). A joined row is named by the records it joins (its two `data`
columns, `oracles.join_rows`). After every step that left the query up:

- `exactly_once`: the offset log's watermarks are the model's E(N), and the job's `read(spark)` holds,
  as a multiset, each pair the model's join emits from the committed batches and each outer row it emits
  there, once: a failure names the pairs missing, doubled and unexpected, with their records' sides, event
  times and batches.
- `lateness_kept`: what the watermarks decide: no row of a record the model drops as late (its side's
  `event_time <= L(N)`), every pair of records the model keeps that meet, and each outer row exactly when
  the model emits it (once the join's eviction watermark passes its record's bound, never for a record that
  matched, never twice); a failure names the record, its batch and the watermark.
- `state_bounded`: each side's state has a watermark (both sides watermarked, the range bounding that side
  from below), so its rows are evicted; otherwise the side is named as growing without bound. After every
  committed batch N each side's state (read from the checkpoint with Spark's state data source, `joinSide`)
  holds no row the model's eviction bound puts at or below the join's E(N).
- `offset_log_is_remap`, `bounded_input_reliance`, `laws_under_sigkill`: the stateful suite's.

A job that counts the joined rows per key and window (`JoinPlan.counted`) is judged by its counts: under
`exactly_once` the rows are the model's count of the join's pairs per window, each window emitted once its
own watermark, the join's output watermark (the meet of the join's state watermarks and its input), passes
its end; `lateness_kept` does not apply (the rows show no pairs); `state_bounded` judges the join's sides
and, after every committed batch N, that the count's state holds no window ending at or below its own E(N).

The hard cases are counted from what each trial observed (`reached`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from frontier_harness.model.event_time.join import JoinPlan, JoinType, Side
from frontier_harness.model.vocabulary.streaming import CrashPoint, StreamingAction, StreamingLabel, Trigger
from frontier_harness.properties.checks.event_time import stateful
from frontier_harness.properties.checks.event_time.oracles.join_rows import (
    JoinStep,
    actual_counts,
    actual_pairs,
    batch_of,
    count_marks,
    counted_windows,
    expected_counts,
    expected_pairs,
    joined,
    read_join_step,
    records_of,
    show_pairs,
)
from frontier_harness.properties.checks.event_time.oracles.stateful_rows import journaled
from frontier_harness.properties.checks.event_time.reached import REEMIT
from frontier_harness.properties.checks.event_time.strategies.join import draw_join_history, scripted_join
from frontier_harness.properties.checks.streaming import streaming
from frontier_harness.properties.checks.streaming.committed import failed_at, rerun_after_sink, up_steps
from frontier_harness.properties.checks.streaming.strategies.streaming import (
    FIRST_TWO_DIGIT_BATCH,
    RERUN,
    RESTART_AFTER_COMPACTION,
    TWO_DIGITS,
    crashed,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import HistoryDraw, Observation, Outcome, Property, Reference

TRIAL_WAVE = streaming.TRIAL_WAVE
LAWS = (
    "offset_log_is_remap",
    "bounded_input_reliance",
)  # the streaming suite's laws, as the stateful suite's
SHOWN = 6
FAR = 10**12  # an event time beyond every bound: a watermark's lag behind it is its lag everywhere
BOUNDARY = "a pair joined exactly at a bound of the range"
EVICTED = "a row evicted from a side's state by the other side's watermark"
OUTER = "an outer row emitted when the watermark passed its record"
LATE_SIDE = "a record late on one side, dropped"
STATE_READ = "each side's state read after every committed batch"
LAGGED = (
    "a window held after the query's watermark passed its end, emitted once the join's output watermark did"
)
COUNT_READ = "the count's state read after every committed batch"
OUTER_COUNTED = "a window counting an outer row read"
CRASHES = stateful.CRASHES  # a join's trials crash, restart and are killed as a stateful job's
SCRIPTS = {
    **{crashed(p): f"L.ahead R.match crash:{p} restart" for p in CrashPoint},
    **{f"{crashed(p)} (SIGKILL)": f"L.ahead R.match kill:{p} restart" for p in CrashPoint},
    RERUN: f"L.ahead R.match crash:{CrashPoint.AFTER_SINK} restart",
    RESTART_AFTER_COMPACTION: f"L.ahead trigger R.match crash:{CrashPoint.AFTER_OFFSETS} compact restart",
    BOUNDARY: "L.ahead trigger R.boundary trigger",
    EVICTED: "L.ahead R.ahead trigger far trigger L.ahead trigger",
    OUTER: "L.ahead trigger far trigger L.ahead trigger",
    LATE_SIDE: "L.ahead R.ahead trigger far trigger L.late R.late trigger",
    STATE_READ: "L.ahead R.match trigger",
    LAGGED: "L.ahead R.match trigger lag trigger far trigger",
    TWO_DIGITS: "L.ahead R.match trigger " * (FIRST_TWO_DIGIT_BATCH + 1),  # a pair in each batch, 0 to 10
}
# Under availableNow no batch runs without data: a window completes in the next data batch, where a crash after
# the write runs its emission again.
REEMIT_SCRIPT = f"L.ahead R.match trigger far trigger L.ahead crash:{CrashPoint.AFTER_SINK} restart"


def required_events(plan: JoinPlan) -> tuple[str, ...]:
    """The hard cases a join's histories must reach: every join's rows read after a batch with a two-digit
    id (a writer that orders batch ids as text puts `10` before `9`), an eviction needs a side's state
    watermark, an outer row an outer join, a late record a watermark. A job counting the joined rows per
    window (`plan.counted`) shows counts, not pairs: its own cases are a window the join's output watermark
    holds back (when it lags the query's), a window-emitting batch run again, the count's state read and,
    under an outer join, a window counting an outer row; a pair at a bound and a late record are judged in
    its counts but not observed one by one."""
    evicting = all(plan.join.state_watermark(side, 0) is not None for side in Side)
    if plan.counted is not None:
        lags = plan.join.output_watermark(FAR) < FAR  # the count's watermark behind the query's
        outer = plan.join.how is not JoinType.INNER
        found = [*CRASHES, STATE_READ, COUNT_READ, REEMIT, TWO_DIGITS]
        return (*found, *([EVICTED] * evicting), *([LAGGED] * lags), *([OUTER_COUNTED] * outer))
    found = [*CRASHES, STATE_READ, BOUNDARY, TWO_DIGITS]
    if plan.watermarked_delays:
        found.append(LATE_SIDE)
    if evicting:
        found.append(EVICTED)
        if plan.join.how is not JoinType.INNER:
            found.append(OUTER)
    return tuple(found)


def directed(plan: JoinPlan, kill: bool = False) -> dict[str, Callable[[Any, str], History]]:
    """For each hard case a join may require, a draw of a small history that reaches it (`SCRIPTS`; under a
    count over the join, `REEMIT_SCRIPT` too)."""

    def draw(script: str) -> Callable[[Any, str], History]:
        script = script.replace("crash:", "kill:") if kill else script
        if plan.join.how.outer is Side.RIGHT:  # the outer side's record is the one no record joins
            script = script.replace("L.", "X.").replace("R.", "L.").replace("X.", "R.")
        return lambda source, domain: scripted_join(source, domain, plan, script, Trigger.PROCESSING_TIME)

    found = {event: draw(script) for event, script in SCRIPTS.items()}
    if plan.counted is None:
        return found
    reemit = REEMIT_SCRIPT.replace("crash:", "kill:") if kill else REEMIT_SCRIPT
    return found | {REEMIT: lambda s, domain: scripted_join(s, domain, plan, reemit, Trigger.AVAILABLE_NOW)}


def reached(plan: JoinPlan, history: History, obs: Observation) -> list[str]:
    """The hard cases the trial's observation shows: the streaming suite's crashes and its two-digit batch id
    read; at its last up step, a
    pair read from the job's rows at a bound of the range, a late record of a watermarked side (at or below
    the watermark Spark journaled for the batch before its own) no row read holds, an outer row read that was
    not there at an earlier up step after its record's batch committed; a row of a side's state read after
    one batch and gone after a later one; the state read after every committed batch. Under a count over the
    join, in place of the pairs' cases: a window read that an earlier up step lacked though its journaled
    watermark had reached the window's end (`_lagged`), a batch the model emits a window in that ran again
    after `after_sink`, the count's state read after every committed batch, a window read that counts an
    outer row (`_outer_counted`)."""
    found = {e for e in streaming.reached(history, obs) if e in (*CRASHES, TWO_DIGITS)}
    final = len(history.actions)
    state = obs.get((final, StreamingLabel.JOIN_STATE), frozenset())
    up = up_steps(obs)
    trial = read_join_step(history, obs, up[-1], plan) if up else None
    if not isinstance(trial, JoinStep):
        return sorted(found)
    read = {b for b, _, _, t in state if t is None}
    found |= {STATE_READ} if trial.committed and trial.committed <= read else set()
    found |= {EVICTED} if _evicted(state) else set()
    if plan.counted is not None:
        emitting = {batch for _, batch in counted_windows(plan, trial).values()}
        found |= {REEMIT} if rerun_after_sink(obs) & emitting else set()
        counts = {
            b for b, bound, n, _ in obs.get((final, StreamingLabel.STATE), ()) if bound is None and n == 0
        }
        found |= {COUNT_READ} if trial.committed and trial.committed <= counts else set()
        found |= (
            {OUTER_COUNTED} if _outer_counted(plan, trial, actual_counts(plan, obs, trial.step)) else set()
        )
        return sorted(found | ({LAGGED} if _lagged(plan, obs, up) else set()))
    records = records_of(trial)
    rows = actual_pairs(plan, obs, trial.step)
    for left, right in rows:
        if left is not None and right is not None and left in records and right in records:
            t = records[left][1].event_time - records[right][1].event_time
            found |= {BOUNDARY} if t in (plan.join.range.lower, plan.join.range.upper) else set()
    journaled_marks = {b: w for b, w, *_ in obs[(trial.step, StreamingLabel.OFFSET_METADATA)]}
    held = {d for pair in rows for d in pair}
    for data, (side, record) in records.items():
        batch = batch_of(trial, side, data)
        mark = journaled_marks.get(batch - 1, 0) if batch else 0
        if plan.side_delay(side) is not None and mark > 0 and record.event_time <= mark and data not in held:
            found.add(LATE_SIDE)
    if _outer_later(plan, obs, up, rows, trial):
        found.add(OUTER)
    return sorted(found)


def _outer_counted(plan: JoinPlan, trial: JoinStep, rows: Counter) -> bool:
    """Whether a window row read counts an outer row: the key and window of a record the model's join emits
    unmatched, with the count the model gives that window."""
    assert plan.counted is not None, "a counted join"
    expected = expected_counts(plan, trial)
    for lone in joined(plan, trial).unmatched:
        for span in plan.counted.window.containing(lone.record.event_time):
            key = lone.record.field(plan.counted.key)
            if any(row[:2] == (key, (span.start, span.end)) and row in expected for row in rows):
                return True
    return False


def _lagged(plan: JoinPlan, obs: Observation, up: list[int]) -> bool:
    """Whether a window row read at the last up step was absent at an earlier up step although the watermark
    Spark journaled for that step's newest committed batch had reached the window's end."""
    final = actual_counts(plan, obs, up[-1])
    for step in up[:-1]:
        committed = obs.get((step, StreamingLabel.COMMITS), frozenset())
        if not committed or (step, StreamingLabel.JOB_ROWS) not in obs:
            continue
        mark = {b: w for b, w, *_ in obs[(step, StreamingLabel.OFFSET_METADATA)]}.get(max(committed), 0)
        before = actual_counts(plan, obs, step)
        if any(row not in before and row[1][1] is not None and mark >= row[1][1] for row in final):
            return True
    return False


def _evicted(state: frozenset) -> bool:
    """Whether a row (by side, data and event time) held after one batch was read gone after a later one."""
    held: dict[tuple[str, str | None, int], list[int]] = {}
    for batch, side, data, t in state:
        if t is not None:
            held.setdefault((side, data, t), []).append(batch)
    read = {(side, b) for b, side, _, t in state if t is None}
    return any(any(s == row[0] and b > max(at) for s, b in read) for row, at in held.items())


def _outer_later(plan: JoinPlan, obs: Observation, up: list[int], rows: Counter, trial: JoinStep) -> bool:
    outer = {(d, side) for pair in rows for side, d in zip(Side, pair) if None in pair and d is not None}
    for data, side in outer:
        for step in up:
            earlier = obs.get((step, StreamingLabel.COMMITS), frozenset())
            batch = batch_of(trial, side, data)
            if batch is not None and batch in earlier and (step, StreamingLabel.JOB_ROWS) in obs:
                before = actual_pairs(plan, obs, step)
                if all(data not in pair for pair in before):
                    return True
    return False


Judge = Callable[[Any, Sequence[History], Sequence[Observation]], list[Outcome]]


def _steps(plan: JoinPlan, history: History, obs: Observation) -> list[JoinStep] | Outcome:
    found = []
    for step in up_steps(obs):
        trial = read_join_step(history, obs, step, plan)
        if isinstance(trial, Outcome):
            return trial
        message = journaled(obs, trial)  # type: ignore[arg-type]  # reads `step` and `marks` alone
        if message is not None:
            return failed_at(step, message, obs, StreamingLabel.OFFSET_METADATA)
        found.append(trial)
    return found


def _per_trial(judge: Callable[[JoinPlan, Observation, JoinStep], Outcome | None]) -> Judge:
    def judged(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
        outcomes = []
        for history, obs in zip(histories, observed):
            steps = _steps(impl.plan, history, obs)
            if isinstance(steps, Outcome):
                outcomes.append(steps)
                continue
            failed = next((o for trial in steps if (o := judge(impl.plan, obs, trial)) is not None), None)
            outcomes.append(failed or Outcome(ok=True))
        return outcomes

    return judged


def _exactly_once(plan: JoinPlan, obs: Observation, trial: JoinStep) -> Outcome | None:
    if plan.counted is not None:
        return _counted_once(plan, obs, trial)
    expected = expected_pairs(joined(plan, trial))
    actual = actual_pairs(plan, obs, trial.step)
    if actual == expected:
        return None
    missing, extra = expected - actual, actual - expected
    doubled = Counter({p: n for p, n in extra.items() if p in expected})
    unexpected = extra - doubled
    named = [
        _named("missing", missing, trial),
        _named("doubled", doubled, trial, lambda p: f" held {actual[p]}x, expected {expected[p]}x"),
        _named("unexpected", unexpected, trial, lambda p: f" x{actual[p]}" if actual[p] > 1 else ""),
    ]
    message = (
        f"the job's rows are not the model's join of batches {sorted(trial.committed)} (each pair once, outer rows "
        f"once their watermark passed): " + ", ".join(n for n in named if n)
    )
    return _rows_differ(trial, message, expected, actual)


def _rows_differ(trial: JoinStep, message: str, expected: Counter, actual: Counter) -> Outcome:
    """The failure of a step whose rows are not the model's, both shown."""
    label = StreamingLabel.JOB_ROWS
    return Outcome(
        ok=False,
        message=message,
        expected={(trial.step, label): frozenset(expected.items())},
        actual={(trial.step, label): frozenset(actual.items())},
        step=trial.step,
    )


def _counted_once(plan: JoinPlan, obs: Observation, trial: JoinStep) -> Outcome | None:
    """The job's rows are the model's counts per key and window over the join, each window once, emitted when
    the aggregation's own watermark (the join's output watermark) passes its end."""
    expected, actual = expected_counts(plan, trial), actual_counts(plan, obs, trial.step)
    if actual == expected:
        return None
    last = trial.last if trial.last is not None else 0
    marks = count_marks(plan, trial.marks)
    message = (
        f"the job's rows are not the model's counts per key and window over the join of batches "
        f"{sorted(trial.committed)} (each window once, when the join's output watermark, "
        f"E_count({last}) = {marks.eviction[last]}, passes its end; the query's E({last}) = "
        f"{trial.marks.eviction[last]}): "
        + ", ".join(
            n
            for n in (
                _rows_named("missing", expected - actual, expected),
                _rows_named("unexpected", actual - expected, actual),
            )
            if n
        )
    )
    return _rows_differ(trial, message, expected, actual)


def _rows_named(kind: str, rows: Counter, held: Counter) -> str:
    """Counted rows as a failure names them: key, window and count, with how often they are held.

    >>> _rows_named("unexpected", Counter({("a", (0, 10), 2): 1}), Counter({("a", (0, 10), 2): 2}))
    "unexpected [key 'a' window [0, 10) count 2 x2]"
    >>> [_rows_named("missing", Counter({("a", (0, i), 1): 1 for i in range(n)}), Counter())[-10:] for n in (6, 7)]
    [') count 1]', 'nd 1 more]']
    """
    if not rows:
        return ""
    listed = sorted(rows, key=repr)
    more = f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
    shown = [
        f"key {key!r} window [{start}, {end}) count {n}" + (f" x{held[row]}" if held[row] > 1 else "")
        for row in listed[:SHOWN]
        for key, (start, end), n in [row]
    ]
    return f"{kind} [" + "; ".join(shown) + more + "]"


def _named(kind: str, pairs: Counter, trial: JoinStep, how: Callable[[Any], str] = lambda p: "") -> str:
    if not pairs:
        return ""
    listed = sorted(pairs, key=repr)
    more = f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
    return f"{kind} [" + "; ".join(show_pairs([p], trial) + how(p) for p in listed[:SHOWN]) + more + "]"


def _late_and_outer(plan: JoinPlan, obs: Observation, trial: JoinStep) -> Outcome | None:
    out = joined(plan, trial)
    actual = actual_pairs(plan, obs, trial.step)
    late = {r.data: (side, r) for side, r in out.late}
    for pair in sorted(actual, key=repr):
        for data in pair:
            if data in late:
                side, record = late[data]
                batch = batch_of(trial, side, data)
                assert batch is not None, "a late record came in a committed batch"
                return _failed(
                    trial,
                    obs,
                    f"record {data} ({side}, key {record.key!r}, event_time {record.event_time}) of batch {batch} "
                    f"is at or below the watermark L({batch}) = {trial.own.late(batch)} of its batch, so Spark drops "
                    f"it, yet the job's rows hold {show_pairs([pair], trial)}",
                )
    for p in out.matched:
        if actual[(p.left.data, p.right.data)] == 0:
            return _failed(
                trial,
                obs,
                f"records {p.left.data} and {p.right.data} are kept (not late) and meet in batch {p.batch}, yet the "
                f"job's rows lack their pair {show_pairs([(p.left.data, p.right.data)], trial)}",
            )
    emitted = {(u.record.data, u.side): u.batch for u in out.unmatched}
    outer = plan.join.how.outer
    for pair, n in sorted(actual.items(), key=repr):
        if outer is None or None not in pair:
            continue
        data = pair[0] if outer is Side.LEFT else pair[1]
        batch = emitted.get((data, outer))
        if batch is None:
            return _failed(trial, obs, _early(plan, trial, out, data, outer, pair))
        if n > 1:
            return _failed(
                trial, obs, f"the outer row {show_pairs([pair], trial)} is held {n} times, not once"
            )
    for (data, side), batch in sorted(emitted.items()):
        pair = (data, None) if side is Side.LEFT else (None, data)
        if actual[pair] == 0:
            return _failed(
                trial,
                obs,
                f"the {side} record {data} never matched and the join's eviction watermark E({batch}) = "
                f"{trial.own.eviction[batch]} passed its bound ({plan.join.bound(side, records_of(trial)[data][1])}) in "
                f"batch {batch}, yet the job's rows lack its outer row {show_pairs([pair], trial)}",
            )
    return None


def _early(plan: JoinPlan, trial: JoinStep, out: Any, data: str, side: Side, pair: tuple) -> str:
    record = records_of(trial).get(data, (side, None))[1]
    if record is None:
        return f"the outer row {pair} names no record of the committed batches"
    if any((p.left if side is Side.LEFT else p.right).data == data for p in out.matched):
        return (
            f"the outer row {show_pairs([pair], trial)} is emitted for a record that matched (SPARK-26154): an outer "
            "row is only for a record that never matched"
        )
    last = trial.last if trial.last is not None else 0
    return (
        f"the outer row {show_pairs([pair], trial)} is emitted before the watermark passed its record: its bound is "
        f"{plan.join.bound(side, record)}, the join's eviction watermark E({last}) = {trial.own.eviction[last]}"
    )


def _failed(trial: JoinStep, obs: Observation, message: str) -> Outcome:
    return failed_at(trial.step, message, obs, StreamingLabel.JOB_ROWS)


def state_bounded(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """Each side's state has a watermark, and after every committed batch holds no row at or below it."""
    plan: JoinPlan = impl.plan
    message = _grows(plan)
    if message is not None:
        return [Outcome(ok=False, message=message, step=_first_batch(h)) for h in histories]
    return [_evicted_by_bound(plan, h, obs) for h, obs in zip(histories, observed)]


def _windows_evicted(plan: JoinPlan, trial: JoinStep, obs: Observation, final: int) -> Outcome | None:
    """Under a count over the join: after every committed batch N the count's state was read and holds no
    window ending at or below its own eviction watermark (the join's output watermark of batch N)."""
    state = obs.get((final, StreamingLabel.STATE), frozenset())
    marks = count_marks(plan, trial.marks)
    for batch in sorted(trial.committed):
        if not any(b == batch and bound is None and n == 0 for b, bound, n, _ in state):
            return failed_at(
                final,
                f"no state of the count over the join was read after batch {batch}: nothing shows that it evicts",
                obs,
                StreamingLabel.COMMITS,
            )
        mark = marks.eviction[batch]
        stale = sorted(
            bound for b, bound, n, _ in state if b == batch and bound is not None and bound <= mark
        )
        if stale:
            return failed_at(
                final,
                f"after batch {batch} the count over the join still holds windows ending at {stale[:SHOWN]}, at or "
                f"below its watermark E_count({batch}) = {mark} (the join's output watermark): they are complete "
                "and were not evicted",
                obs,
                StreamingLabel.STATE,
            )
    return None


def _grows(plan: JoinPlan) -> str | None:
    """The sides no watermark bounds, named, or None."""
    sides = [side for side in Side if plan.join.state_watermark(side, 0) is None]
    if not sides:
        return None
    unwatermarked = [str(s) for s in Side if plan.side_delay(s) is None]
    why = (
        f"the {' and '.join(unwatermarked)} side has no watermark, so neither side's state has one (SPARK-46350)"
        if unwatermarked
        else "the join's range does not bound it from below"
    )
    named = " and ".join(f"the {s} side" for s in sides)
    return (
        f"state grows without bound: the join keeps every row of {named} forever, {why} "
        "(watermark both sides and bound the range both ways)"
    )


def _first_batch(history: History) -> int:
    names = (StreamingAction.TRIGGER, StreamingAction.RESTART)
    return next((i for i, a in enumerate(history.actions) if a.name in names), len(history.actions))


def _evicted_by_bound(plan: JoinPlan, history: History, obs: Observation) -> Outcome:
    final = len(history.actions)
    trial = read_join_step(history, obs, final, plan)
    if isinstance(trial, Outcome) or not trial.committed:
        return trial if isinstance(trial, Outcome) else Outcome(ok=True)
    state = obs.get((final, StreamingLabel.JOIN_STATE), frozenset())
    for batch in sorted(trial.committed):
        for side in Side:
            if (batch, str(side), None, None) not in state:
                return failed_at(
                    final,
                    f"no state of the join's {side} side was read after batch {batch}: the checkpoint has no state "
                    "store of the join, so nothing shows that it evicts",
                    obs,
                    StreamingLabel.COMMITS,
                )
            mark = trial.own.eviction[batch]
            at = plan.join.state_watermark(side, mark)
            stale = sorted(
                (t, d or "a row")
                for b, s, d, t in state
                if b == batch and s == side and t is not None and at is not None and t <= at
            )
            if stale:
                shown = ", ".join(f"{d}@{t}" for t, d in stale[:SHOWN])
                return failed_at(
                    final,
                    f"after batch {batch} the join's {side} state still holds {len(stale)} rows ({shown}) at or "
                    f"below its state watermark {at} (the join's E({batch}) = {mark}, "
                    "the other side's watermark plus the range): nothing that is not late can join them, and "
                    "they were not evicted",
                    obs,
                    StreamingLabel.JOIN_STATE,
                )
    counted = _windows_evicted(plan, trial, obs, final) if plan.counted is not None else None
    return counted or Outcome(ok=True)


EXACTLY_ONCE = _per_trial(_exactly_once)
LATENESS_KEPT = _per_trial(_late_and_outer)


def all_laws(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> list[Outcome]:
    """Every property's judge, in turn: the first failure of each trial."""
    judges: list[Judge] = [
        EXACTLY_ONCE,
        *([LATENESS_KEPT] if impl.plan.counted is None else []),
        state_bounded,
        *(stateful.laws(getattr(streaming, name)) for name in LAWS),
    ]
    verdicts = [judge(impl, histories, observed) for judge in judges]
    return [next((o for o in outcomes if not o.ok), Outcome(ok=True)) for outcomes in zip(*verdicts)]


def _property(name: str, doc: str, judge: Judge, plan: JoinPlan, kill: bool = False, **more: Any) -> Property:
    return Property(
        name=name,
        doc=doc,
        draw=HistoryDraw(draw_join_history, (plan,), kill),
        check=stateful.check_in_waves(judge, reached),
        profiles=("thorough",) if kill else (),
        reference=more.pop("reference", Reference.MODEL),
        directed=directed(plan, kill),
        **more,
    )


def _law_judge(law: Property) -> Judge:
    """The judge of one of the stateful suite's laws: the streaming suite's, or every judge under SIGKILL."""
    return stateful.laws(getattr(streaming, law.name)) if law.name in LAWS else all_laws


def _pairs_shown(impl: Any) -> str | None:
    """Why `lateness_kept` does not apply to a job that counts the joined rows (`exactly_once` judges which
    pairs its counts hold), or None."""
    if impl.plan.counted is None:
        return None
    return "the job's rows are counts per window: exactly_once judges the pairs they count"


def properties(plan: JoinPlan) -> tuple[Property, ...]:
    """The stateful suite's properties for a join job, their histories scaled to `plan`: its own judges, and
    the stateful suite's laws (`LAWS`, `laws_under_sigkill`) over a join's histories; `state_bounded` first
    when the plan alone breaks it (`stateful.decided_first`)."""
    laws = tuple(
        _property(p.name, p.doc, _law_judge(p), plan, kill=bool(p.profiles), reference=p.reference)
        for p in stateful.properties(stateful.EXAMPLE_PLAN)
        if p.name in (*LAWS, "laws_under_sigkill")
    )
    own = (
        _property(
            "exactly_once",
            "After every step, read(spark) holds each pair and outer row of the model's join of the committed "
            "batches, once.",
            EXACTLY_ONCE,
            plan,
        ),
        _property(
            "lateness_kept",
            "No row of a late record, every pair of kept records that meet, each outer row once the watermark "
            "passes its record and only then.",
            LATENESS_KEPT,
            plan,
            applies=_pairs_shown,
        ),
        _property(
            "state_bounded",
            "Each side's state is evicted by the other side's watermark plus the range: it never grows without bound.",
            state_bounded,
            plan,
        ),
    )
    return stateful.decided_first(_grows(plan), own + laws)
