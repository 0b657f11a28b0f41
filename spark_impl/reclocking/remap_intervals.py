"""One history's remap held in a row as presence intervals: minting, compaction, `R(t)`, inversion, reclocking.

A remap whose every `R(t)` holds each element once (a remap law) is, per source
frontier element `f`, the IntoTimes where `f` is present: one interval
`[start, end)` (`end` is `remap.OPEN` while `f` is present; a source upper never
goes back, so an element once retracted never returns). Its bindings are `+1`
at `start` and `-1` at `end`. Held as an `array<struct<from_time, start, end>>`
column, the rules of `frontier_harness.spark_impl.reclocking.remap` apply per interval: minting
(`retractions`, `insertions`) closes and opens intervals, compaction
(`advance_into`) advances their bounds, `R(t)` is the elements `present` at `t`,
and the inversion reads `R` at `inversion_time`. The intervals keep the remap's
whole history: `as_of(upper)` is the remap when its upper was `upper`, and
`compacted(since)` is what a reader of the compacted remap sees.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from frontier_harness.spark_impl.reclocking import remap
from frontier_harness.spark_impl.reclocking.reclock import not_beyond
from frontier_harness.spark_impl.time.time_columns import TimeColumns

LONG = T.LongType()


def let(value: Column, body: Callable[[Column], Column]) -> Column:
    """`body(value)` with `value` evaluated once (a one-element `transform` binds it to a name)."""
    return F.get(F.transform(F.array(value), body), 0)


def interval(from_time: Column, start: Column, end: Column) -> Column:
    return F.struct(
        from_time.alias("from_time"), start.cast(LONG).alias("start"), end.cast(LONG).alias("end")
    )


def initial(minimum: Column) -> Column:
    """The remap before any tick: `R(0) = {minimum}` from 0 on."""
    return F.array(interval(minimum, F.lit(0), F.lit(remap.OPEN)))


def frontier_at(intervals: Column, t: Column) -> Column:
    """`R(t)`: the source frontier elements present at IntoTime `t`."""
    present = F.filter(intervals, lambda i: remap.present(i["start"], i["end"], t))
    return F.transform(present, lambda i: i["from_time"])


def latest(intervals: Column) -> Column:
    """The source upper the latest binding recorded: the elements still present."""
    return frontier_at(intervals, F.lit(remap.OPEN - 1))


def minted(intervals: Column, upper: Column, tick: Column) -> Column:
    """The remap after recording source `upper` at `tick`: retracted elements end at `tick`, inserted start."""

    def record(current: Column, gone: Column) -> Column:
        closed = F.transform(
            intervals,
            lambda i: F.when(
                (i["end"] == remap.OPEN) & F.array_contains(gone, i["from_time"]), i.withField("end", tick)
            ).otherwise(i),
        )
        opened = F.transform(remap.insertions(current, upper), lambda f: interval(f, tick, F.lit(remap.OPEN)))
        return F.concat(closed, opened)

    return let(
        latest(intervals),
        lambda current: let(remap.retractions(current, upper), lambda gone: record(current, gone)),
    )


def compacted(intervals: Column, since: Column) -> Column:
    """The remap compacted to `since`: bounds advanced (`remap.advance_into`); an interval left empty is a
    `+1` and a `-1` consolidated away."""
    advanced = F.transform(
        intervals,
        lambda i: interval(
            i["from_time"], remap.advance_into(i["start"], since), remap.advance_into(i["end"], since)
        ),
    )
    return F.filter(advanced, lambda i: i["start"] < i["end"])


def as_of(intervals: Column, upper: Column) -> Column:
    """The remap when its upper was `upper`: the intervals minted before, open if they closed since."""
    minted_before = F.filter(intervals, lambda i: i["start"] < upper)
    return F.transform(
        minted_before,
        lambda i: F.when(i["end"] >= upper, i.withField("end", F.lit(remap.OPEN).cast(LONG))).otherwise(i),
    )


def inverted(intervals: Column, since: Column, t: Column, minimum: Column) -> Column:
    """The remap inverted at Total frontier `{t}`: `R` at `remap.inversion_time`, `{minimum}` at or below `since`."""
    at = remap.inversion_time(t, F.lit(False), since)
    return F.when(at.isNull(), F.array(minimum)).otherwise(frontier_at(intervals, at))


def reclocked(tc: TimeColumns, intervals: Column, since: Column, updates: Column) -> Column:
    """Each update `(…, time)` with `into`: the first step (`since` or a binding's IntoTime) whose `R` its time
    is not beyond (`reclock.not_beyond`); null while it is pending."""
    bounds = F.concat(
        F.array(since),
        F.transform(intervals, lambda i: i["start"]),
        F.transform(intervals, lambda i: i["end"]),
    )
    steps = F.array_sort(F.array_distinct(F.filter(bounds, lambda b: (b >= since) & (b < remap.OPEN))))
    return let(
        F.transform(steps, lambda t: F.struct(t.alias("t"), frontier_at(intervals, t).alias("frontier"))),
        lambda at_steps: F.transform(
            updates,
            lambda u: u.withField(
                "into", F.get(F.filter(at_steps, lambda s: not_beyond(tc, s["frontier"], u["time"])), 0)["t"]
            ),
        ),
    )


def bindings(intervals: Column) -> Column:
    """The bindings `(from_time, into_time, diff)`: `+1` where an interval starts, `-1` where it ends."""

    def binding(i: Column, into: Column, diff: int) -> Column:
        return F.struct(
            i["from_time"].alias("from_time"), into.alias("into_time"), F.lit(diff).cast(LONG).alias("diff")
        )

    inserted = F.transform(intervals, lambda i: binding(i, i["start"], 1))
    retracted = F.transform(
        F.filter(intervals, lambda i: i["end"] < remap.OPEN), lambda i: binding(i, i["end"], -1)
    )
    return F.concat(inserted, retracted)
