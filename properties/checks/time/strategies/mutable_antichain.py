"""Histories for a `MutableAntichain`: `update(time, diff)` steps grouped into batches by `apply`.

Semantics (`frontier_harness.properties.checks.time.mutable_antichain`): updates are buffered; `apply`
hands the buffered batch to `update_iter` and observes the frontier and the
reported changes; the end of the history applies whatever is still buffered.
Counts may go negative (the model's choice, as timely's), so every history is
valid.

Updates are fresh times from small ranges (so times collide), times above an
earlier one (comparable pairs: retracting the lower exposes the upper),
retractions of an earlier update (a count back to zero, in the same batch or a
later one), and negative diffs before any insertion.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_antichain_history(RandomSource(1), "partitioned")
>>> {a.name for a in h.actions} <= {"update", "apply"}
True
"""

from __future__ import annotations

from frontier_harness.model.time.domains import Domain, PartitionedTime, Product, Time, parse_domain
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.time import AntichainAction
from frontier_harness.properties.checks.time.strategies.times import draw_time
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source

DIFFS = (1, -1, 2, 1)


def update(time: Time, diff: int) -> Action:
    return Action(AntichainAction.UPDATE, {Arg.TIME: time, Arg.DIFF: diff})


def draw_above(source: Source, domain: Domain, time: Time) -> Time:
    """A time `>= time`: offsets up by 0-3, a Partitioned interval kept or narrowed to its first partition.

    >>> from frontier_harness.properties.engine.source import RandomSource
    >>> from frontier_harness.model.time.domains import Total
    >>> Total().le(4, draw_above(RandomSource(0), Total(), 4))
    True
    """
    if domain.name == "total":
        return time + source.integer(0, 3)
    if domain.name == "partitioned":
        hi = time.hi if source.boolean() else time.lo
        return PartitionedTime(time.lo, hi, time.offset + source.integer(0, 3))
    assert isinstance(domain, Product), domain
    return (draw_above(source, domain.a, time[0]), draw_above(source, domain.b, time[1]))


def draw_step(source: Source, domain: Domain, earlier: list[dict]) -> Action:
    """Mostly updates (fresh, above an earlier one, or retracting one); sometimes an `apply`."""
    kind = source.integer(0, 9)
    if kind < 3 or (kind < 7 and not earlier):
        return update(draw_time(source, domain), source.choice(DIFFS))
    if kind < 5:
        undone = source.choice(earlier)
        return update(undone[Arg.TIME], -undone[Arg.DIFF])
    if kind < 7:
        return update(draw_above(source, domain, source.choice(earlier)[Arg.TIME]), source.choice(DIFFS))
    return Action(AntichainAction.APPLY, {})


def draw_antichain_history(source: Source, domain_name: str, max_steps: int = 30) -> History:
    """Up to `max_steps` updates and applies; after each, one more with probability 7/8.

    The coin is `integer(0, 7) > 0`, not `boolean`, so the shrinking lane (where
    a boolean is a fair coin) draws histories long enough to bring a count back
    to zero (an update, an apply, a retraction), and shrinks them towards "stop".
    """
    domain = parse_domain(domain_name)
    actions: list[Action] = []
    while len(actions) < max_steps and source.integer(0, 7) > 0:
        actions.append(
            draw_step(source, domain, [a.args for a in actions if a.name == AntichainAction.UPDATE])
        )
    return History(domain_name, tuple(actions))
