"""The trial suites against Spark's own floor: trials per minute as a fraction of what the same work
costs Spark alone, and where the rest goes, from spans the trial machinery records where it spends
its time (`frontier_harness.spark_impl.spans`).

The floor is `run_trials(..., floor=True)` over the same histories with the same job: the same
batches, the same query starts on the same checkpoints (each restart, each crash's and kill's), in the
harness's warm session, without crash injection, driver processes, reads or judging. The judged run
is the suite's check (`exactly_once`: the trials, the job's reads, the oracle's batch jobs, the
judging). Each category of the breakdown is the judged run's spans of it less the floor's:

>>> from frontier_harness.spark_impl.spans import Spans
>>> judged, floor = Spans(), Spans()
>>> for name, seconds in ((TRIALS, 50.0), (DRIVER_START, 12.0), (WAIT, 20.0), (READ, 8.0), (ORACLE, 6.0)):
...     judged.add(name, seconds)
>>> for name, seconds in ((TRIALS, 24.0), (QUERY_START, 4.0), (WAIT, 18.0)):
...     floor.add(name, seconds)
>>> b = Breakdown(6, 60.0, 24.0, judged, floor)
>>> round(b.fraction, 2), [(row.category, row.over) for row in b.rows()]
(0.4, [('JVM starts', 0.0), ('driver starts', 8.0), ('waits', 2.0), ('reads', 8.0), ('oracle jobs', 6.0), ('judging', 4.0), ('other', 8.0)])
>>> sum(row.over for row in b.rows()) == b.judged_seconds - b.floor_seconds
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from frontier_harness.properties.bench import Figure
from frontier_harness.spark_impl.spans import (
    DRIVER_START,
    JVM_START,
    ORACLE,
    QUERY_START,
    READ,
    STOP,
    TRIALS,
    WAIT,
    Spans,
)

# Each category: the spans of the judged run, and of the floor, that it sums.
CATEGORIES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("JVM starts", (JVM_START,), ()),
    ("driver starts", (DRIVER_START, STOP), (QUERY_START, STOP)),
    ("waits", (WAIT,), (WAIT,)),
    ("reads", (READ,), ()),
    ("oracle jobs", (ORACLE,), ()),
)
JUDGING, OTHER = "judging", "other"  # outside the trials and the oracle; inside the trials, in no span


@attrs.frozen
class Row:
    """One category: seconds and spans in the judged run and in the floor, and what it costs over it."""

    category: str
    judged: float
    floor: float
    judged_spans: int
    floor_spans: int

    @property
    def over(self) -> float:
        return self.judged - self.floor


@attrs.frozen
class Breakdown:
    """`histories` judged in `judged_seconds` and run at the floor in `floor_seconds`, with their spans."""

    histories: int
    judged_seconds: float
    floor_seconds: float
    judged: Spans
    floor: Spans

    @property
    def fraction(self) -> float:
        """The judged rate as a fraction of the floor's: the floor's seconds over the judged run's."""
        return self.floor_seconds / self.judged_seconds

    def rows(self) -> list[Row]:
        """The categories, then judging (the check's time outside the trials and the oracle) and other
        (the trials' time in no span; the floor's time in none): they sum to the judged run's time over
        the floor's."""
        rows = [
            Row(name, _sum(self.judged, mine), _sum(self.floor, floors), _count(self.judged, mine),
                _count(self.floor, floors))
            for name, mine, floors in CATEGORIES
        ]  # fmt: skip
        judging = self.judged_seconds - self.judged.seconds(TRIALS) - self.judged.seconds(ORACLE)
        rows.append(Row(JUDGING, judging, 0.0, self.judged.count(TRIALS), 0))
        spanned = sum(r.judged for r in rows[:-1]) - self.judged.seconds(ORACLE)
        floor_spanned = sum(r.floor for r in rows[:-1])
        rows.append(
            Row(OTHER, self.judged.seconds(TRIALS) - spanned, self.floor_seconds - floor_spanned, 0, 0)
        )
        return rows


def _sum(spans: Spans, names: Sequence[str]) -> float:
    return sum((spans.seconds(name) for name in names), 0.0)


def _count(spans: Spans, names: Sequence[str]) -> int:
    return sum(spans.count(name) for name in names)


def measure(check: Callable[[Sequence[Any]], Sequence[Any]], floor: Callable[[Sequence[Any]], object],
            warm: Sequence[Any], drawn: Sequence[Any]) -> Breakdown:  # fmt: skip
    """`check` over `drawn` (every outcome must hold) and `floor` over the same histories, each after a
    warm-up over `warm`, with the spans each recorded."""
    from frontier_harness.properties.bench import timed
    from frontier_harness.spark_impl.spans import recording

    list(check(warm))
    floor(warm)
    outcomes: list = []
    with recording() as judged:
        judged_seconds = timed(lambda: outcomes.extend(check(drawn)))
    assert all(o.ok for o in outcomes), [o.message for o in outcomes if not o.ok][:1]
    with recording() as at_floor:
        floor_seconds = timed(lambda: floor(drawn))
    return Breakdown(len(drawn), judged_seconds, floor_seconds, judged, at_floor)


def floor_name(prefix: str) -> str:
    """The floor's figure: what the judged rate's figure names as its baseline (its ratio, the fraction)."""
    return f"{prefix}_floor_trials_per_minute"


def judged_rate(breakdown: Breakdown) -> tuple[float, float]:
    """The judged trials per minute, and the seconds they took."""
    return breakdown.histories / (breakdown.judged_seconds / 60), breakdown.judged_seconds


def figures(prefix: str, breakdown: Breakdown) -> list[Figure]:
    """The floor's rate, and one figure per category of the breakdown: its seconds over the floor, with
    the spans it rests on, and its share of the time over the floor."""
    n = breakdown.histories
    rest = breakdown.judged_seconds - breakdown.floor_seconds
    found = [
        Figure(
            floor_name(prefix),
            n / (breakdown.floor_seconds / 60),
            "trials/min",
            f"the same {n} histories' batches and query starts in one warm session, without crash "
            f"injection, driver processes, reads or judging, in {breakdown.floor_seconds:.0f} s",
        ),
    ]
    for row in breakdown.rows():
        share = row.over / rest if rest > 0 else 0.0
        found.append(
            Figure(
                f"{prefix}_over_floor_s.{row.category.replace(' ', '_')}",
                row.over,
                "s",
                f"judged {row.judged:.1f} s ({row.judged_spans} spans), floor {row.floor:.1f} s "
                f"({row.floor_spans} spans): {share:.0%} of the {rest:.0f} s over the floor",
            )
        )
    return found
